package trace

import (
	"sync"
	"sync/atomic"
)

// flushAt is how many events a recorder buffers before handing them on.
const flushAt = 1024

// Tracer is one process's trace: the switch every recorder reads, the
// workers and operators registered, and the events recorded so far. It is
// safe for concurrent use.
type Tracer struct {
	on      atomic.Bool
	mu      sync.Mutex
	workers []Worker
	ops     []string
	opIndex map[string]uint16
	events  []Event
}

// NewTracer returns a tracer that is off.
func NewTracer() *Tracer { return &Tracer{opIndex: map[string]uint16{}} }

// SetOn switches recording on or off.
func (t *Tracer) SetOn(on bool) { t.on.Store(on) }

// On reports whether recording is on.
func (t *Tracer) On() bool { return t.on.Load() }

// Op returns the index of the operator chain named name, adding it.
func (t *Tracer) Op(name string) uint16 {
	t.mu.Lock()
	defer t.mu.Unlock()
	if i, ok := t.opIndex[name]; ok {
		return i
	}
	i := uint16(len(t.ops))
	t.ops = append(t.ops, name)
	t.opIndex[name] = i
	return i
}

// NewRecorder registers a worker and returns its recorder, which one
// goroutine uses.
func (t *Tracer) NewRecorder(w Worker) *Recorder {
	w.Op = t.Op(w.Name)
	t.mu.Lock()
	defer t.mu.Unlock()
	t.workers = append(t.workers, w)
	return &Recorder{t: t, id: uint32(len(t.workers) - 1), Op: w.Op}
}

// Workers and Ops return the tables events index into.
func (t *Tracer) Workers() []Worker {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]Worker(nil), t.workers...)
}

// Ops returns the operator table.
func (t *Tracer) Ops() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]string(nil), t.ops...)
}

// Take returns the events handed on since the last Take, and forgets
// them.
func (t *Tracer) Take() []Event {
	t.mu.Lock()
	defer t.mu.Unlock()
	ev := t.events
	t.events = nil
	return ev
}

func (t *Tracer) add(ev []Event) {
	t.mu.Lock()
	t.events = append(t.events, ev...)
	t.mu.Unlock()
}

// Recorder is one worker's end of a Tracer. A nil *Recorder records
// nothing.
type Recorder struct {
	t   *Tracer
	id  uint32
	Op  uint16 // the worker's own operator chain
	buf []Event
}

// On reports whether the tracer records.
func (r *Recorder) On() bool { return r != nil && r.t.on.Load() }

// Add records an activity of this worker (its Worker field is set here).
func (r *Recorder) Add(e Event) {
	e.Worker = r.id
	r.buf = append(r.buf, e)
	if len(r.buf) >= flushAt {
		r.Flush()
	}
}

// Flush hands the buffered events to the tracer.
func (r *Recorder) Flush() {
	if r == nil || len(r.buf) == 0 {
		return
	}
	r.t.add(r.buf)
	r.buf = r.buf[:0]
}
