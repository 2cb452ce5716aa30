package runtime

import (
	"fmt"
	"time"

	"github.com/weirstream/weir/internal/progress"
	"github.com/weirstream/weir/internal/trace"
)

// The task loops measure as they go: one clock reading after each batch,
// marker or wait (never per record), with the time since the previous
// reading counted as busy or idle; outlets count the waits for output
// space inside busy stretches.

func (r *Runtime) runSource(s *sourceSpec) error {
	s.meter.Open()
	err := r.pollSource(s)
	s.meter.Close()
	if cerr := s.task.Close(); err == nil {
		err = cerr
	}
	return err
}

// step runs f as one busy stretch of m, an activity of kind k, and
// returns its error.
func step(m *Meter, k trace.Kind, f func() error) error {
	tracing := m.Tracing()
	if tracing {
		m.Begin(k, m.last)
	}
	err := f()
	t := Now()
	m.busy(t)
	if m.open {
		m.End(t)
	}
	return err
}

func (r *Runtime) pollSource(s *sourceSpec) error {
	terminal := s.terminal
	epoch := r.cfg.FirstEpoch
	count := 0
	idle := 0
	m := s.meter
	waiter, _ := s.task.(Waiter)
	backlog, _ := s.task.(Backlogger)
	var waited time.Duration
	// mark ends every epoch up to and including last.
	mark := func(last progress.Epoch, final bool) error {
		mk := progress.Marker{Epoch: last, Watermark: progress.NoWatermark, Cut: time.Now().UnixNano(), Final: final}
		if final {
			mk.Watermark = progress.MaxWatermark
		}
		// A retiring source ends without a watermark of its own: the
		// records it did not read are others' to read now.
		retire := !final && s.gone.ends(last)
		mk.Final = mk.Final || retire
		if err := step(m, trace.Alignment, func() error { return s.task.Mark(mk) }); err != nil {
			return err
		}
		m.M.Complete(uint64(mk.Epoch), mk.Watermark)
		if backlog != nil {
			// Once an epoch, off the path of every poll.
			if b, ok := backlog.Backlog(); ok {
				m.M.SetBacklog(b)
			}
		}
		m.Flush()
		r.instanceEpoch()
		if terminal >= 0 {
			r.tracker.complete(terminal, mk)
		}
		epoch = last + 1
		count = 0
		if retire {
			return errRetired
		}
		return nil
	}
	for {
		select {
		case <-r.done:
			return errStopped
		default:
		}
		limit := 0
		if r.cfg.Records > 0 {
			limit = r.cfg.Records - count
		}
		var n int
		err := step(m, trace.Processing, func() (err error) {
			n, err = s.task.Poll(limit)
			return err
		})
		if waiter != nil {
			if w := waiter.Waited(); w > waited {
				m.waited(int64(w - waited))
				waited = w
			}
		}
		if n > 0 {
			r.records.Add(int64(n))
			m.M.AddIn(n)
			count += n
			idle = 0
		}
		if err == ErrEndOfInput {
			return mark(epoch, true)
		}
		if err != nil {
			return err
		}
		if r.cfg.Records > 0 {
			if count >= r.cfg.Records {
				if err := mark(epoch, false); err != nil {
					return err
				}
			}
		} else if wall := r.wallEpoch(); wall > epoch {
			// One marker ends every epoch the clock has passed: a source
			// that fell behind catches up instead of sending empty epochs.
			if err := mark(wall-1, false); err != nil {
				return err
			}
		}
		if n == 0 {
			idle++
			if idle > 1 {
				time.Sleep(time.Millisecond)
				m.idle(Now(), m.Tracing())
			}
		}
	}
}

// runTask runs an input task instance from epoch first (the job's
// first, or the epoch a restartable instance joins at) to its end.
func (r *Runtime) runTask(t *taskSpec, first uint64) error {
	in := t.inbox
	n := len(in.chans)
	if n == 0 {
		return fmt.Errorf("runtime: task %s has no senders", in.name)
	}
	m := t.meter
	m.Open()
	defer m.Close()
	al := progress.NewAligner(n)
	at := make([]uint64, n)
	seen, err := in.joins(al, at, first, 0)
	if err != nil {
		return err
	}
	mark := func(s int, mk progress.Marker) error {
		// Senders that join take part before anything completes.
		if seen, err = in.joins(al, at, first, seen); err != nil {
			return err
		}
		out, ok := al.Mark(s, mk)
		if !ok {
			return nil
		}
		// A retiring instance's last marker is final (also if its senders
		// retire with it): receivers stop waiting for it. It keeps the
		// aligned watermark, so its own operators fire nothing early.
		retire := in.gone.ends(out.Epoch)
		out.Final = out.Final || retire
		if err := t.task.Mark(out); err != nil {
			return err
		}
		m.completed(t.task, out)
		m.Flush()
		r.instanceEpoch()
		if t.terminal >= 0 {
			r.tracker.complete(t.terminal, out)
		}
		if retire {
			return errRetired
		}
		return nil
	}
	handle := func(s int, msg Message) error {
		tracing, at := m.Tracing(), m.last
		if tracing {
			// The message may have been sent after the last mark: the
			// receive is now, and the loop's time since counts as busy.
			at = Now()
			m.busy(at)
		}
		in.recv(m, s, at, tracing)
		if msg.Batch != nil {
			m.M.AddIn(Records(msg.Batch))
			return step(m, trace.Processing, func() error { return t.task.Batch(in.ports[s], msg.Batch) })
		}
		return step(m, trace.Alignment, func() error { return mark(s, msg.Marker) })
	}
	if st, ok := t.task.(SequencedTask); ok {
		return r.runSequenced(in, m, al, st, handle)
	}
	next := 0
	for !al.Done() {
		// One message from each sender that is not ahead of the current
		// epoch, round robin; senders that are ahead are not read, so
		// they block when their channel fills up.
		got := false
		for k := 0; k < n; k++ {
			s := next + k
			if s >= n {
				s -= n
			}
			if al.Ahead(s) {
				continue
			}
			select {
			case msg := <-in.chans[s]:
				got = true
				if err := handle(s, msg); err != nil {
					return err
				}
			default:
			}
		}
		next++
		if next == n {
			next = 0
		}
		if got {
			continue
		}
		select {
		case <-in.ready:
			m.idle(Now(), m.Tracing())
		case <-r.done:
			return errStopped
		}
	}
	return nil
}

// runSequenced feeds a task that picks its sender. Senders forward a
// marker after their last message of an epoch, so when the wanted sender
// has ended the current epoch, everything the epoch holds has been read
// and the other senders owe only their markers; they are read until the
// epoch is aligned. A message other than a marker from them then would
// break the task's sequence, and is reported.
func (r *Runtime) runSequenced(in *Inbox, m *Meter, al *progress.Aligner, t SequencedTask, handle func(int, Message) error) error {
	recv := func(s int) (Message, error) {
		select {
		case msg := <-in.chans[s]:
			return msg, nil
		default:
		}
		select {
		case msg := <-in.chans[s]:
			m.idle(Now(), m.Tracing())
			return msg, nil
		case <-r.done:
			return Message{}, errStopped
		}
	}
	for !al.Done() {
		s := t.Next()
		if s < 0 || s >= len(in.chans) {
			return fmt.Errorf("runtime: task %s wants sender %d of %d", in.name, s, len(in.chans))
		}
		if !al.Ahead(s) {
			msg, err := recv(s)
			if err != nil {
				return err
			}
			if err := handle(s, msg); err != nil {
				return err
			}
			continue
		}
		current := al.Current()
		for o := range in.chans {
			if al.Done() || al.Current() != current {
				break
			}
			if al.Ahead(o) {
				continue
			}
			msg, err := recv(o)
			if err != nil {
				return err
			}
			if msg.Batch != nil {
				return fmt.Errorf("runtime: task %s: sender %d sent records of epoch %d out of turn", in.name, o, current)
			}
			if err := handle(o, msg); err != nil {
				return err
			}
		}
	}
	return nil
}

// instanceEpoch tells the job that an instance ended an epoch.
func (r *Runtime) instanceEpoch() {
	if r.cfg.OnInstanceEpoch != nil {
		r.cfg.OnInstanceEpoch()
	}
}
