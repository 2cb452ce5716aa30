package engine

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/weirstream/weir/internal/dataflow"
	"github.com/weirstream/weir/internal/metrics"
	"github.com/weirstream/weir/internal/op"
	"github.com/weirstream/weir/internal/plan"
	"github.com/weirstream/weir/internal/progress"
	"github.com/weirstream/weir/internal/runtime"
	"github.com/weirstream/weir/internal/summary"
	"github.com/weirstream/weir/internal/trace"
	"github.com/weirstream/weir/internal/transport"
)

// Job is a dataflow program: build it with Source and the transformation
// functions, then Run it.
type Job struct {
	*dataflow.Graph
	ran bool

	rt    *runtime.Runtime // set while running
	coord *coordinator     // set while running with checkpoints

	mu        sync.Mutex
	latencies []time.Duration
	epochs    int64
	elapsed   time.Duration
	wireBytes atomic.Int64
	// summaries, in a distributed job, exchanges the counts of the
	// graph's counted inputs.
	summaries *summary.Exchange
	stop      stopper
	closeNet  func()
	stoppedAt uint64
	// tracer records the workers' activities while tracing is on.
	tracer *trace.Tracer
	// tracing is the tracing service while the job runs.
	tracing *tracing
	// reg holds the figures of the current (or last) run, which the
	// summaries carry to the other processes.
	reg *metrics.Registry
	// keyedPar is the parallelism of every chain a keyed exchange feeds,
	// by name, for the key-group loads of its instances.
	keyedPar map[string]int
	// statsReady is set once the run's instances are all made and wired,
	// before which Stats reads none of reg (its instances are still being
	// set up).
	statsReady bool
	// handovers moves key groups' state while the job runs, splits the
	// sources' shares.
	handovers *handovers
	splits    *splits
	// rescale holds the reconfigurations asked for or announced.
	rescale rescaleState
	// autoscale holds the autoscaler's decisions.
	autoscale autoscaling
	// idle tells the checkpoint service which checkpoints have passed.
	idle idleParts
	// slots, in an elastic job, says which processes take part from
	// when; boot is what a joining process started from.
	slots *presence
	boot  *boot
}

// NewJob returns an empty job.
func NewJob(name string, opts ...dataflow.JobOption) *Job {
	j := &Job{Graph: &dataflow.Graph{Name: name, Cfg: dataflow.DefaultJobConfig()}, tracer: trace.NewTracer()}
	for _, o := range opts {
		o(&j.Cfg)
	}
	return j
}

func (j *Job) plan() (*plan.Physical, error) {
	if j.Err != nil {
		return nil, j.Err
	}
	if err := j.Cfg.Validate(j.Processes()); err != nil {
		return nil, err
	}
	if len(j.Nodes) == 0 {
		return nil, errors.New("weir: job has no operators")
	}
	if err := j.storeNames(); err != nil {
		return nil, err
	}
	nodes := make([]plan.Node, len(j.Nodes))
	for i, n := range j.Nodes {
		if err := n.CheckParallelism(j.Cfg.KeyGroups); err != nil {
			return nil, err
		}
		pn := plan.Node{ID: n.Id, Name: n.Name, Op: n.Op, Kind: n.Kind, State: n.State,
			Selectivity: n.Sel, Key: n.Key, Parallelism: n.Par}
		for port, in := range n.Inputs {
			pn.Inputs = append(pn.Inputs, plan.Input{From: in.From.Id, FromPort: in.FromPort, Port: port, Keyed: in.Keyed})
		}
		nodes[i] = pn
	}
	return plan.Build(nodes, plan.Config{Workers: j.Cfg.Workers * j.Processes(), KeyGroups: j.Cfg.KeyGroups, Ordered: j.Cfg.Ordered})
}

// Explain returns the physical plan: tasks, their parallelism, the fused
// operators of each and the exchanges between them.
func (j *Job) Explain() (string, error) {
	p, err := j.plan()
	if err != nil {
		return "", err
	}
	order := "unordered"
	if j.Cfg.Ordered {
		order = "ordered"
	}
	procs := ""
	if n := j.Processes(); n > 1 {
		procs = fmt.Sprintf(" x %d processes", n)
	}
	return fmt.Sprintf("job %s: %d workers%s, %d key groups, epochs %s, %s\n%s",
		j.Name, j.Cfg.Workers, procs, j.Cfg.KeyGroups, j.epochDesc(), order, p.Explain()), nil
}

// ExplainDot returns the physical plan in Graphviz's dot language.
func (j *Job) ExplainDot() (string, error) {
	p, err := j.plan()
	if err != nil {
		return "", err
	}
	return p.Dot(j.Name), nil
}

func (j *Job) epochDesc() string {
	if j.Cfg.EpochRecords > 0 {
		return fmt.Sprintf("every %d records", j.Cfg.EpochRecords)
	}
	return "every " + j.Cfg.Interval.String()
}

// Run executes the job. It returns when every source has ended and all
// windows have been flushed to the sinks, when an operator fails (with its
// error), or when ctx is cancelled (with ctx's error). A job runs once.
func (j *Job) Run(ctx context.Context) error {
	if j.ran {
		return errors.New("weir: job already ran")
	}
	j.ran = true
	defer func() {
		for _, c := range j.Closers {
			c.Close()
		}
	}()
	p, err := j.plan()
	if err != nil {
		return err
	}
	scaler, err := j.newAutoscaler()
	if err != nil {
		return err
	}
	if err := j.joinIfRunning(ctx, p); err != nil {
		return err
	}
	j.mu.Lock()
	j.reg = metrics.NewRegistry(j.Process())
	j.mu.Unlock()
	if j.Cfg.Ckpt != nil {
		self, procs := j.Process(), j.Processes()
		c, err := j.openCheckpoints(self, procs)
		if err != nil {
			return err
		}
		c.reg = j.reg
		j.mu.Lock() // Metrics may read it while the job runs
		j.coord = c
		j.mu.Unlock()
	}
	net, err := j.network(ctx, p)
	if err != nil {
		return err
	}
	if net != nil {
		defer net.Close()
	}
	if err := j.startElastic(ctx, net); err != nil {
		return err
	}
	rt := j.newRuntime()
	pl := placement{self: 0, procs: 1}
	if net != nil {
		pl = placement{self: net.Self(), procs: net.Processes()}
		j.registry().Peers = peerStats(net)
	}
	if err := j.instantiate(p, rt, pl, net); err != nil {
		return err
	}
	if err := j.startTracing(rt); err != nil {
		return err
	}
	if j.coord != nil {
		// Every task instance has taken its state: the checkpoint read
		// back (the parts' bytes the blobs point into) is garbage now.
		j.coord.restored = nil
		j.coord.onComplete = func(uint64) { j.checkStop() }
		j.coord.start(rt)
	}
	j.mu.Lock()
	j.rt = rt
	j.statsReady = true // every instance is wired: Stats may read them
	j.mu.Unlock()
	if net != nil {
		var cancel context.CancelCauseFunc
		ctx, cancel = context.WithCancelCause(ctx)
		defer cancel(nil)
		j.watchNetwork(rt, net, cancel)
	}
	j.startControls(rt, net)
	if err := j.startAutoscale(rt, scaler); err != nil {
		return err
	}
	// A stop asked for before the job could carry it out (the summaries
	// of a distributed job must run first) takes effect now.
	j.checkStop()
	start := time.Now()
	err = rt.Run(ctx)
	j.releaseLives(true) // the handovers' close, if it has not gone
	j.reg.End()
	j.mu.Lock()
	j.elapsed = time.Since(start)
	j.mu.Unlock()
	return j.finish(err, net)
}

// newRuntime makes the job's runtime: its epochs, numbered after the
// checkpoint restored from and, in a distributed job, from one origin.
func (j *Job) newRuntime() *runtime.Runtime {
	var rt *runtime.Runtime
	var origin time.Time
	if j.Processes() > 1 {
		// Every process numbers time-based epochs from the same origin,
		// so they agree on epoch boundaries whenever each starts.
		origin = time.Unix(0, 0)
	}
	first := progress.Epoch(j.firstEpoch())
	reg := j.registry()
	reg.Records = func() int64 { return rt.Records() }
	rt = runtime.New(runtime.Config{
		Interval:   j.Cfg.Interval,
		Records:    j.Cfg.EpochRecords,
		Origin:     origin,
		FirstEpoch: first,
		Process:    j.Process(),
		Registry:   reg,
		Tracer:     j.tracer,
		// A process whose instances end epochs sends its figures, also
		// one without terminal tasks (whose OnEpoch never fires).
		OnInstanceEpoch: j.instanceEpoch,
		OnEpoch: func(s runtime.EpochStats) {
			reg.Epoch(uint64(s.Epoch), s.Watermark, s.Latency, s.Final)
			j.rescale.completed.Store(uint64(s.Epoch))
			j.mu.Lock()
			j.latencies = append(j.latencies, s.Latency)
			j.epochs++
			j.mu.Unlock()
			j.kickSummaries()
			if j.Cfg.OnEpoch != nil {
				j.Cfg.OnEpoch(dataflow.EpochStats{Epoch: uint64(s.Epoch), Watermark: s.Watermark, Latency: s.Latency, Final: s.Final, Records: rt.Records()})
			}
		},
	})
	return rt
}

// firstEpoch is the number of the run's first epoch: 0, or the one after
// the checkpoint it restored.
func (j *Job) firstEpoch() uint64 {
	if j.boot != nil {
		return j.boot.at
	}
	if j.coord != nil && j.coord.from > 0 {
		return j.coord.from + 1
	}
	return 0
}

// joinedAt is the epoch this process took part from, if it joined the
// running job (0 if it started it).
func (j *Job) joinedAt() uint64 {
	if j.boot != nil {
		return j.boot.at
	}
	return 0
}

// watchNetwork starts the summaries over net and the service that cancels
// the run when the network fails. A lost peer fails the job; a job that
// fails aborts the network, which wakes whatever waits on it. A job that
// ends well has received every peer's final marker, so nothing waits on
// the network: it sends its final summary, waits for its peers', and
// closes it (finish).
func (j *Job) watchNetwork(rt *runtime.Runtime, net transport.Network, cancel context.CancelCauseFunc) {
	j.closeNet = func() { net.Close() }
	j.startSummaries(net)
	rt.AddService("network-watch", func(done <-chan struct{}) error {
		select {
		case <-net.Done():
			cancel(net.Err())
		case <-done:
			if err := rt.Err(); err != nil && !errors.Is(err, ErrStopped) {
				net.Abort(err) // tell the peers why
				net.Close()
			}
		}
		return nil
	})
}

// finish completes a run that returned err: the checkpoint a stop ended
// at, the final summaries and the network's close, FINISHED.
func (j *Job) finish(err error, net transport.Network) error {
	if errors.Is(err, ErrStopped) {
		at := j.stopped()
		j.mu.Lock()
		j.stoppedAt = at
		j.mu.Unlock()
	}
	if net != nil && err == nil {
		wait := finishTimeout
		if j.leaving() {
			wait = 0 // the others run on
		}
		j.summaries.Finish(wait)
		if cerr := net.Close(); cerr != nil && !errors.Is(cerr, transport.ErrClosed) {
			err = cerr
		}
	}
	if err == nil {
		err = j.markFinished()
	}
	if err == nil && j.endedEverywhere() {
		// The job ran to its end in every process and will not be
		// resumed: what its sources read need never be read again. (A
		// process that left, or a job that did not end everywhere, may
		// be resumed from a checkpoint: then only complete checkpoints
		// acknowledge.)
		j.coord.acks.acknowledge(math.MaxUint64, j.coord.log)
	}
	return err
}

// Metrics summarises a finished (or running) job.
type Metrics struct {
	// Records is the number of records the sources have read; after a
	// restore, those read before the checkpoint count too (records read
	// after it by a run that failed do not: they are read again).
	Records int64
	// Late is the number of records that arrived after their windows'
	// allowed lateness, over all window operators.
	Late       int64
	Epochs     int64
	LatencyP50 time.Duration
	LatencyP99 time.Duration
	LatencyMax time.Duration
	// Elapsed is how long the job ran, from the start of its tasks (after
	// a distributed job's processes connected) to its end.
	Elapsed time.Duration
	// WireBytes is what this process sent to the others, frame headers
	// included (0 in a single process).
	WireBytes int64
	// RestoredFrom is the checkpoint the job started from (0: none).
	RestoredFrom uint64
	// Counters are the job's counts by name: "records" and "late" (as
	// Records and Late) and what Counted inputs count, such as
	// "dead_letters". In a distributed job Records, Late and Counters are
	// totals over all processes, from the summaries they exchange: once
	// Run has returned they are final, but for the processes in Missing,
	// whose final summary did not arrive (counted as last heard).
	Counters  map[string]int64
	Missing   []int
	Processes int
	// StoppedAt is the checkpoint a job stopped cleanly at (Run returned
	// ErrStopped), from which the next run resumes.
	StoppedAt uint64
}

// Metrics returns the job's figures so far.
func (j *Job) Metrics() Metrics {
	j.mu.Lock()
	defer j.mu.Unlock()
	m := Metrics{Epochs: j.epochs, Elapsed: j.elapsed, WireBytes: j.wireBytes.Load(), Processes: j.Processes()}
	if j.coord != nil {
		m.RestoredFrom = j.coord.from
	}
	m.StoppedAt = j.stoppedAt
	x := j.summaries
	j.mu.Unlock()
	m.Counters = j.localCounts()
	if x != nil {
		m.Counters, m.Missing = x.Board().Totals(j.Process(), summary.Counts(m.Counters))
	}
	m.Records, m.Late = m.Counters["records"], m.Counters["late"]
	j.mu.Lock()
	if len(j.latencies) > 0 {
		l := append([]time.Duration(nil), j.latencies...)
		sort.Slice(l, func(a, b int) bool { return l[a] < l[b] })
		m.LatencyP50 = l[len(l)*50/100]
		m.LatencyP99 = l[min(len(l)-1, len(l)*99/100)]
		m.LatencyMax = l[len(l)-1]
	}
	return m
}

// PartitionStats returns the partitioning figures of every keyed
// aggregation of the job, in the order they were added.
func (j *Job) PartitionStats() []dataflow.PartitionStats {
	out := make([]dataflow.PartitionStats, 0, len(j.PartStats))
	for _, s := range j.PartStats {
		out = append(out, s.Snapshot())
	}
	return out
}

// startControls starts what changes the running job from outside: the
// admission of processes that join (process 0 of an elastic job), and
// the channels that ask this process to leave or the job to stop.
func (j *Job) startControls(rt *runtime.Runtime, net transport.Network) {
	if el, ok := net.(transport.Elastic); ok && j.slots != nil {
		j.watchSlots(rt, el)
	}
	if c := j.Cfg.LeaveOn; c != nil {
		rt.AddService("leave-on", func(done <-chan struct{}) error {
			select {
			case <-c:
				j.leaveSoon(done)
			case <-done:
			}
			return nil
		})
	}
	if c := j.Cfg.StopOn; c != nil {
		rt.AddService("stop-on", func(done <-chan struct{}) error {
			select {
			case <-c:
				j.Stop()
			case <-done:
			}
			return nil
		})
	}
}

// leaveSoon makes this process leave the job, once the reconfiguration
// under way (a join's, say) is over; a leave that cannot be stops the
// job instead.
func (j *Job) leaveSoon(done <-chan struct{}) {
	for {
		_, err := j.Leave(j.Process(), Rescale{})
		if err == nil {
			return
		}
		if !errors.Is(err, errBusy) {
			j.Logger().Warn("weir: this process cannot leave the job; stopping the job instead", "process", j.Process(), "reason", err)
			j.Stop()
			return
		}
		select {
		case <-done:
			return
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// instanceEpoch follows an instance's end of an epoch: the summaries go
// out, and the handovers send the closes now due to processes that leave.
func (j *Job) instanceEpoch() {
	j.mu.Lock()
	x, h := j.summaries, j.handovers
	j.mu.Unlock()
	if x != nil {
		x.Kick()
	}
	if h != nil && h.closing.Load() > 0 {
		h.flushCloses(j.CompletedEpoch())
	}
}

// storeNames refuses, with a state backend, two keyed operators whose
// stores would have one name there (each instance's store is named after
// its operator, and one opened again closes the earlier one first).
func (j *Job) storeNames() error {
	if j.Cfg.Backend == nil {
		return nil
	}
	seen := map[string]string{}
	for _, n := range j.Nodes {
		if n.State != plan.Keyed {
			continue
		}
		k := op.StoreName(n.Name)
		if other, ok := seen[k]; ok {
			return fmt.Errorf("weir: %s: keyed operators %q and %q would keep their state there under one name; name them apart (Name)", j.Cfg.Backend, other, n.Name)
		}
		seen[k] = n.Name
	}
	return nil
}
