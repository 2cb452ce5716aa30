package weir

import (
	"github.com/weirstream/weir/internal/op"
)

// Process calls f for every record of a keyed stream with the state of
// the record's key: a pointer to an S, the zero value the first time the
// key is seen, that f may read and change. f appends any number of outputs
// to out and returns it (Selectivity may declare fewer). Records of one key
// reach f in the order the stream carries them, on one instance; each
// instance keeps the state of the key groups it owns, so Process runs in
// parallel without locks. The state lives as long as the job, or as
// StateTTL says: every record touches its key's state. For timers, side
// outputs or two inputs, see KeyedProcess and CoProcess.
func Process[K comparable, T, S, U any](k KeyedStream[K, T], f func(key K, state *S, v T, out []U) []U, opts ...Option) Stream[U] {
	return op.Process[K, T, S, U](k, f, opts...)
}

// Timer is a timer of a keyed process function: a time in milliseconds of
// its domain's clock. An event-time timer fires once the watermark
// reaches its time; a processing-time timer at the first epoch end at
// which the job's clock (Unix milliseconds) has reached it.
type Timer = op.Timer

// ProcessContext is what a keyed process function is called with, through
// a pointer valid only during the call:
//
//   - Key() K: the key of the record or timer;
//   - State() *S: the key's state, which the function may read and
//     change: the zero value the first time, after ClearState() and after
//     it expired (StateTTL); calling State touches the state, at the
//     Timestamp (event time) or the processing time;
//   - Timestamp() int64: the record's event time; in OnTimer the time of
//     an event-time timer, or for a processing-time timer the watermark;
//     math.MinInt64 for a record of a stream without event time;
//   - Watermark() int64: the instance's watermark (math.MinInt64 before
//     the first, math.MaxInt64 at the end of the input);
//   - ProcessingTime() int64: the job's clock in Unix milliseconds, read
//     once per batch of records and at every epoch end;
//   - Emit(u U): an output with the event time Timestamp();
//   - RegisterEventTimer(t), DeleteEventTimer(t),
//     RegisterProcessingTimer(t), DeleteProcessingTimer(t): the key's
//     timers; a key has at most one timer per time and domain, so
//     registering one twice is one timer.
//
// SideOutput.Emit(c, x) emits to a side output.
type ProcessContext[K comparable, S, U any] = op.ProcessContext[K, S, U]

// ProcessFunc is the function of KeyedProcess: OnRecord is called for
// every record and OnTimer for every timer that fires (it is required as
// soon as the function registers a timer; a job whose function registers
// one without it fails naming the operator). Sides lists the side outputs
// the function emits to (see SideOutput).
type ProcessFunc[K comparable, T, S, U any] = op.ProcessFunc[K, T, S, U]

// KeyedProcess calls f.OnRecord for every record of a keyed stream with
// the context of the record's key: its state (an S, the zero value at
// first), its timers, the record's event time and the outputs. Records of
// one key reach f in the order the stream carries them, on the instance
// that owns the key's group.
//
// Timers fire at epoch ends, before the epoch's marker goes on:
// event-time timers once the watermark reaches their time, in time order,
// with Timestamp the timer's time; processing-time timers at the first
// epoch end at which the job's clock has reached them (their resolution
// is the epoch). A timer that a firing timer registers fires in the same
// pass if it is due. At the end of a bounded input the watermark is +inf,
// so every event-time timer fires; processing-time timers not yet due
// then are dropped.
//
// State and timers belong to the key: checkpoints save them by key group,
// and a restore at another parallelism moves them with their group.
// StateTTL bounds the life of the state (not of the timers), and
// KeyedStateIn keeps the entries in a store (S needs a codec).
func KeyedProcess[K comparable, T, S, U any](k KeyedStream[K, T], f ProcessFunc[K, T, S, U], opts ...Option) Stream[U] {
	return op.KeyedProcess[K, T, S, U](k, f, opts...)
}

// CoProcessFunc is the function of CoProcess: OnLeft and OnRight are
// called for the records of each input and OnTimer for the timers, all
// with one state and one set of timers per key.
type CoProcessFunc[K comparable, L, R, S, U any] = op.CoProcessFunc[K, L, R, S, U]

// CoProcess is KeyedProcess over two streams keyed alike (the same key
// type; event time on both or on neither): f.OnLeft sees the records of
// l and f.OnRight those of r, with the key's one state and timers. The
// watermark is the lower of the two inputs'. Records of the two inputs
// interleave as they arrive.
func CoProcess[K comparable, L, R, S, U any](l KeyedStream[K, L], r KeyedStream[K, R], f CoProcessFunc[K, L, R, S, U], opts ...Option) Stream[U] {
	return op.CoProcess[K, L, R, S, U](l, r, f, opts...)
}

// SideOutput is a named second output of a keyed process function, of
// records of type X (Flink's OutputTag). The function declares it in its
// Sides and emits with Emit(c, x), where c is its *ProcessContext; the
// records carry the event time of c's Timestamp. Records emitted to a
// side output that no Side takes are dropped (nothing reads them);
// emitting to one that the function does not declare fails the job.
type SideOutput[X any] = op.SideOutput[X]

// NewSideOutput makes a side output named name, which must be unique
// among the side outputs of one function.
func NewSideOutput[X any](name string) SideOutput[X] {
	return op.NewSideOutput[X](name)
}

// SideTag is a side output of any record type, as ProcessFunc.Sides and
// CoProcessFunc.Sides list them.
type SideTag = op.SideTag

// SideEmitter is what SideOutput.Emit emits through: a *ProcessContext.
type SideEmitter = op.SideEmitter

// Side returns the records emitted to side output o by the function of
// the KeyedProcess or CoProcess whose output is s. A job whose s is not
// such an output, or whose function does not declare o (by name and
// type) in its Sides, fails at Run naming both.
func Side[X, U any](s Stream[U], o SideOutput[X]) Stream[X] {
	return op.Side[X, U](s, o)
}
