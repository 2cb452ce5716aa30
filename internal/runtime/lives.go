package runtime

import (
	"errors"
	"sync"

	"github.com/weirstream/weir/internal/progress"
)

// An input task instance can end and start again while the runtime runs
// (AddRestartable): it takes part while its retirement says so, from a
// join epoch to a retirement, and again from each later join epoch. Each
// time it joins it gets a new task, made for its first epoch, and a new
// aligner over its inbox; while it takes no part its goroutine waits and
// it holds no task. The runtime ends once every instance that takes part
// has ended: a waiting one then ends too.

// lives wakes the instances that wait to take part again.
type lives struct {
	mu   sync.Mutex
	wake chan struct{} // closed at the next join set
}

// wait returns a channel closed at the next join set (or task ended).
func (l *lives) wait() <-chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.wake == nil {
		l.wake = make(chan struct{})
	}
	return l.wake
}

// wakeAll closes the channel wait returned.
func (l *lives) wakeAll() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.wake != nil {
		close(l.wake)
		l.wake = nil
	}
}

// AddRestartable registers instance instance of the input task name, as
// AddTask does, as one that takes part only while its retirement says so:
// it starts once it has joined (at once if it is not Absent), with the
// task build makes for its first epoch; it ends at its retirement, as any
// instance does; and it starts afresh, with a new task from build, each
// time it joins again at a later epoch (Retirement.Join). A receiver
// registers it with SenderFrom, so that it takes it back when it joins
// again, and a final marker sent or dropped towards it is held and sent
// again at each of its later joins (finals.go). Senders and receivers in
// other processes follow its retirement there (set alike), over pumps
// that serve it again.
func (r *Runtime) AddRestartable(name string, instance int, in *Inbox, build func(first uint64) (InputTask, error), terminal bool) {
	r.AddTask(name, instance, in, nil, terminal)
	t := r.tasks[len(r.tasks)-1]
	t.build = build
	in.restart = true
	t.meter.life = in.gone
}

// runLives runs a restartable instance's lives in turn, and waits
// between them.
func (r *Runtime) runLives(t *taskSpec) error {
	x := t.inbox.gone
	ran := uint64(never) // the join epoch of the last life
	waiting, started := false, false
	for {
		wake := r.lives.wait() // before the state is read: no join is missed
		j, f := x.Joins(), x.From()
		if j != never && f > j && (ran == never || j > ran) {
			if waiting {
				if !r.resume() {
					r.active.Add(1) // the caller's end counts it out again
					return nil
				}
				waiting = false
			}
			first := max(j, uint64(r.cfg.FirstEpoch))
			task, err := t.build(first)
			if err != nil {
				return err
			}
			t.task, ran, started = task, j, true
			if t.terminal >= 0 {
				r.tracker.join(t.terminal, progress.Epoch(first))
			}
			err = r.runTask(t, first)
			x.life.Store(j)
			if !errors.Is(err, errRetired) {
				return err
			}
			t.task = nil
			continue
		}
		if !waiting {
			waiting = true
			if !started {
				// Absent from the start: it counts as ended, at its
				// first epoch.
				started = true
				now := Now()
				t.meter.M.Start(now)
				t.meter.M.End(now)
				t.meter.closed.Store(true)
			}
			if t.terminal >= 0 {
				r.tracker.leave(t.terminal)
			}
			r.pause()
		}
		select {
		case <-wake:
		case <-r.done:
			r.active.Add(1)
			return nil
		}
	}
}

// pause counts out an instance that waits to take part again: once none
// takes part, the runtime ends.
func (r *Runtime) pause() {
	if r.active.Add(-1) == 0 {
		r.once.Do(func() { close(r.done) })
	}
}

// resume counts a waiting instance in again; false if the runtime has
// ended meanwhile.
func (r *Runtime) resume() bool {
	r.active.Add(1)
	select {
	case <-r.done:
		r.active.Add(-1)
		return false
	default:
		return true
	}
}

// Hold keeps the runtime from ending once no instance takes part, until
// the function it returns is called (once; later calls do nothing): a
// restartable instance that waits may still be joined (by a rescale a
// peer announces) while the job goes on elsewhere.
func (r *Runtime) Hold() (release func()) {
	r.holdMu.Lock()
	r.holds++
	r.holdMu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			r.holdMu.Lock()
			defer r.holdMu.Unlock()
			if !r.counted {
				r.holds--
				return
			}
			r.pause()
		})
	}
}
