package runtime

import (
	"context"
	"errors"
	"fmt"
	"io"
	runtimedebug "runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/weirstream/weir/internal/progress"
)

// SourceTask is one instance of a source with its fused chain.
type SourceTask interface {
	// Poll reads one batch and pushes it through the chain. It returns the
	// number of records read, and io.EOF at the end of the input.
	Poll() (int, error)
	// Mark ends an epoch: it passes the marker through the chain.
	Mark(m progress.Marker) error
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

// Config sets how sources cut epochs.
type Config struct {
	// Interval is the wall-clock length of an epoch (used when Records is 0).
	Interval time.Duration
	// Records, if positive, cuts an epoch every Records records per source
	// instance.
	Records int
	// OnEpoch, if set, is called (from a runtime goroutine) when an epoch has
	// ended at every terminal task.
	OnEpoch func(EpochStats)
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

// Message is what travels through an inbox: a batch or a marker.
type Message struct {
	Sender int
	Batch  any
	Marker progress.Marker
}

// Runtime runs tasks.
type Runtime struct {
	cfg     Config
	sources []*sourceSpec
	tasks   []*taskSpec
	done    chan struct{}
	once    sync.Once
	errMu   sync.Mutex
	err     error
	start   time.Time
	tracker *tracker
	// Records counts the records read by all sources.
	records atomic.Int64
}

type sourceSpec struct {
	name     string
	instance int
	task     SourceTask
	terminal int // index in the tracker, or -1
}

type taskSpec struct {
	name     string
	instance int
	inbox    *Inbox
	task     InputTask
	terminal int // index in the tracker, or -1
}

// New returns an empty runtime.
func New(cfg Config) *Runtime {
	if cfg.Interval <= 0 {
		cfg.Interval = time.Second
	}
	return &Runtime{cfg: cfg, done: make(chan struct{}), tracker: &tracker{}}
}

// Done is closed when the runtime stops, by error, cancellation or the end
// of all tasks.
func (r *Runtime) Done() <-chan struct{} { return r.done }

// Records returns the number of records read by the sources so far.
func (r *Runtime) Records() int64 { return r.records.Load() }

// NewInbox makes the inbox of one task instance, holding up to depth
// messages.
func (r *Runtime) NewInbox(name string, instance, depth int) *Inbox {
	return &Inbox{ch: make(chan Message, depth), rt: r, name: fmt.Sprintf("%s#%d", name, instance)}
}

// AddSource registers a source instance. A terminal source is one whose
// fused chain ends in sinks only, with no downstream task.
func (r *Runtime) AddSource(name string, instance int, t SourceTask, terminal bool) {
	s := &sourceSpec{name: name, instance: instance, task: t, terminal: -1}
	if terminal {
		s.terminal = r.tracker.add()
	}
	r.sources = append(r.sources, s)
}

// AddTask registers an input task instance. A terminal task (one with no
// downstream task) reports the epochs it completes, which is how the runtime
// measures epoch latency.
func (r *Runtime) AddTask(name string, instance int, in *Inbox, t InputTask, terminal bool) {
	ts := &taskSpec{name: name, instance: instance, inbox: in, task: t, terminal: -1}
	if terminal {
		ts.terminal = r.tracker.add()
	}
	r.tasks = append(r.tasks, ts)
}

func (r *Runtime) fail(err error) {
	r.errMu.Lock()
	if r.err == nil {
		r.err = err
	}
	r.errMu.Unlock()
	r.once.Do(func() { close(r.done) })
}

// Run starts every task and waits until all have finished or one failed.
func (r *Runtime) Run(ctx context.Context) error {
	r.start = time.Now()
	r.tracker.onEpoch = r.cfg.OnEpoch
	var wg sync.WaitGroup
	run := func(name string, instance int, f func() error) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() {
				if p := recover(); p != nil {
					r.fail(fmt.Errorf("%s#%d: panic: %v\n%s", name, instance, p, runtimedebug.Stack()))
				}
			}()
			if err := f(); err != nil && !errors.Is(err, errStopped) {
				r.fail(fmt.Errorf("%s#%d: %w", name, instance, err))
			}
		}()
	}
	for _, t := range r.tasks {
		run(t.name, t.instance, func() error { return r.runTask(t) })
	}
	for _, s := range r.sources {
		run(s.name, s.instance, func() error { return r.runSource(s) })
	}
	finished := make(chan struct{})
	go func() { wg.Wait(); close(finished) }()
	select {
	case <-finished:
	case <-ctx.Done():
		r.fail(ctx.Err())
		<-finished
	}
	r.once.Do(func() { close(r.done) })
	r.errMu.Lock()
	defer r.errMu.Unlock()
	return r.err
}

var errStopped = errors.New("runtime: stopped")

func (r *Runtime) runSource(s *sourceSpec) error {
	terminal := s.terminal
	var epoch progress.Epoch
	count := 0
	idle := 0
	mark := func(final bool) error {
		m := progress.Marker{Epoch: epoch, Watermark: progress.NoWatermark, Cut: time.Now().UnixNano(), Final: final}
		if final {
			m.Watermark = progress.MaxWatermark
		}
		if err := s.task.Mark(m); err != nil {
			return err
		}
		if terminal >= 0 {
			r.tracker.complete(terminal, m)
		}
		epoch++
		count = 0
		return nil
	}
	for {
		select {
		case <-r.done:
			return errStopped
		default:
		}
		n, err := s.task.Poll()
		if n > 0 {
			r.records.Add(int64(n))
			count += n
			idle = 0
		}
		if err == io.EOF {
			return mark(true)
		}
		if err != nil {
			return err
		}
		if r.cfg.Records > 0 {
			if count >= r.cfg.Records {
				if err := mark(false); err != nil {
					return err
				}
			}
		} else {
			now := time.Since(r.start)
			for progress.Epoch(now/r.cfg.Interval) > epoch {
				if err := mark(false); err != nil {
					return err
				}
			}
		}
		if n == 0 {
			idle++
			if idle > 1 {
				time.Sleep(time.Millisecond)
			}
		}
	}
}

func (r *Runtime) runTask(t *taskSpec) error {
	in := t.inbox
	al := progress.NewAligner(len(in.ports))
	var held [][]Message
	var handle func(m Message) error
	handle = func(m Message) error {
		if al.Ahead(m.Sender) {
			if held == nil {
				held = make([][]Message, len(in.ports))
			}
			held[m.Sender] = append(held[m.Sender], m)
			return nil
		}
		if m.Batch != nil {
			return t.task.Batch(in.ports[m.Sender], m.Batch)
		}
		out, ok := al.Mark(m.Sender, m.Marker)
		if !ok {
			return nil
		}
		if err := t.task.Mark(out); err != nil {
			return err
		}
		if t.terminal >= 0 {
			r.tracker.complete(t.terminal, out)
		}
		if held == nil {
			return nil
		}
		pending := held
		held = nil
		for _, q := range pending {
			for _, x := range q {
				if err := handle(x); err != nil {
					return err
				}
			}
		}
		return nil
	}
	if len(in.ports) == 0 {
		return fmt.Errorf("runtime: task %s has no senders", in.name)
	}
	for !al.Done() {
		select {
		case m := <-in.ch:
			if err := handle(m); err != nil {
				return err
			}
		case <-r.done:
			return errStopped
		}
	}
	return nil
}
