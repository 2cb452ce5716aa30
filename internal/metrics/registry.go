package metrics

import (
	"math"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/weirstream/weir/internal/progress"
)

// history is how many recent checkpoints a Registry keeps.
const history = 16

// Registry is one process's figures: its instances' counters, the key
// group loads its senders count, its epoch latencies, watermark and
// checkpoints, and a function giving its peers' traffic. Instances and
// loads are added before the job runs; the rest is safe for concurrent
// use.
type Registry struct {
	Process int
	// Records, if set, returns the records the process's sources read.
	Records func() int64
	// Peers, if set, returns the traffic with each peer.
	Peers func() []PeerStats

	mu        sync.Mutex
	instances []*Instance
	loads     []*Load
	latency   *hdr.Histogram
	latSum    time.Duration
	ckpts     []CheckpointStats // oldest first, at most history
	pending   map[uint64]*ckptTimes

	epoch     atomic.Uint64
	watermark atomic.Int64
	epochs    atomic.Bool // an epoch ended at every terminal instance
	final     atomic.Bool
}

// End records that the process's part of the job has ended.
func (r *Registry) End() { r.final.Store(true) }

type ckptTimes struct {
	first, last int64
	epoch       uint64
}

// NewRegistry returns the empty registry of process process.
func NewRegistry(process int) *Registry {
	r := &Registry{Process: process, latency: hdr.New(1, int64(time.Hour/time.Microsecond), 3),
		pending: map[uint64]*ckptTimes{}}
	r.watermark.Store(progress.NoWatermark)
	return r
}

// Add registers an instance.
func (r *Registry) Add(in *Instance) {
	r.mu.Lock()
	r.instances = append(r.instances, in)
	r.mu.Unlock()
}

// Instances returns the registered instances.
func (r *Registry) Instances() []*Instance {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*Instance(nil), r.instances...)
}

// Completed is the newest epoch every instance of the process that runs
// has completed (one that has ended has nothing left to complete), or,
// once all have ended, the newest any completed; 0 while one has not
// started. A process with no terminal instance completes an epoch by this
// measure only.
func (r *Registry) Completed() uint64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	var running, ended uint64 = math.MaxUint64, 0
	for _, in := range r.instances {
		// Ended before the epoch: an instance completes its last epoch
		// before it ends.
		started, end := in.started.Load() != 0, in.ended.Load() != 0
		e := in.epoch.Load()
		switch {
		case !started:
			return 0
		case end:
			ended = max(ended, e)
		default:
			running = min(running, e)
		}
	}
	if running == math.MaxUint64 {
		return ended
	}
	return running
}

// Load returns the key-group load of the keyed operator named op, with
// groups key groups, making it on first use.
func (r *Registry) Load(op string, groups int) *Load {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, l := range r.loads {
		if l.Operator == op {
			return l
		}
	}
	l := &Load{Operator: op, groups: make([]atomic.Int64, groups)}
	r.loads = append(r.loads, l)
	return l
}

// Epoch records that epoch e ended at every terminal instance of the
// process with watermark wm, latency after its cut; final marks the
// process's last epoch (as End does).
func (r *Registry) Epoch(e uint64, wm int64, latency time.Duration, final bool) {
	r.epoch.Store(e)
	r.watermark.Store(wm)
	r.epochs.Store(true)
	r.mu.Lock()
	_ = r.latency.RecordValue(max(int64(latency/time.Microsecond), 1))
	r.latSum += latency
	r.mu.Unlock()
	if final {
		r.final.Store(true)
	}
}

// CheckpointReported records that an instance passed checkpoint n's
// marker, of epoch e, at t (Unix nanoseconds).
func (r *Registry) CheckpointReported(n, e uint64, t int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	p := r.pending[n]
	if p == nil {
		p = &ckptTimes{first: t, epoch: e}
		r.pending[n] = p
	}
	p.first, p.last = min(p.first, t), max(p.last, t)
}

// CheckpointWritten records that the process's part of checkpoint n,
// of size bytes, was written at t.
func (r *Registry) CheckpointWritten(n uint64, bytes int64, t int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	p := r.pending[n]
	if p == nil {
		p = &ckptTimes{first: t, last: t}
	}
	delete(r.pending, n)
	for k := range r.pending {
		if k < n {
			delete(r.pending, k) // superseded
		}
	}
	r.ckpts = append(r.ckpts, CheckpointStats{ID: n, Epoch: p.epoch, Start: p.first,
		Duration: time.Duration(t - p.first), Alignment: time.Duration(p.last - p.first), Bytes: bytes})
	if len(r.ckpts) > history {
		r.ckpts = append(r.ckpts[:0], r.ckpts[len(r.ckpts)-history:]...)
	}
}

// CheckpointComplete records that checkpoint n is complete (every
// process wrote its part).
func (r *Registry) CheckpointComplete(n uint64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := range r.ckpts {
		if r.ckpts[i].ID <= n {
			r.ckpts[i].Complete = true
		}
	}
}

// Snapshot returns the process's figures at now.
func (r *Registry) Snapshot(now time.Time) ProcessStats {
	r.mu.Lock()
	insts := append([]*Instance(nil), r.instances...)
	loads := append([]*Load(nil), r.loads...)
	ps := ProcessStats{Process: r.Process, Time: now.UnixNano(), Latency: latencyStats(r.latency, r.latSum),
		Checkpoints: append([]CheckpointStats(nil), r.ckpts...)}
	r.mu.Unlock()
	ps.Epoch, ps.Watermark, ps.Final = r.epoch.Load(), r.watermark.Load(), r.final.Load()
	ps.WatermarkLag = Lag(now.UnixNano(), ps.Watermark)
	ps.Instances = make([]InstanceStats, len(insts))
	for i, in := range insts {
		ps.Instances[i] = in.Stats(ps.Time)
	}
	if r.Records != nil {
		// Read after the instances: a source counts the records read
		// before its own records in, so here they are never fewer.
		ps.Records = r.Records()
	}
	if !r.epochs.Load() && len(insts) > 0 {
		// No terminal instance here has ended an epoch (there is none,
		// or every one waits to take part): the epoch every running
		// instance completed, as Completed counts it (one that waits
		// or ended has nothing left to complete), or, once none runs,
		// every instance's.
		ps.Epoch, ps.Watermark = completedOf(ps.Instances)
		ps.WatermarkLag = Lag(ps.Time, ps.Watermark)
	}
	sort.SliceStable(ps.Instances, func(a, b int) bool {
		x, y := ps.Instances[a], ps.Instances[b]
		return x.Operator < y.Operator || x.Operator == y.Operator && x.Instance < y.Instance
	})
	for _, l := range loads {
		ps.Loads = append(ps.Loads, KeyGroupLoad{Operator: l.Operator, Counts: l.Counts()})
	}
	if r.Peers != nil {
		ps.Peers = r.Peers()
	}
	return ps
}

// Lag is the watermark lag at now (Unix nanoseconds) of watermark wm
// (event time in milliseconds): 0 without a watermark.
func Lag(now, wm int64) time.Duration {
	if wm <= progress.NoWatermark || wm >= progress.MaxWatermark {
		return 0
	}
	return time.Duration(now - wm*int64(time.Millisecond))
}

func latencyStats(h *hdr.Histogram, sum time.Duration) LatencyStats {
	us := func(q float64) time.Duration { return time.Duration(h.ValueAtQuantile(q)) * time.Microsecond }
	return LatencyStats{Count: h.TotalCount(), P50: us(50), P90: us(90), P99: us(99), P999: us(99.9),
		Max: time.Duration(h.Max()) * time.Microsecond, Sum: sum}
}

// completedOf is the epoch and watermark every running instance of ins
// has reached, or, if none runs, every instance.
func completedOf(ins []InstanceStats) (uint64, int64) {
	running := slices.ContainsFunc(ins, func(in InstanceStats) bool { return in.Running })
	e, wm := uint64(math.MaxUint64), int64(math.MaxInt64)
	for _, in := range ins {
		if in.Running || !running {
			e, wm = min(e, in.Epoch), min(wm, in.Watermark)
		}
	}
	return e, wm
}
