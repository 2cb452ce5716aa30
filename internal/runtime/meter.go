package runtime

import (
	"sync/atomic"
	"time"

	"github.com/weirstream/weir/internal/metrics"
	"github.com/weirstream/weir/internal/progress"
	"github.com/weirstream/weir/internal/trace"
)

// base anchors now: times are the Unix time at base plus the monotonic
// time since, so they never run backwards within a process.
var (
	base     = time.Now()
	baseUnix = base.UnixNano()
)

// Now returns the time (Unix nanoseconds) that meters use.
func Now() int64 { return baseUnix + int64(time.Since(base)) }

// Meter is what one worker (a task instance's goroutine, or a pump's)
// measures: its counters, updated with atomic adds once per batch,
// marker or wait, and, while tracing is on, its activities. The worker's
// goroutine alone uses it, but for M, which anyone may read.
type Meter struct {
	M *metrics.Instance

	tracer  *trace.Tracer
	rec     *trace.Recorder
	last    int64 // end of the last measured stretch
	open    bool  // an activity is open (tracing)
	kind    trace.Kind
	since   int64
	process int
	// closed is set once the worker's goroutine has closed the meter:
	// another goroutine may use what the worker used (finals.go); until
	// it opens it again, if it is a restartable instance's, whose
	// retirement life is.
	closed atomic.Bool
	life   *Retirement
}

// NewMeter returns the meter of a worker that is no task instance (a
// pump): its counters are registered nowhere.
func (r *Runtime) NewMeter(name string, instance int) *Meter {
	return &Meter{M: metrics.NewInstance(name, instance, r.cfg.Process, false), tracer: r.cfg.Tracer, process: r.cfg.Process}
}

// Meter returns the meter of instance instance of the task named name
// (its head operator's name), making and registering it on first use.
// Its counters carry name until SetName renames them.
func (r *Runtime) Meter(name string, instance int) *Meter {
	k := meterKey{name, instance}
	if m := r.meters[k]; m != nil {
		return m
	}
	m := r.NewMeter(name, instance)
	r.meters[k] = m
	r.cfg.Registry.Add(m.M)
	return m
}

type meterKey struct {
	name     string
	instance int
}

// SetName names the worker: the operator chain it runs. Call it before
// Run.
func (m *Meter) SetName(name string) { m.M.Operator = name }

// Open starts measuring: the worker's goroutine calls it first.
func (m *Meter) Open() {
	m.closed.Store(false)
	m.last = Now()
	m.M.Start(m.last)
	if m.tracer != nil {
		m.rec = m.tracer.NewRecorder(trace.Worker{Name: m.M.Operator, Process: m.process, Instance: m.M.Index})
	}
}

// Close ends measuring: the worker's goroutine calls it last.
func (m *Meter) Close() {
	t := Now()
	if m.open {
		m.End(t)
	}
	m.M.End(t)
	m.rec.Flush()
	m.closed.Store(true)
}

// Tracing reports whether the worker's activities are recorded: one
// atomic load.
func (m *Meter) Tracing() bool { return m.rec.On() }

// Flush hands the recorded activities on (at epoch ends).
func (m *Meter) Flush() { m.rec.Flush() }

// busy counts the stretch from the last mark to t as busy.
func (m *Meter) busy(t int64) {
	m.M.AddBusy(t - m.last)
	m.last = t
}

// idle counts the stretch from the last mark to t as waiting for input;
// tracing, it records it.
func (m *Meter) idle(t int64, tracing bool) {
	if tracing {
		m.Event(trace.WaitInput, m.last, t, 0, 0)
	}
	m.M.AddIdle(t - m.last)
	m.last = t
}

// waited moves d nanoseconds of the last busy stretch to waiting for
// input: a source's reader said it spent them waiting (Waiter).
func (m *Meter) waited(d int64) {
	m.M.AddBusy(-d)
	m.M.AddIdle(d)
}

// completed records that task completed the epoch of the aligned marker
// out, and what its Mark did as a round if it runs rounds (RoundTask):
// the records it took in, and the time it waited for its peers as
// waiting for input.
func (m *Meter) completed(task InputTask, out progress.Marker) {
	if t, ok := task.(RoundTask); ok {
		n, waited := t.Round()
		m.M.AddIn(int(n))
		// The Mark's stretch is counted busy before the wait is moved out
		// of it: busy never runs backwards in a snapshot between the two.
		m.busy(Now())
		m.waited(int64(waited))
	}
	m.M.Complete(uint64(out.Epoch), out.Watermark)
}

// Blocked counts d nanoseconds spent waiting for output space, within
// a busy stretch.
func (m *Meter) Blocked(d int64) { m.M.AddBlocked(d) }

// Begin opens an activity of kind k at t, closing the open one.
func (m *Meter) Begin(k trace.Kind, t int64) {
	if m.open {
		m.End(t)
	}
	m.open, m.kind, m.since = true, k, t
}

// End closes the open activity at t and records it.
func (m *Meter) End(t int64) {
	if !m.open {
		return
	}
	m.open = false
	if m.rec != nil {
		m.rec.Add(trace.Event{Kind: m.kind, Op: m.rec.Op, Start: m.since, End: max(t, m.since)})
	}
}

// Event records an activity from start to end that interrupts the open
// one, which resumes at end: the worker's activities never overlap.
func (m *Meter) Event(k trace.Kind, start, end int64, ch, seq uint64) {
	if m.rec == nil {
		return
	}
	if m.open {
		start = max(start, m.since)
		if start > m.since {
			m.rec.Add(trace.Event{Kind: m.kind, Op: m.rec.Op, Start: m.since, End: start})
		}
		m.since = max(end, start)
	}
	m.rec.Add(trace.Event{Kind: k, Op: m.rec.Op, Start: start, End: max(end, start), Channel: ch, Seq: seq})
}

// Len is what a batch that knows its record count implements.
type Len interface{ Len() int }

// Records returns the number of records in batch b (1 if b does not say).
func Records(b any) int {
	if l, ok := b.(Len); ok {
		return l.Len()
	}
	return 1
}
