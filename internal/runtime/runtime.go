package runtime

import (
	"context"
	"errors"
	"fmt"
	runtimedebug "runtime/debug"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/weirstream/weir/internal/metrics"
	"github.com/weirstream/weir/internal/progress"
	"github.com/weirstream/weir/internal/trace"
)

// SourceTask is one instance of a source with its fused chain.
type SourceTask interface {
	// Poll reads one batch and pushes at most limit records of it (all if
	// limit is 0) through the chain, keeping the rest for the next call. It
	// returns the number of records pushed, and ErrEndOfInput at the end of
	// the input. (Not io.EOF: an operator's error that wraps io.EOF must
	// fail the job, not end it.)
	Poll(limit int) (int, error)
	// Mark ends an epoch: it passes the marker through the chain.
	Mark(m progress.Marker) error
	// Close releases the reader. The runtime calls it once, however the
	// source stops: at the end of its input, on an error or on
	// cancellation.
	Close() error
}

// Waiter is what a SourceTask implements when its Poll may wait for
// input: Waited returns the time spent waiting so far, which the source's
// figures count as idle rather than useful.
type Waiter interface {
	Waited() time.Duration
}

// RoundTask is what an InputTask implements when its Mark may do the
// work of records no batch brought it, and wait for its peers (a
// micro-batch round, whose records its senders deposited in memory the
// receivers share): Round returns the records it took in and the time it
// waited since the last call, which its figures count as records in and
// as idle. The runtime calls it after every Mark.
type RoundTask interface {
	Round() (records int64, waited time.Duration)
}

// Backlogger is what a SourceTask implements when its reader may know
// its backlog: Backlog returns it, and whether the reader says. The
// runtime reads it at each epoch's end.
type Backlogger interface {
	Backlog() (int64, bool)
}

// InputTask is one instance of an operator fed through an inbox.
type InputTask interface {
	// Batch processes a batch that arrived on an input port. The task owns
	// it from then on.
	Batch(port int, b any) error
	// Mark is called once an epoch has ended on every input, with the
	// aligned marker. After a Final marker no more calls follow.
	Mark(m progress.Marker) error
}

// SequencedTask is an InputTask that decides which sender it reads next,
// which is how an ordered merge takes numbered units from its senders in
// turn. The runtime delivers that sender's next message; when that sender
// has already ended the current epoch, it delivers the others' markers
// until the epoch is aligned.
type SequencedTask interface {
	InputTask
	// Next returns the index of the sender (in the order senders were
	// registered on the inbox) whose next message the task needs.
	Next() int
}

// Config sets how sources cut epochs.
type Config struct {
	// Interval is the wall-clock length of an epoch (used when Records is 0).
	Interval time.Duration
	// Records, if positive, cuts an epoch every Records records per source
	// instance.
	Records int
	// Origin is when time-based epoch 0 starts; zero means when Run
	// starts. Processes of one job that share an origin (the Unix epoch,
	// say) agree on epoch boundaries whenever each of them starts.
	Origin time.Time
	// FirstEpoch is the number of the first epoch (after Origin, if set,
	// the epochs before FirstEpoch are skipped): a job restored from a
	// checkpoint goes on numbering after it.
	FirstEpoch progress.Epoch
	// OnEpoch, if set, is called (from a runtime goroutine) when an epoch has
	// ended at every terminal task.
	OnEpoch func(EpochStats)
	// OnInstanceEpoch, if set, is called (from the instance's goroutine)
	// each time a task or source instance has ended an epoch; it must
	// not block.
	OnInstanceEpoch func()
	// Process is this process's index in the job; Registry, if set,
	// receives every task instance's counters; Tracer, if set, records
	// the workers' activities while it is on.
	Process  int
	Registry *metrics.Registry
	Tracer   *trace.Tracer
}

// EpochStats describes a completed epoch.
type EpochStats struct {
	Epoch     progress.Epoch
	Watermark progress.Watermark
	// Latency is from the earliest source cut of the epoch to its end at
	// the last terminal task.
	Latency time.Duration
	Final   bool
}

// Message is what travels through an inbox: a batch, or a marker if Batch
// is nil.
type Message struct {
	Batch  any
	Marker progress.Marker
}

// Runtime runs tasks.
type Runtime struct {
	cfg      Config
	sources  []*sourceSpec
	tasks    []*taskSpec
	services []serviceSpec
	done     chan struct{}
	once     sync.Once
	errMu    sync.Mutex
	err      error
	start    time.Time
	startNs  atomic.Int64 // start, for other goroutines
	started  atomic.Bool
	tracker  *tracker
	// Records counts the records read by all sources.
	records  atomic.Int64
	meters   map[meterKey]*Meter
	channels uint64 // local channels made
	retireMu sync.Mutex
	retire   map[meterKey]*Retirement
	joins    atomic.Uint64 // joins set on the retirements
	// remoteMarked is the highest epoch of a marker a sender in another
	// process sent here (MarkRemote), 0 before the first.
	remoteMarked atomic.Uint64
	finals       finals
	// active counts the task and source instances that run or may still
	// run: not ended, not waiting to take part again (lives.go).
	active atomic.Int64
	lives  lives
	// holds counts Hold's holds on the runtime's end, in active once
	// counted (Run started).
	holdMu  sync.Mutex
	holds   int64
	counted bool
}

type sourceSpec struct {
	name     string
	instance int
	task     SourceTask
	terminal int // index in the tracker, or -1
	meter    *Meter
	gone     *Retirement
}

type serviceSpec struct {
	name     string
	run      func(done <-chan struct{}) error
	unwaited bool        // a listener (AddListener)
	keep     func() bool // whether Run waits for the listener after all
}

type taskSpec struct {
	name     string
	instance int
	inbox    *Inbox
	task     InputTask
	terminal int // index in the tracker, or -1
	meter    *Meter
	// build, if set, makes the task afresh each time the instance joins
	// (AddRestartable).
	build func(first uint64) (InputTask, error)
}

// New returns an empty runtime.
func New(cfg Config) *Runtime {
	if cfg.Interval <= 0 {
		cfg.Interval = time.Second
	}
	if cfg.Registry == nil {
		cfg.Registry = metrics.NewRegistry(cfg.Process)
	}
	return &Runtime{cfg: cfg, done: make(chan struct{}), tracker: &tracker{}, meters: map[meterKey]*Meter{},
		finals: finals{note: make(chan struct{}, 1)}}
}

// Done is closed when the runtime stops, by error, cancellation or the end
// of all tasks.
func (r *Runtime) Done() <-chan struct{} { return r.done }

// Err returns the error that stopped the runtime, or nil.
func (r *Runtime) Err() error {
	r.errMu.Lock()
	defer r.errMu.Unlock()
	return r.err
}

// Records returns the number of records read by the sources so far.
func (r *Runtime) Records() int64 { return r.records.Load() }

// NewInbox makes the inbox of one task instance, holding up to depth
// messages.
func (r *Runtime) NewInbox(name string, instance, depth int) *Inbox {
	return &Inbox{rt: r, name: fmt.Sprintf("%s#%d", name, instance), depth: depth, ready: make(chan struct{}, 1),
		gone: r.Retirement(name, instance)}
}

// AddSource registers a source instance. A terminal source is one whose
// fused chain ends in sinks only, with no downstream task.
func (r *Runtime) AddSource(name string, instance int, t SourceTask, terminal bool) {
	s := &sourceSpec{name: name, instance: instance, task: t, terminal: -1, meter: r.Meter(name, instance),
		gone: r.Retirement(name, instance)}
	s.meter.M.Source = true
	if terminal {
		s.terminal = r.tracker.add()
	}
	r.sources = append(r.sources, s)
}

// AddTask registers an input task instance. A terminal task (one with no
// downstream task) reports the epochs it completes, which is how the runtime
// measures epoch latency.
func (r *Runtime) AddTask(name string, instance int, in *Inbox, t InputTask, terminal bool) {
	ts := &taskSpec{name: name, instance: instance, inbox: in, task: t, terminal: -1, meter: r.Meter(name, instance)}
	ts.meter.M.Queue = in.queued
	if terminal {
		ts.terminal = r.tracker.add()
	}
	r.tasks = append(r.tasks, ts)
}

// AddService registers a goroutine that runs beside the tasks: one that
// feeds an inbox from another process, say, or watches the network. It
// gets the runtime's done channel, which closes when the runtime stops (an
// error, cancellation) or once every task has ended; Run waits for it as
// for a task, and its error stops the job.
func (r *Runtime) AddService(name string, run func(done <-chan struct{}) error) {
	r.services = append(r.services, serviceSpec{name: name, run: run})
}

// AddListener registers a service, as AddService, that Run does not wait
// for once every task has ended (or the runtime stopped), unless it has
// a keep and a listener's keep then says to: one that may block on a peer
// with nothing more to say to this process, whose tasks no longer need
// it. Its error after that is none.
func (r *Runtime) AddListener(name string, run func(done <-chan struct{}) error, keep func() bool) {
	r.services = append(r.services, serviceSpec{name: name, run: run, keep: keep, unwaited: true})
}

// listen runs a listener: an error once the runtime is done is none.
func (r *Runtime) listen(run func(done <-chan struct{}) error) error {
	err := run(r.done)
	select {
	case <-r.done:
		return nil
	default:
		return err
	}
}

func (r *Runtime) fail(err error) {
	r.errMu.Lock()
	if r.err == nil {
		r.err = err
	}
	r.errMu.Unlock()
	r.once.Do(func() { close(r.done) })
}

// Stop stops the runtime as an error would: Run returns cause (unless an
// error came first).
func (r *Runtime) Stop(cause error) { r.fail(cause) }

// Run starts every task and waits until all have finished or one failed.
func (r *Runtime) Run(ctx context.Context) error {
	r.start = time.Now()
	if !r.cfg.Origin.IsZero() {
		r.start = r.cfg.Origin
	}
	r.startNs.Store(r.start.UnixNano())
	r.started.Store(true)
	r.tracker.onEpoch = r.cfg.OnEpoch
	var tasks, services sync.WaitGroup
	r.holdMu.Lock()
	r.active.Store(int64(len(r.tasks)+len(r.sources)) + r.holds)
	r.counted = true
	r.holdMu.Unlock()
	run := func(wg *sync.WaitGroup, name string, instance int, f func() error) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if wg == &tasks {
				defer r.pause() // once none runs, the runtime ends
			}
			defer func() {
				if p := recover(); p != nil {
					stack := runtimedebug.Stack()
					if sp, ok := p.(interface{ Stack() []byte }); ok {
						stack = sp.Stack() // where it was raised, before re-panics
					}
					r.fail(fmt.Errorf("%s#%d: panic: %v\n%s", name, instance, p, stack))
				}
			}()
			if err := f(); err != nil && !errors.Is(err, errStopped) && !errors.Is(err, errRetired) {
				r.fail(fmt.Errorf("%s#%d: %w", name, instance, err))
			}
			r.noteJoin() // its held final markers may go now
		}()
	}
	for _, t := range r.tasks {
		if t.build != nil {
			run(&tasks, t.name, t.instance, func() error { return r.runLives(t) })
			continue
		}
		run(&tasks, t.name, t.instance, func() error { return r.runTask(t, uint64(r.cfg.FirstEpoch)) })
	}
	for _, s := range r.sources {
		run(&tasks, s.name, s.instance, func() error { return r.runSource(s) })
	}
	// Listeners with a keep are waited for only if one of them says to;
	// the others are not waited for (AddListener).
	var listeners, unwaited sync.WaitGroup
	var kept []func() bool
	for i, s := range r.services {
		if s.unwaited {
			wg := &unwaited
			if s.keep != nil {
				wg = &listeners
				kept = append(kept, s.keep)
			}
			run(wg, s.name, i, func() error { return r.listen(s.run) })
			continue
		}
		run(&services, s.name, i, func() error { return s.run(r.done) })
	}
	var finals sync.WaitGroup // not waited for (finals.go)
	run(&finals, "finals", 0, func() error { return r.deliverFinals(r.done) })
	// Once every task has ended, done closes, which tells the services
	// that are still running (watchers) to return.
	finished := make(chan struct{})
	go func() {
		tasks.Wait()
		r.once.Do(func() { close(r.done) })
		services.Wait()
		if slices.ContainsFunc(kept, func(keep func() bool) bool { return keep() }) {
			listeners.Wait()
		}
		close(finished)
	}()
	select {
	case <-finished:
	case <-ctx.Done():
		r.fail(context.Cause(ctx))
		<-finished
	}
	r.once.Do(func() { close(r.done) })
	r.errMu.Lock()
	defer r.errMu.Unlock()
	return r.err
}

// WallEpoch is the epoch the clock is in (time-based epochs), once the
// runtime runs.
func (r *Runtime) WallEpoch() progress.Epoch {
	if r.cfg.Records > 0 || !r.started.Load() {
		return 0
	}
	start := r.startNs.Load()
	e := progress.Epoch(time.Since(time.Unix(0, start)) / r.cfg.Interval)
	if r.cfg.Origin.IsZero() {
		e += r.cfg.FirstEpoch
	}
	return e
}

// wallEpoch is the time-based epoch the clock is in.
func (r *Runtime) wallEpoch() progress.Epoch {
	e := progress.Epoch(time.Since(r.start) / r.cfg.Interval)
	if r.cfg.Origin.IsZero() {
		e += r.cfg.FirstEpoch
	}
	return e
}

var errStopped = errors.New("runtime: stopped")

// ErrEndOfInput is what SourceTask.Poll returns once its input has ended.
var ErrEndOfInput = errors.New("runtime: end of input")
