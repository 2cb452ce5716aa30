package engine

import (
	"fmt"
	"time"

	"github.com/weirstream/weir/internal/dataflow"
	"github.com/weirstream/weir/internal/op"
	"github.com/weirstream/weir/internal/partition"
	"github.com/weirstream/weir/internal/plan"
	"github.com/weirstream/weir/internal/progress"
	"github.com/weirstream/weir/internal/runtime"
)

// readerTask is what the engine asks of a source task (internal/op's)
// whose shares move.
type readerTask interface {
	runtime.SourceTask
	Position() ([]byte, error)
	Seek([]byte) error
	SeekSplits([][]byte) error
	SetAfter(func(progress.Marker) error)
	Count() int64
	Reopen(dataflow.SourceContext) error
	Reading() bool
	Movable() bool
	Waited() time.Duration
	Backlog() (int64, bool)
	Acker() func([]byte) error
}

// shareTask is one instance of a movable source: it reads the share the
// schedule gives it, ends each epoch where the table changes, and there
// hands over and takes shares. An instance with no share, or whose reader
// has reached its end, ends epochs by the clock with idle markers, and
// ends once the source is done (every share of one table has ended), so
// that it can be given a share until then.
type shareTask struct {
	st   readerTask
	s    *splits
	src  *shareSource
	inst int
	cur  *partition.Table // the table the instance reads by
	in   uint64           // the epoch it reads for
	// share is its share in cur (-1: none); eof says its reader has
	// reached the end, and the note saying so is filed.
	share   int
	eof     bool
	started bool
	// wms are the EventTime operators fused into the task.
	wms []namedWatermark
	// saves says the job takes checkpoints; report is what one at the
	// marker being passed saves: the share read until then (-1: none) of
	// the table from epoch from, and its reader's position.
	saves  bool
	report struct {
		share int
		from  uint64
		pos   []byte
		err   error
		ack   func([]byte) error
	}
}

type namedWatermark struct {
	op string
	w  op.SourceWatermark
}

// newShareTask wraps source task st, instance inst of src, made to read
// its share of the table in force at epoch 0 and entering epoch first.
func (s *splits) newShareTask(st readerTask, src *shareSource, inst int, first uint64, snaps []dataflow.SnapEntry) *shareTask {
	x := &shareTask{st: st, s: s, src: src, inst: inst, in: first, cur: src.sched.At(0)}
	x.share = shareOf(x.cur, inst)
	src.sched.Enter(first)
	for _, e := range snaps {
		if w, ok := e.S.(op.SourceWatermark); ok {
			x.wms = append(x.wms, namedWatermark{e.Op, w})
		}
	}
	src.probe(st.Movable())
	s.live.Add(1)
	return x
}

// shareCtx is the context of instance inst's reader by table t, if any.
func shareCtx(t *partition.Table, inst int) *dataflow.SourceContext {
	i := shareOf(t, inst)
	if i < 0 {
		return &dataflow.SourceContext{}
	}
	return &dataflow.SourceContext{Instance: i, Parallelism: t.Groups()}
}

func (x *shareTask) Poll(limit int) (int, error) {
	if !x.started {
		// A restored job may resume before a change its checkpoint had
		// scheduled: carry it out before reading.
		x.started = true
		for _, t := range x.src.sched.Tables(0)[1:] {
			if t.From > x.in {
				break
			}
			if err := x.move(t); err != nil {
				return 0, err
			}
		}
	}
	if x.share < 0 || x.eof {
		if x.s.box.isDone(x.src.name) {
			return 0, runtime.ErrEndOfInput
		}
		return 0, nil
	}
	n, err := x.st.Poll(limit)
	if err == runtime.ErrEndOfInput {
		pos, perr := x.position()
		if perr != nil {
			return n, perr
		}
		x.eof = true
		x.file(shareNote{pos: pos, ended: true})
		return n, nil
	}
	return n, err
}

// position is where the instance's reader stands; a reader that cannot
// say (a source that is not weir.Seekable) reports none, which only a
// move would need, and a move refuses such a source.
func (x *shareTask) position() ([]byte, error) {
	if !x.src.canMove() {
		return nil, nil
	}
	return x.st.Position()
}

// file files, here and at the peers, the note of the instance's share.
func (x *shareTask) file(n shareNote) {
	n.shares = x.cur.Groups()
	for _, w := range x.wms {
		n.wms = append(n.wms, opWatermark{w.op, w.w.PendingWatermark()})
	}
	k := noteKey{source: x.src.name, from: x.cur.From, share: x.share}
	x.s.box.put(k, n)
	x.s.broadcast(k, n)
}

func (x *shareTask) Mark(m progress.Marker) error {
	if m.Final {
		x.keep()
		if err := x.st.Mark(m); err != nil {
			return err
		}
		return x.s.ended()
	}
	e := uint64(m.Epoch)
	sched := x.src.sched
	if sched.Enter(e+1) == x.cur {
		// No change up to the next epoch (the common case).
		return x.pass(m, nil)
	}
	for _, t := range sched.Tables(x.in)[1:] {
		if t.From > e+1 {
			break
		}
		// End the epochs before the change with a marker of their own,
		// so that every instance passes each change at the same epoch.
		sub := m
		sub.Epoch = progress.Epoch(t.From - 1)
		if err := x.pass(sub, t); err != nil {
			return err
		}
	}
	if x.in <= e {
		if err := x.pass(m, nil); err != nil {
			return err
		}
	}
	return nil
}

// pass ends the epochs up to m's, moving the instance's share to table
// next (if not nil) first: a checkpoint at m saves the share and position
// of before the move (it covers the records up to m), and the receivers
// see the marker with the watermark of after it.
func (x *shareTask) pass(m progress.Marker, next *partition.Table) error {
	x.keep()
	m.Idle = x.share < 0 || x.eof
	if next != nil {
		if err := x.move(next); err != nil {
			return err
		}
	}
	x.in = uint64(m.Epoch) + 1
	return x.st.Mark(m)
}

// keep notes what a checkpoint at the marker being passed saves.
func (x *shareTask) keep() {
	if !x.saves {
		return
	}
	x.report.share, x.report.from, x.report.pos, x.report.err, x.report.ack = x.share, x.cur.From, nil, nil, nil
	if x.share >= 0 {
		x.report.pos, x.report.err = x.st.Position()
		x.report.ack = x.st.Acker()
	}
}

// reportAcker is what acknowledges the position a checkpoint saves.
func (x *shareTask) reportAcker() func([]byte) error { return x.report.ack }

// reportPos is the position a checkpoint saves, and the share it is of.
func (x *shareTask) reportPos() (int, []byte, error) {
	return x.report.share, x.report.pos, x.report.err
}

// move hands over the share the instance read by its table and takes
// the one it reads by next, in force from next.From: the old readers
// file their positions, the new ones wait for all of them, open a reader
// of their share and resume what the old ones left, at the lowest of
// their watermarks.
func (x *shareTask) move(next *partition.Table) error {
	old := x.cur
	defer func() { x.cur = next }()
	mine := shareOf(next, x.inst)
	if x.share >= 0 && !x.eof {
		pos, err := x.st.Position()
		if err != nil {
			return x.errorf("handing over share %d of %d: %w", x.share, old.Groups(), err)
		}
		x.file(shareNote{pos: pos})
	}
	if mine == x.share && mine >= 0 && old.Groups() == next.Groups() && !x.eof {
		return nil // the same reader goes on
	}
	x.share, x.eof = mine, false
	if mine < 0 {
		return x.st.Reopen(dataflow.SourceContext{})
	}
	notes, err := x.s.box.take(x.src.name, old.From, old.Groups(), x.s.done)
	if err != nil {
		return err
	}
	if notes == nil {
		// Every record has been read: nothing to take over.
		x.share = -1
		return x.st.Reopen(dataflow.SourceContext{})
	}
	if err := x.st.Reopen(dataflow.SourceContext{Instance: mine, Parallelism: next.Groups()}); err != nil {
		return x.errorf("opening share %d of %d: %w", mine, next.Groups(), err)
	}
	pos := make([][]byte, len(notes))
	for i, n := range notes {
		pos[i] = n.pos
	}
	if err := x.st.SeekSplits(pos); err != nil {
		return x.errorf("taking over share %d of %d from %d shares: %w", mine, next.Groups(), old.Groups(), err)
	}
	x.resume(notes)
	return nil
}

// resume starts the watermark of each EventTime fused into the task at
// the lowest of the old readers' that had records left, whose records it
// may now read: no receiver's watermark is above that (they held it), so
// what the records' times were to the old readers they are to the new.
func (x *shareTask) resume(notes []shareNote) {
	for _, w := range x.wms {
		low, any := int64(0), false
		for _, n := range notes {
			if n.ended {
				continue
			}
			for _, o := range n.wms {
				if o.op == w.op && (!any || o.wm < low) {
					low, any = o.wm, true
				}
			}
		}
		if any {
			w.w.ResumeWatermark(low)
		}
	}
}

func (x *shareTask) errorf(format string, args ...any) error {
	return fmt.Errorf("weir: source %s#%d: %w", x.src.name, x.inst, fmt.Errorf(format, args...))
}

func (x *shareTask) Close() error          { return x.st.Close() }
func (x *shareTask) Waited() time.Duration { return x.st.Waited() }

// Backlog is the reader's backlog (runtime.Backlogger).
func (x *shareTask) Backlog() (int64, bool) { return x.st.Backlog() }

// startShares makes instance inst of movable source src (task t, the
// ti-th) and adds it to the runtime.
func (w *wiring) startShares(src *shareSource, ti int, t plan.Task, inst int, tc dataflow.TaskCtx, outs []any, snaps []dataflow.SnapEntry) error {
	j, n := w.j, w.j.Nodes[t.Head]
	tc.Share = shareCtx(src.sched.At(0), inst)
	st, err := n.NewSource(tc, outs)
	if err != nil {
		return fmt.Errorf("%s#%d: %w", n.Name, inst, err)
	}
	rt, ok := st.(readerTask)
	if !ok {
		st.Close()
		return fmt.Errorf("weir: source %s: its task cannot move its reader", n.Name)
	}
	x := j.splits.newShareTask(rt, src, inst, j.firstEpoch(), snaps)
	w.opened = append(w.opened, x)
	if j.coord != nil {
		if err := j.checkpointShares(x, inst, t.Parallelism, snaps); err != nil {
			return fmt.Errorf("%s#%d: %w", n.Name, inst, err)
		}
	}
	w.rt.AddSource(w.runName(n.Id), inst, x, !w.hasRemote[ti])
	return nil
}
