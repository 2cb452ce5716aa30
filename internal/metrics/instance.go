package metrics

import (
	"sync/atomic"
	"time"

	"github.com/weirstream/weir/internal/progress"
)

// Instance is one task instance's counters. Its own goroutine updates
// them (Add*, Complete); any goroutine may read them (Stats). Every field
// is an atomic, so an update is one atomic add or store and no lock is
// taken on the data path.
type Instance struct {
	Operator string
	Index    int
	Process  int
	Source   bool

	recordsIn, recordsOut atomic.Int64
	bytesIn, bytesOut     atomic.Int64
	busy, idle, blocked   atomic.Int64 // nanoseconds; busy includes blocked
	epoch                 atomic.Uint64
	watermark             atomic.Int64
	started, ended        atomic.Int64 // Unix nanoseconds
	lived                 atomic.Int64 // nanoseconds of the lives that ended before started
	backlog               atomic.Int64 // a source's backlog plus one; 0: unknown

	// Queue, if set, returns the number of messages in the inbox.
	Queue func() int
}

// NewInstance returns the counters of instance index of the chain named
// operator, in process process.
func NewInstance(operator string, index, process int, source bool) *Instance {
	in := &Instance{Operator: operator, Index: index, Process: process, Source: source}
	in.watermark.Store(progress.NoWatermark)
	return in
}

// AddIn counts n records taken in; AddOut n records sent on.
func (in *Instance) AddIn(n int)  { in.recordsIn.Add(int64(n)) }
func (in *Instance) AddOut(n int) { in.recordsOut.Add(int64(n)) }

// AddBytesIn and AddBytesOut count encoded bytes.
func (in *Instance) AddBytesIn(n int)  { in.bytesIn.Add(int64(n)) }
func (in *Instance) AddBytesOut(n int) { in.bytesOut.Add(int64(n)) }

// AddBusy counts time spent on a batch or marker, waits for output space
// included; AddBlocked the part of it spent waiting for output space;
// AddIdle time spent waiting for input.
func (in *Instance) AddBusy(d int64)    { in.busy.Add(d) }
func (in *Instance) AddBlocked(d int64) { in.blocked.Add(d) }
func (in *Instance) AddIdle(d int64)    { in.idle.Add(d) }

// SetBacklog records a source's backlog: the records its reader could
// read now (n >= 0).
func (in *Instance) SetBacklog(n int64) { in.backlog.Store(max(n, 0) + 1) }

// Start and End record when the instance's goroutine started and ended
// (Unix nanoseconds). An instance that starts again after it ended (a
// restartable one) runs until its next End.
func (in *Instance) Start(t int64) {
	if e := in.ended.Load(); e != 0 {
		in.lived.Add(e - in.started.Load())
	}
	in.ended.Store(0)
	in.started.Store(t)
}
func (in *Instance) End(t int64) { in.ended.Store(t) }

// Running says whether the instance has started and not ended.
func (in *Instance) Running() bool { return in.started.Load() != 0 && in.ended.Load() == 0 }

// Complete records that the instance completed epoch e with watermark wm.
func (in *Instance) Complete(e uint64, wm int64) {
	in.epoch.Store(e)
	in.watermark.Store(wm)
}

// Lifetime returns how long the instance has run, up to now (Unix
// nanoseconds) or its end: the sum of its lives, for one that started
// again.
func (in *Instance) Lifetime(now int64) time.Duration {
	s := in.started.Load()
	if s == 0 {
		return 0
	}
	if e := in.ended.Load(); e != 0 {
		now = e
	}
	return time.Duration(in.lived.Load() + now - s)
}

// Stats returns the instance's figures at now (Unix nanoseconds).
func (in *Instance) Stats(now int64) InstanceStats {
	busy, blocked := in.busy.Load(), in.blocked.Load()
	st := InstanceStats{Operator: in.Operator, Instance: in.Index, Process: in.Process, Source: in.Source,
		RecordsIn: in.recordsIn.Load(), RecordsOut: in.recordsOut.Load(),
		BytesIn: in.bytesIn.Load(), BytesOut: in.bytesOut.Load(),
		Useful: time.Duration(max(busy-blocked, 0)), Idle: time.Duration(in.idle.Load()), Backpressure: time.Duration(blocked),
		Lifetime: in.Lifetime(now), Running: in.Running(), Epoch: in.epoch.Load(), Watermark: in.watermark.Load()}
	if b := in.backlog.Load(); b > 0 {
		st.Backlog, st.KnowsBacklog = b-1, true
	}
	if in.Queue != nil && in.ended.Load() == 0 {
		st.Queue = in.Queue()
	}
	return st
}

// Load counts the records sent to each key group of one keyed operator by
// the senders of one process. Each sender counts into its own KeyCounter
// and publishes at epoch ends.
type Load struct {
	Operator string
	groups   []atomic.Int64
}

// Counts returns the records counted per key group.
func (l *Load) Counts() []int64 {
	out := make([]int64, len(l.groups))
	for i := range l.groups {
		out[i] = l.groups[i].Load()
	}
	return out
}

// KeyCounter is one sender's count per key group: a plain slice its
// goroutine increments (one increment per record), added to the shared
// Load by Publish.
type KeyCounter struct {
	N    []int64
	load *Load
}

// Counter returns a new sender's counter of l.
func (l *Load) Counter() *KeyCounter {
	return &KeyCounter{N: make([]int64, len(l.groups)), load: l}
}

// Publish adds the counts to the shared load and clears them.
func (c *KeyCounter) Publish() {
	for i, n := range c.N {
		if n != 0 {
			c.load.groups[i].Add(n)
			c.N[i] = 0
		}
	}
}
