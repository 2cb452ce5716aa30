package engine

import (
	"fmt"
	"hash/crc32"
	"maps"
	"sync"
	"sync/atomic"

	"github.com/weirstream/weir/internal/checkpoint"
	"github.com/weirstream/weir/internal/dataflow"
	"github.com/weirstream/weir/internal/migrate"
	"github.com/weirstream/weir/internal/partition"
)

// Checkpoint reuse (Madsen and Zhou): a key group whose blob the latest
// complete checkpoint holds leaves its old owner as a delta on that blob
// when the delta is smaller, and the new owner reads the blob from the
// checkpoint directory, which the processes share, and merges the two.

// reuse is a process's side of checkpoint reuse, and its figures.
type reuse struct {
	ckpt *coordinator // nil: no checkpoints, no reuse
	off  bool         // switched off (WithoutCheckpointReuse)
	// always sends a delta whenever there is a base, smaller or not (tests
	// set it, so that every kind of state goes through a merge).
	always bool
	whole  atomic.Int64 // bytes the state handed over would have taken whole
	mu     sync.Mutex
	deltas map[string]int64 // blobs handed over as deltas, by operator
}

// counted notes a blob of op handed over as a delta.
func (r *reuse) counted(op string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.deltas == nil {
		r.deltas = map[string]int64{}
	}
	r.deltas[op]++
}

// sent returns the blobs handed over as deltas so far, by operator.
func (r *reuse) sent() map[string]int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return maps.Clone(r.deltas)
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// base returns the checkpoint whose blobs the key groups handed over at
// a marker may travel as deltas on, given prev, the epoch of the aligned
// marker before it: the newest complete one, in this process's own
// checkpoint directory (not one a job started from in another), that the
// coordinator knows of or the directory holds a manifest of (a peer may
// have completed a newer one than this process has checked), if
// baseSafe says it is still there when the new owner reads it.
func (r *reuse) base(prev uint64) (uint64, bool) {
	c := r.ckpt
	if c == nil || r.off {
		return 0, false
	}
	_, n := c.progress()
	if n == c.from && !c.fromOwn {
		n = 0
	}
	if m, ok, err := c.store.NewestComplete(); err == nil && ok && m > n && m <= prev {
		n = m
	}
	return n, n > 0 && baseSafe(n, prev, c.every, c.keep)
}

// baseSafe says whether complete checkpoint n is still in the directory
// when the new owner of a key group handed over at the marker after
// epoch prev reads it there, at the same marker, for checkpoints taken
// every `every` epochs of which Prune keeps the newest keep complete
// ones. Prune removes n only once keep newer checkpoints are complete.
// Checkpoint m completes only once every task instance has reported it,
// which one does at its first aligned marker at or after m, and the new
// owner reports at this marker only after it has taken its key groups
// (its handover hook runs before its reporter). Every instance of the
// task aligns the markers of the same senders, so the new owner's marker
// before this one is prev too: only checkpoints after n up to prev can
// complete before it reads, and when fewer than keep of them are due
// (their numbers are the multiples of every), n is among the newest keep
// complete ones until then.
func baseSafe(n, prev, every uint64, keep int) bool {
	if n > prev {
		return false // not a checkpoint of this run's epochs
	}
	return prev/every-n/every < uint64(keep)
}

// deltas makes the parcels' blobs of the state an instance hands over at
// the marker after epoch prev to the owners of next (of par instances):
// each key group of an operator that can hand it as a delta goes as one
// when the base checkpoint holds its blob, the delta is smaller and the
// new owner runs in another process (migrate.Reuse), whole otherwise. An
// instance of this process is handed the blob in memory: a delta would
// save no transfer there and cost its reads and merge. A base that
// cannot be read here is as good as none: the blob goes whole.
func (x *handover) deltas(blobs []checkpoint.StateBlob, prev uint64, par int, next *partition.Table) ([]parcelBlob, error) {
	r := &x.h.reuse
	out := make([]parcelBlob, len(blobs))
	gains := false // some blob goes where a delta can pay
	for i, b := range blobs {
		out[i].StateBlob = b
		r.whole.Add(int64(len(b.Data)))
		gains = gains || r.always || !x.h.pl.local(next.Owner(partition.KeyGroup(b.KeyGroup)), par)
	}
	if !gains {
		return out, nil
	}
	n, ok := r.base(prev)
	if !ok {
		return out, nil
	}
	for _, s := range x.movers {
		if dm, ok := s.S.(dataflow.DeltaMover); ok {
			if err := x.opDeltas(s.Op, dm, out, n, par, next); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

// opDeltas turns into deltas on checkpoint n the blobs of out of operator
// op that migrate.Reuse says should go so.
func (x *handover) opDeltas(op string, dm dataflow.DeltaMover, out []parcelBlob, n uint64, par int, next *partition.Table) error {
	r := &x.h.reuse
	type cand struct {
		i     int // in out
		delta []byte
		crc   uint32
	}
	// A destination reads the checkpoint directory this process found n
	// complete in (every process's part is there); one in another
	// process gains by it.
	gains := func(to int, _ partition.KeyGroup) bool { return r.always || !x.h.pl.local(to, par) }
	var moves []migrate.Move
	state := make([]migrate.GroupState, x.groups)
	cands := map[uint32]cand{}
	for i, b := range out {
		if b.Operator != op {
			continue
		}
		kg := partition.KeyGroup(b.KeyGroup)
		mv := migrate.Move{KeyGroup: kg, From: x.inst, To: next.Owner(kg)}
		moves = append(moves, mv)
		st := &state[b.KeyGroup]
		st.Bytes = int64(len(b.Data))
		if !gains(mv.To, kg) {
			continue // whole: no need to read its base
		}
		base, found, err := r.ckpt.store.ReadBlob(n, op, b.KeyGroup)
		if err != nil {
			r.ckpt.log.Debug("weir: a key group goes whole: its checkpoint blob cannot be read", "checkpoint", n,
				"operator", op, "key_group", b.KeyGroup, "err", err)
			continue
		}
		if !found {
			continue
		}
		d, err := dm.DeltaKeyed(base, b.Data)
		if err != nil {
			return fmt.Errorf("weir: %s#%d: key group %d against checkpoint %d: %w", op, x.inst, b.KeyGroup, n, err)
		}
		st.InCheckpoint, st.Changed = true, int64(len(d))
		cands[b.KeyGroup] = cand{i, d, crc32.Checksum(base, castagnoli)}
	}
	ships, _, err := migrate.Reuse(moves, state, gains)
	if err != nil {
		return err
	}
	for _, sh := range ships {
		c, ok := cands[uint32(sh.Move.KeyGroup)]
		if !sh.Delta && !(r.always && ok) {
			continue
		}
		out[c.i].Data, out[c.i].Base, out[c.i].BaseCRC = c.delta, n, c.crc
		r.counted(op)
	}
	return nil
}

// merged returns the blobs of a parcel from instance from as RestoreKeyed
// takes them: a delta merged into its base, read from the checkpoint. A
// base that cannot be read, or is not the one the delta was taken on,
// fails the job: the state of the key group is then nowhere else, and a
// restart from the latest checkpoint recovers it.
func (x *handover) merged(from int, blobs []parcelBlob) ([]checkpoint.StateBlob, error) {
	out := make([]checkpoint.StateBlob, len(blobs))
	for i, b := range blobs {
		out[i] = b.StateBlob
		if b.Base == 0 {
			continue
		}
		fail := func(format string, args ...any) error {
			return fmt.Errorf("weir: %s#%d: key group %d of %s came from instance %d as a delta on checkpoint %d, "+format+
				"; the job must restart from its latest checkpoint", append([]any{x.task, x.inst, b.KeyGroup, b.Operator, from, b.Base}, args...)...)
		}
		if x.h.reuse.ckpt == nil {
			return nil, fail("but this process has no checkpoints")
		}
		base, found, err := x.h.reuse.ckpt.store.ReadBlob(b.Base, b.Operator, b.KeyGroup)
		switch {
		case err != nil:
			return nil, fail("which cannot be read here: %w", err)
		case !found:
			return nil, fail("which holds no blob of it here")
		case crc32.Checksum(base, castagnoli) != b.BaseCRC:
			return nil, fail("whose blob here has CRC %08x, not the sender's %08x", crc32.Checksum(base, castagnoli), b.BaseCRC)
		}
		var dm dataflow.DeltaMover
		for _, s := range x.movers {
			if s.Op == b.Operator {
				dm, _ = s.S.(dataflow.DeltaMover)
			}
		}
		if dm == nil {
			return nil, fail("which %s cannot merge", b.Operator)
		}
		if out[i].Data, err = dm.MergeKeyed(base, b.Data); err != nil {
			return nil, fail("which does not merge: %w", err)
		}
	}
	return out, nil
}
