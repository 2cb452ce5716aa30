package weir

import "github.com/weirstream/weir/internal/op"

// Stateless declares that the operator's function keeps no state between
// records and is safe to call from several goroutines at once, so the
// operator may run in any number of instances.
func Stateless() Option {
	return op.Stateless()
}

// Stateful declares that the operator's function keeps state across all
// records (a counter, a sequence number): it runs in one instance, which
// sees every record. It is what an operator that declares nothing gets.
func Stateful() Option {
	return op.Stateful()
}

// KeyedState declares that the operator's function keeps state per key:
// every record with the same key(v) goes to the same instance, in the
// order the instance receives them, and instances own disjoint key groups.
// The function is called from several instances at once, each for its own
// keys, so the per-key state it keeps must be safe for that (Process
// keeps the state for it instead).
//
// name identifies the key attribute: operators keyed by the same name and
// key type in a row share one parallel region, with no shuffle between
// them, when the records in between keep the attribute unchanged. The
// engine checks that claim on every record and fails the job if a record
// reaches an instance that does not own its key. An empty name matches no
// other operator.
func KeyedState[T any, K comparable](name string, key func(T) K) Option {
	return op.KeyedState[T, K](name, key)
}

// PerInput is how many outputs an operator makes for each input record.
type PerInput = op.PerInput

// AnyNumber of outputs per input (the default for FlatMap).
const AnyNumber = op.AnyNumber

// ExactlyOne output per input (Map).
const ExactlyOne = op.ExactlyOne

// AtMostOne output per input (Filter).
const AtMostOne = op.AtMostOne

// Selectivity declares how many outputs a FlatMap or Process function
// makes per input. The planner names the order strategy from it (see
// Ordered), and the engine checks it on every record: a function that
// breaks it fails the job.
func Selectivity(s PerInput) Option {
	return op.Selectivity(s)
}

// Ordered makes the job keep the input order: every parallel region's exit
// restores the order its records had at the region's entry, so a pipeline
// of record operators (Map, Filter, FlatMap, Process) emits exactly what a
// run with one worker would, in the same order. Each source is then read
// by one instance. Windows and joins emit their results per epoch, in no
// defined order, and a Union interleaves its inputs as they come; Ordered
// keeps no order across them. A sink given Parallelism n > 1 receives the
// source's batches round-robin, each instance its share in order. Without
// Ordered, no merge cost is paid and records of different instances
// interleave.
func Ordered() JobOption {
	return op.Ordered()
}
