package op

import (
	"fmt"
	"reflect"

	"github.com/weirstream/weir/internal/dataflow"
	"github.com/weirstream/weir/internal/plan"
	"github.com/weirstream/weir/internal/routing"
)

// Operator properties decide which operators the planner may replicate
// (see docs/design.md, "Parallel regions"). Built-in operators declare
// their own. A user function passed to Map, Filter, FlatMap (and their Ref
// forms) declares its state with Stateless, KeyedState or Stateful; one
// that declares nothing is treated as Stateful and runs in one instance,
// since replicating a function that keeps state across records would
// change its results.

// Stateless declares that the operator's function keeps no state between
// records and is safe to call from several goroutines at once, so the
// operator may run in any number of instances.
func Stateless() dataflow.Option {
	return func(c *dataflow.OpConfig) { c.State, c.Key = plan.Stateless, nil }
}

// Stateful declares that the operator's function keeps state across all
// records (a counter, a sequence number): it runs in one instance, which
// sees every record. It is what an operator that declares nothing gets.
func Stateful() dataflow.Option {
	return func(c *dataflow.OpConfig) { c.State, c.Key = plan.Unkeyed, nil }
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
func KeyedState[T any, K comparable](name string, key func(T) K) dataflow.Option {
	ks := &dataflow.KeySpec{Name: keyID[K](name), In: reflect.TypeFor[T]()}
	ks.Input = func(s any, j *dataflow.Graph) dataflow.InputEdge {
		return recordKeyedInput(KeyedStream[K, T]{s: s.(Stream[T]), key: key, name: ks.Name})
	}
	ks.Check = func(j *dataflow.Graph, view *routing.View, inst int) any {
		return newOwnerCheck(key, view, inst, j.StableHash())
	}
	return func(c *dataflow.OpConfig) { c.State, c.Key = plan.Keyed, ks }
}

// keyID names a key for the planner: its name and type, or "" for an
// unnamed key, which is compatible with no other.
func keyID[K comparable](name string) string {
	if name == "" {
		return ""
	}
	return fmt.Sprintf("%s(%v)", name, reflect.TypeFor[K]())
}

// PerInput is how many outputs an operator makes for each input record.
type PerInput int

const (
	// AnyNumber of outputs per input (the default for FlatMap).
	AnyNumber = PerInput(plan.AnyNumber)
	// ExactlyOne output per input (Map).
	ExactlyOne = PerInput(plan.ExactlyOne)
	// AtMostOne output per input (Filter).
	AtMostOne = PerInput(plan.AtMostOne)
)

// Selectivity declares how many outputs a FlatMap or Process function
// makes per input. The planner names the order strategy from it (see
// Ordered), and the engine checks it on every record: a function that
// breaks it fails the job.
func Selectivity(s PerInput) dataflow.Option {
	return func(c *dataflow.OpConfig) { c.Sel, c.SelSet = plan.Selectivity(s), true }
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
func Ordered() dataflow.JobOption { return func(c *dataflow.JobConfig) { c.Ordered = true } }
