package op

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"reflect"
	"time"

	"github.com/weirstream/weir/internal/dataflow"
	"github.com/weirstream/weir/internal/plan"
	"github.com/weirstream/weir/internal/progress"
	"github.com/weirstream/weir/internal/runtime"
)

// SourceOf adds a source to the graph.
func SourceOf[T any](j *dataflow.Graph, name string, src dataflow.Input[T], opts ...dataflow.Option) Stream[T] {
	c := dataflow.OpOptions(opts)
	if c.Name != "" {
		name = c.Name
	}
	n := j.Add(&dataflow.Node{Name: name, Op: "source", Kind: plan.Source, Par: c.Parallelism, ParSet: c.ParSet, Ports: singlePort[T]()})
	refuseOptions(j, n.Name, c, 0)
	n.Params, n.Source = "of "+dataflow.TypeList(reflect.TypeFor[T]()), dataflow.Identify(src)
	if c, ok := src.(dataflow.Counted); ok {
		j.Counted = append(j.Counted, c)
	}
	n.NewSource = func(tc dataflow.TaskCtx, outs []any) (runtime.SourceTask, error) {
		own := dataflow.SourceContext{Instance: tc.Inst, Parallelism: tc.Par}
		st := &sourceTask[T]{open: src.Open, own: own, out: outs[0].(dataflow.Pusher[T]), units: tc.Units, log: j.Logger()}
		share := own
		if tc.Share != nil {
			share = *tc.Share
		}
		if err := st.Reopen(share); err != nil {
			return nil, err
		}
		return st, nil
	}
	if rec, ok := src.(dataflow.Recoverable); ok {
		n.RecoverInput = rec.Recover
	}
	return Stream[T]{job: j, node: n}
}

type sourceTask[T any] struct {
	// open opens a reader of a share of the input; own is the instance's
	// own share, of as many as the source has instances.
	open func(dataflow.SourceContext) (dataflow.Reader[T], error)
	own  dataflow.SourceContext
	// r reads the instance's share, or is nil while it reads none.
	r    dataflow.Reader[T]
	out  dataflow.Pusher[T]
	b    dataflow.Batch[T]
	rest []T   // records of the last Read not pushed yet
	err  error // error of the last Read, returned once rest is pushed
	// units, in an ordered job, numbers the batches pushed: one unit each.
	units *dataflow.UnitCtx
	unit  int64
	// read is the length of the last Read's batch; after, in a job with
	// checkpoints, runs once the source has passed a marker.
	read int
	// pushed counts the records pushed, saved with the position so that
	// a restored job counts what came before.
	pushed int64
	after  func(progress.Marker) error
	// ackErr is the last failed acknowledgement's error, logged once.
	ackErr string
	log    *slog.Logger
	// waited is what the readers closed so far had waited.
	waited time.Duration
}

// Reopen closes the instance's reader, if any, and opens one of share
// ctx instead, or none if ctx.Parallelism is 0: the instance then reads
// nothing until it is given a share again.
func (s *sourceTask[T]) Reopen(ctx dataflow.SourceContext) error {
	if s.r != nil {
		s.waited = s.Waited()
		err := s.r.Close()
		s.r = nil
		if err != nil {
			return err
		}
	}
	s.rest, s.err, s.read = nil, nil, 0
	if ctx.Parallelism == 0 {
		return nil
	}
	r, err := s.open(ctx)
	if err != nil {
		return err
	}
	s.r = r
	return nil
}

// Reading reports whether the instance has a reader.
func (s *sourceTask[T]) Reading() bool { return s.r != nil }

// Movable reports whether the source's readers can say where they stand
// and resume the records other readers left (weir.Rescalable): its
// reader's answer or, while it reads nothing, that of a reader of its own
// share, opened and closed again to ask.
func (s *sourceTask[T]) Movable() bool {
	r := s.r
	if r == nil {
		pr, err := s.open(s.own)
		if err != nil {
			return false
		}
		defer pr.Close()
		r = pr
	}
	rs, ok := r.(dataflow.Rescalable)
	if !ok {
		return false
	}
	_, err := rs.Position(0)
	return err == nil
}

// Position is where the source stands: after the records it has pushed.
func (s *sourceTask[T]) Position() ([]byte, error) {
	r, ok := s.r.(dataflow.Seekable)
	if !ok {
		return nil, fmt.Errorf("weir: the reader %T cannot be checkpointed: it does not implement weir.Seekable", s.r)
	}
	return r.Position(s.read - len(s.rest))
}

// SeekSplits resumes the source at the unread records of a run with
// another parallelism.
func (s *sourceTask[T]) SeekSplits(pos [][]byte) error {
	r, ok := s.r.(dataflow.Rescalable)
	if !ok {
		return fmt.Errorf("weir: the reader %T cannot resume a run with another parallelism: it does not implement weir.Rescalable", s.r)
	}
	return r.SeekSplits(pos)
}

func (s *sourceTask[T]) SetAfter(f func(progress.Marker) error) { s.after = f }

func (s *sourceTask[T]) Count() int64 { return s.pushed }

// Seek resumes the source at a saved position.
func (s *sourceTask[T]) Seek(pos []byte) error {
	r, ok := s.r.(dataflow.Seekable)
	if !ok {
		return fmt.Errorf("weir: the reader %T cannot be checkpointed: it does not implement weir.Seekable", s.r)
	}
	return r.Seek(pos)
}

// Waited is the time the reader has waited for input (dataflow.Waiter),
// 0 if it does not say.
func (s *sourceTask[T]) Waited() time.Duration {
	if w, ok := s.r.(dataflow.Waiter); ok {
		return s.waited + w.Waited()
	}
	return s.waited
}

// Backlog is the records its reader could read now, those it read and
// has not passed on yet included (runtime.Backlogger); false if the
// reader does not say (dataflow.Backlogged).
func (s *sourceTask[T]) Backlog() (int64, bool) {
	b, ok := s.r.(dataflow.Backlogged)
	if !ok {
		return 0, false
	}
	return b.Backlog() + int64(len(s.rest)), true
}

func (s *sourceTask[T]) Poll(limit int) (int, error) {
	if s.r == nil {
		return 0, nil
	}
	if len(s.rest) == 0 {
		if s.err != nil {
			return 0, s.err
		}
		s.rest, s.err = s.r.Read()
		s.read = len(s.rest)
		if errors.Is(s.err, io.EOF) {
			s.err = runtime.ErrEndOfInput
		}
		if len(s.rest) == 0 {
			err := s.err
			s.err = nil
			if err == nil {
				return 0, nil
			}
			s.err = err // keep returning it
			return 0, err
		}
	}
	n := len(s.rest)
	if limit > 0 && n > limit {
		n = limit
	}
	s.b.V, s.b.Sel = s.rest[:n:n], nil
	s.rest = s.rest[n:]
	s.pushed += int64(n)
	if err := s.out.Push(&s.b); err != nil {
		return n, err
	}
	if s.units != nil {
		s.units.Unit = s.unit
		s.unit++
		return n, s.units.End()
	}
	return n, nil
}

func (s *sourceTask[T]) Mark(m progress.Marker) error {
	if err := s.out.Mark(m); err != nil {
		return err
	}
	if s.after != nil {
		return s.after(m)
	}
	if a, ok := s.r.(dataflow.Acknowledged); ok {
		// No checkpoints: what the source passed on before the marker is
		// acknowledged at once.
		if pos, err := s.Position(); err == nil {
			s.ackErr = ackOrLog(s.log, a, pos, s.ackErr)
		}
	}
	return nil
}

// Acker returns what acknowledges the current reader's positions
// (dataflow.Acknowledged), nil if it does not.
func (s *sourceTask[T]) Acker() func([]byte) error {
	if a, ok := s.r.(dataflow.Acknowledged); ok {
		return a.Acknowledge
	}
	return nil
}

// ackOrLog acknowledges pos, and logs a failure unless the last one
// failed alike (prev).
func ackOrLog(log *slog.Logger, a dataflow.Acknowledged, pos []byte, prev string) string {
	err := a.Acknowledge(pos)
	if err == nil {
		return ""
	}
	if msg := err.Error(); msg != prev {
		log.Warn("weir: a source could not acknowledge what it read", "err", err)
		return msg
	}
	return prev
}

func (s *sourceTask[T]) Close() error {
	if s.r == nil {
		return nil
	}
	return s.r.Close()
}
