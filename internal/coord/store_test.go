package coord_test

import (
	"fmt"
	"maps"
	"slices"

	"github.com/weirstream/weir/internal/checkpoint"
)

// fakeStore is a checkpoint directory in memory, as internal/checkpoint's
// Store behaves over a file system that never corrupts: a checkpoint is a
// directory of parts, complete once it has a manifest. It also remembers
// every checkpoint that was ever complete.
type fakeStore struct {
	procs int
	dirs  map[uint64]*fakeDir
	ever  map[uint64]bool
}

type fakeDir struct {
	parts    map[int]checkpoint.Part
	manifest bool
}

func newFakeStore(procs int) *fakeStore {
	return &fakeStore{procs: procs, dirs: map[uint64]*fakeDir{}, ever: map[uint64]bool{}}
}

// writePart stores p; a part of a complete checkpoint is refused.
func (s *fakeStore) writePart(p checkpoint.Part) error {
	d := s.dirs[p.Checkpoint]
	if d == nil {
		d = &fakeDir{parts: map[int]checkpoint.Part{}}
		s.dirs[p.Checkpoint] = d
	}
	if d.manifest {
		return fmt.Errorf("write part %d of checkpoint %d: the checkpoint is complete", p.Process, p.Checkpoint)
	}
	p.State, p.Sources = slices.Clone(p.State), slices.Clone(p.Sources)
	d.parts[p.Process] = p
	return nil
}

// complete writes n's manifest if every part is there and they agree.
func (s *fakeStore) complete(n uint64) (bool, error) {
	d := s.dirs[n]
	if d == nil {
		return false, nil
	}
	if d.manifest {
		return true, nil
	}
	for i := range s.procs {
		p, ok := d.parts[i]
		if !ok {
			return false, nil
		}
		if p.Checkpoint != n || p.Epoch != n || p.Process != i || p.Processes != s.procs {
			return false, fmt.Errorf("part %d of checkpoint %d disagrees: checkpoint %d epoch %d process %d of %d",
				i, n, p.Checkpoint, p.Epoch, p.Process, p.Processes)
		}
	}
	d.manifest, s.ever[n] = true, true
	return true, nil
}

// completedAfter reports whether a checkpoint newer than n is complete.
func (s *fakeStore) completedAfter(n uint64) bool {
	for m, d := range s.dirs {
		if m > n && d.manifest {
			return true
		}
	}
	return false
}

// has reports whether process's part of n is there, or n is complete, or
// n's directory is gone or empty (pruned: it was there).
func (s *fakeStore) has(n uint64, process int) bool {
	d := s.dirs[n]
	if d == nil || d.manifest || len(d.parts) == 0 {
		return true
	}
	_, ok := d.parts[process]
	return ok
}

func (s *fakeStore) newestFirst() []uint64 {
	ns := slices.Sorted(maps.Keys(s.dirs))
	slices.Reverse(ns)
	return ns
}

// prune keeps the newest keep complete checkpoints and what is newer
// than the newest complete one.
func (s *fakeStore) prune(keep int) {
	complete := 0
	for _, n := range s.newestFirst() {
		switch {
		case complete >= keep:
			delete(s.dirs, n)
		case s.dirs[n].manifest:
			complete++
		case complete > 0:
			delete(s.dirs, n)
		}
	}
}

// trimIncomplete keeps the newest keep of the incomplete checkpoints
// newer than the newest complete one.
func (s *fakeStore) trimIncomplete(keep int) {
	seen := 0
	for _, n := range s.newestFirst() {
		if s.dirs[n].manifest {
			return
		}
		if seen++; seen > keep {
			delete(s.dirs, n)
		}
	}
}

// latest returns the newest complete checkpoint.
func (s *fakeStore) latest() (uint64, bool) {
	for _, n := range s.newestFirst() {
		if s.dirs[n].manifest {
			return n, true
		}
	}
	return 0, false
}

// discardAfter removes every checkpoint newer than n.
func (s *fakeStore) discardAfter(n uint64) {
	for m := range s.dirs {
		if m > n {
			delete(s.dirs, m)
		}
	}
}

// full returns the checkpoints that hold every process's part.
func (s *fakeStore) full() []uint64 {
	var out []uint64
	for n, d := range s.dirs {
		if len(d.parts) == s.procs {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out
}
