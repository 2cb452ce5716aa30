package engine

import (
	"encoding/binary"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/weirstream/weir/internal/checkpoint"
	"github.com/weirstream/weir/internal/coord"
	"github.com/weirstream/weir/internal/dataflow"
	"github.com/weirstream/weir/internal/exchange"
	"github.com/weirstream/weir/internal/op"
	"github.com/weirstream/weir/internal/partition"
	"github.com/weirstream/weir/internal/progress"
	"github.com/weirstream/weir/internal/runtime"
)

// reporter takes one task instance's share of each checkpoint: after the
// task has passed a checkpoint's marker, it saves the task's snapshotters
// (and a source's position) and sends them to the checkpoint service.
type reporter struct {
	c      *coordinator
	id     coord.TaskID
	last   uint64
	inst   int
	snaps  []dataflow.SnapEntry
	source *sourcePos
	// gone is the instance's retirement: a retiring instance's final
	// marker still ends its share of the checkpoint due then.
	gone *runtime.Retirement
}

// sourcePos is how a source task's position is saved: pos returns it
// with the index it is saved at (the instance's, or the share's it
// reads; below 0, the instance reads nothing and saves none).
type sourcePos struct {
	op    string
	pos   func() (int, []byte, error)
	count func() int64 // records read
	// acker, if set, returns what acknowledges the reader's position
	// (nil if its reader does not).
	acker func() func([]byte) error
}

// recordsSuffix names a source instance's count of records read.
const recordsSuffix = "#records"

func (r *reporter) after(m progress.Marker) error {
	if m.Final && r.gone != nil && r.gone.Retiring(m.Epoch) {
		// Its process leaves: the instance takes part in the
		// checkpoints of the epochs before it retires, not later ones.
		last := m
		last.Final, last.Epoch = false, min(m.Epoch, progress.Epoch(r.gone.From()-1))
		if err := r.report(last); err != nil {
			return err
		}
	}
	if m.Final {
		// The task is done: its final state goes into every later
		// checkpoint of this process, which no longer waits for it.
		state, insts, err := r.collect(0, true)
		if err != nil {
			return err
		}
		r.c.send(coord.Finish{Task: r.id, State: state, Sources: insts})
		return nil
	}
	return r.report(m)
}

// report saves the task's share of the checkpoint due at marker m, if
// one is.
func (r *reporter) report(m progress.Marker) error {
	n, ok := coord.Due(r.c.every, r.last, m)
	if !ok {
		return nil
	}
	r.last = n
	if !r.c.gate.take(n) {
		return nil
	}
	if r.c.reg != nil {
		r.c.reg.CheckpointReported(n, uint64(m.Epoch), runtime.Now())
	}
	state, insts, err := r.collect(n, false)
	if err != nil {
		return err
	}
	r.c.send(coord.Report{Task: r.id, N: n, State: state, Sources: insts})
	return nil
}

// collect saves the task's state for checkpoint n (or, final, for every
// checkpoint after the task's end: two-phase outputs then have nothing
// left to prepare).
func (r *reporter) collect(n uint64, final bool) ([]checkpoint.StateBlob, []checkpoint.SourceBlob, error) {
	var state []checkpoint.StateBlob
	var insts []checkpoint.SourceBlob
	var err error
	for _, s := range r.snaps {
		switch x := s.S.(type) {
		case *committer:
			if final {
				continue
			}
			data, err := x.prepare(n)
			if err != nil {
				return nil, nil, fmt.Errorf("weir: %s: preparing checkpoint %d: %w", s.Op, n, err)
			}
			insts = append(insts, checkpoint.SourceBlob{Operator: s.Op, Instance: r.inst, Data: data})
		case dataflow.KeyedSnapshotter:
			if state, err = x.SnapshotKeyed(s.Op, r.c.groups, state); err != nil {
				return nil, nil, err
			}
			if w, ok := x.(op.Watermarked); ok {
				// Also per instance: an instance with no keyed state to
				// save still has its watermark.
				insts = append(insts, checkpoint.SourceBlob{Operator: s.Op + op.WmSuffix, Instance: r.inst, Data: binary.AppendVarint(nil, w.Watermark())})
			}
		case dataflow.InstanceSnapshotter:
			data, err := x.SnapshotInstance()
			if err != nil {
				return nil, nil, fmt.Errorf("weir: %s: saving state: %w", s.Op, err)
			}
			insts = append(insts, checkpoint.SourceBlob{Operator: s.Op, Instance: r.inst, Data: data})
		}
	}
	if r.source != nil {
		at, data, err := r.source.pos()
		if err != nil {
			return nil, nil, err
		}
		if at >= 0 {
			insts = append(insts, checkpoint.SourceBlob{Operator: r.source.op, Instance: at, Data: data})
			r.noteAck(n, final, at, data)
		}
		insts = append(insts, checkpoint.SourceBlob{Operator: r.source.op + recordsSuffix, Instance: r.inst, Data: binary.AppendVarint(nil, r.source.count())})
	}
	return state, insts, nil
}

// noteAck keeps a source's position for checkpoint n, to acknowledge
// once it is complete: a final position goes into every checkpoint after
// the last the task reported to.
func (r *reporter) noteAck(n uint64, final bool, at int, pos []byte) {
	if r.source.acker == nil {
		return
	}
	ack := r.source.acker()
	if ack == nil {
		return
	}
	if final {
		n = r.last + 1
	}
	r.c.acks.add(n, r.source.op, at, ack, pos)
}

// restore gives the task's snapshotters their state from the checkpoint
// the job started from: keyed state of the key groups the instance owns
// (of par instances, by rt), instance state by index.
func (r *reporter) restore(par int, rt *partition.Table) error {
	if r.c.restored == nil {
		return nil
	}
	owned := rt.Owned(r.inst)
	for _, s := range r.snaps {
		var err error
		switch x := s.S.(type) {
		case *committer:
			continue // recovered when registered
		case dataflow.KeyedSnapshotter:
			err = x.RestoreKeyed(r.c.restoredKeyed(s.Op, owned))
			if w, ok := x.(op.Watermarked); ok && err == nil {
				// Every instance of an operator aligns the same senders'
				// markers, so they saved one watermark.
				for _, data := range r.c.allInstances(s.Op + op.WmSuffix) {
					rd := &exchange.Reader{B: data}
					if wm := rd.Varint(); rd.Done() == nil {
						w.RestoreWatermark(wm)
					}
				}
			}
		case dataflow.InstanceSnapshotter:
			if old := r.c.instances[s.Op]; old != par && old > 0 {
				m, ok := x.(dataflow.InstanceMerger)
				if !ok {
					return fmt.Errorf("weir: %s#%d: checkpoint %d was taken with %d instances of it, and its state cannot be split over %d", s.Op, r.inst, r.c.from, old, par)
				}
				err = m.RestoreInstances(r.c.allInstances(s.Op))
			} else if data, ok := r.c.restoredInstance(s.Op, r.inst); ok {
				err = x.RestoreInstance(data)
			}
		}
		if err != nil {
			return fmt.Errorf("weir: %s#%d: restoring checkpoint %d: %w", s.Op, r.inst, r.c.from, err)
		}
	}
	return nil
}

// markHook calls after once the task has passed a marker.
type markHook struct {
	runtime.InputTask
	after func(progress.Marker) error
}

func (h *markHook) Mark(m progress.Marker) error {
	if err := h.InputTask.Mark(m); err != nil {
		return err
	}
	return h.after(m)
}

// Round passes on the hooked task's round figures (runtime.RoundTask).
func (h *markHook) Round() (int64, time.Duration) {
	if r, ok := h.InputTask.(runtime.RoundTask); ok {
		return r.Round()
	}
	return 0, 0
}

// seqMarkHook is a markHook over a sequenced task.
type seqMarkHook struct {
	*markHook
	seq runtime.SequencedTask
}

func (h seqMarkHook) Next() int { return h.seq.Next() }

func hookMarks(t runtime.InputTask, after func(progress.Marker) error) runtime.InputTask {
	h := &markHook{InputTask: t, after: after}
	if s, ok := t.(runtime.SequencedTask); ok {
		return seqMarkHook{h, s}
	}
	return h
}

// startedFrom reports whether the job's checkpoint directory records that
// a run already started from cfg.from (and so has checkpoints of its own
// after it). Only the OS file system keeps that record.
func (j *Job) startedFrom(cfg *dataflow.CkptConfig) bool {
	if cfg.Fs != nil {
		return false
	}
	b, err := os.ReadFile(filepath.Join(cfg.Dir, startedFromFile))
	return err == nil && string(b) == cfg.From
}

func (j *Job) markStartedFrom(cfg *dataflow.CkptConfig) error {
	if cfg.Fs != nil || j.Process() != 0 {
		return nil
	}
	return os.WriteFile(filepath.Join(cfg.Dir, startedFromFile), []byte(cfg.From), 0o644)
}

// startedFromFile, in a checkpoint directory, names the checkpoint the
// run that writes there started from.
const startedFromFile = "STARTED-FROM"

// openCheckpoints opens the job's checkpoint store and loads the latest
// complete checkpoint, if any, for process self of procs. Checkpoints
// newer than it (incomplete, from a run that failed) are discarded; this
// happens before the processes connect, so no process of this run has
// written one yet.
func (j *Job) openCheckpoints(self, procs int) (*coordinator, error) {
	cfg := j.Cfg.Ckpt
	for _, n := range j.Nodes {
		if n.UserState {
			return nil, fmt.Errorf("weir: %s keeps state of its own, which checkpoints cannot save: declare it Stateless, or keep per-key state with Process", n.Name)
		}
	}
	log := j.Cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	fs := cfg.Fs
	if fs == nil {
		fs = checkpoint.OSFS()
	}
	if cfg.From != "" {
		// Before anything is created: a chosen checkpoint must be there.
		if _, err := fs.ReadFile(filepath.Join(cfg.From, "MANIFEST")); err != nil {
			return nil, fmt.Errorf("weir: cannot start from checkpoint %s: it is not a complete checkpoint: %w", cfg.From, err)
		}
	}
	store, err := checkpoint.Open(fs, cfg.Dir, log)
	if err != nil {
		return nil, err
	}
	if err := j.claimDir(store, self, procs, log); err != nil {
		return nil, err
	}
	c := &coordinator{store: store, every: cfg.Every, keep: cfg.Keep, self: self, procs: procs,
		groups: j.Cfg.KeyGroups, log: log}
	j.setGate(c)
	if j.Cfg.Cluster.Joining() {
		// A process that joins a running job restores nothing (it starts
		// with the schedules process 0 sends) and leaves the store to
		// the job's other processes as it is.
		return c, nil
	}
	n, ok, err := store.Latest()
	if err != nil {
		return nil, err
	}
	from := store
	if cfg.From != "" {
		nFrom, okFrom := checkpoint.ParseDir(filepath.Base(cfg.From))
		if !okFrom {
			return nil, fmt.Errorf("weir: %s is not a checkpoint directory (chk-N)", cfg.From)
		}
		// A restart of a run that started from the chosen checkpoint
		// (launch --restart repeats the flag) resumes that run's own
		// latest checkpoint once it has one.
		if !(j.startedFrom(cfg) && ok && n > nFrom) {
			n, ok = nFrom, true
			if from, err = checkpoint.Open(fs, filepath.Dir(cfg.From), log); err != nil {
				return nil, err
			}
			if err := j.markStartedFrom(cfg); err != nil {
				return nil, err
			}
		}
	}
	parts, n, ok, err := readBack(store, from, n, ok, log)
	if err != nil || !ok {
		return c, err
	}
	c.from, c.fromOwn, c.restored = n, from == store, map[dataflow.BlobKey][]byte{}
	c.instances = map[string]int{}
	for _, p := range parts {
		if kg := p.Meta["key_groups"]; kg != fmt.Sprint(c.groups) {
			return nil, fmt.Errorf("weir: checkpoint %d in %s was taken with %s key groups; this job has %d", n, from.Dir(), kg, c.groups)
		}
		for _, b := range p.State {
			c.restored[dataflow.BlobKey{Op: b.Operator, Inst: -1, Kg: b.KeyGroup}] = b.Data
		}
		for _, b := range p.Sources {
			if strings.HasSuffix(b.Operator, recordsSuffix) {
				rd := &exchange.Reader{B: b.Data}
				if v := rd.Varint(); rd.Done() == nil {
					c.records += v
				}
			}
			c.restored[dataflow.BlobKey{Op: b.Operator, Inst: b.Instance}] = b.Data
			c.instances[b.Operator] = max(c.instances[b.Operator], b.Instance+1)
		}
	}
	log.Info("weir: restoring checkpoint", "checkpoint", n, "dir", cfg.Dir, "parts", len(parts))
	return c, nil
}

// readBack discards the checkpoints after n in store and reads n back
// whole from from (store, or the directory of a checkpoint the job was
// told to start from). Latest checks each part's size, checksum and
// header; a part of store's that passes and still does not decode (a
// writer's bug) makes it go back to the checkpoint before, as Latest
// does for one that fails its checks, so that the job restarts at all.
func readBack(store, from *checkpoint.Store, n uint64, ok bool, log *slog.Logger) ([]checkpoint.Part, uint64, bool, error) {
	for {
		if err := store.DiscardAfter(n); err != nil || !ok {
			return nil, n, false, err
		}
		parts, err := from.ReadAll(n)
		if err == nil || from != store || !checkpoint.Unusable(err) {
			return parts, n, err == nil, err
		}
		log.Warn("weir: checkpoint cannot be read back; restoring the one before", "checkpoint", n, "err", err)
		if n, ok, err = store.LatestBefore(n); err != nil {
			return nil, n, false, err
		}
	}
}
