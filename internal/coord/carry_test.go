package coord_test

import (
	"errors"
	"fmt"

	"github.com/weirstream/weir/internal/checkpoint"
	"github.com/weirstream/weir/internal/coord"
)

var errInjected = errors.New("injected failure")

// fault reports, while faults are on, true one time in n.
func (s *sim) fault(n int) bool { return s.cfg.faults && s.ch.intn(n) == 0 }

// carryOut carries out the next action on p's to-do list, as the
// caller of a coordinator does, checking it against what the
// coordinator promises. A store request's answer is kept for deliver.
func (s *sim) carryOut(p *simProc) {
	if len(p.todo) == 0 {
		return
	}
	a := p.todo[0]
	p.todo = p.todo[1:]
	s.logf("process %d does %v", p.id, a)
	st := s.stores[p.id]
	switch a.(type) {
	case coord.WritePart, coord.CheckComplete, coord.CheckPart:
		if p.answer != nil {
			s.fatalf("process %d: %v asked while %T%+v is not answered", p.id, a, p.answer, p.answer)
		}
	}
	if _, ok := a.(coord.Commit); p.justDone != 0 && !ok {
		s.fatalf("process %d: completed %d, then %v instead of its commit", p.id, p.justDone, a)
	}
	switch a := a.(type) {
	case coord.WritePart:
		s.write(p, a.Part)
	case coord.CheckComplete:
		if a.Processes != s.cfg.procs {
			s.fatalf("process %d: %v for a job of %d processes", p.id, a, s.cfg.procs)
		}
		if s.fault(80) {
			p.answer, p.injected = coord.CompleteChecked{N: a.N, Err: errInjected}, true
			return
		}
		ok, err := st.complete(a.N)
		if err != nil {
			s.fatalf("process %d: %v", p.id, err)
		}
		p.yes[a.N] = p.yes[a.N] || ok
		p.answer = coord.CompleteChecked{N: a.N, Complete: ok}
	case coord.CheckPart:
		if s.fault(80) {
			p.answer, p.injected = coord.PartChecked{N: a.N, Process: a.Process, Err: errInjected}, true
			return
		}
		p.answer = coord.PartChecked{N: a.N, Process: a.Process, Has: st.has(a.N, a.Process)}
	case coord.Completed:
		s.completed(p, a.N)
	case coord.Commit:
		if a.N != p.justDone || a.N <= p.lastCmt || !st.ever[a.N] {
			s.fatalf("process %d: commit %d after completed %d, commit %d (ever complete: %v)", p.id, a.N, p.justDone, p.lastCmt, st.ever[a.N])
		}
		p.lastCmt, p.justDone = a.N, 0
	case coord.Prune:
		if a.Keep != s.cfg.keep {
			s.fatalf("process %d: %v, keep is %d", p.id, a, s.cfg.keep)
		}
		st.prune(a.Keep)
	case coord.TrimIncomplete:
		s.trim(p, a.Keep)
	case coord.WarnUnshared:
		if p.warned++; p.warned > 1 || p.lastDone > s.from {
			s.fatalf("process %d: warning %d, with checkpoint %d complete in a run from %d", p.id, p.warned, p.lastDone, s.from)
		}
	default:
		s.fatalf("process %d: unknown action %T", p.id, a)
	}
}

// completed checks that the store said n complete to p, and that
// completions come in order, after the checkpoint restored.
func (s *sim) completed(p *simProc, n uint64) {
	if !p.yes[n] || n <= p.lastDone || n <= s.from {
		s.fatalf("process %d: completed %d, store said %v, after completed %d, from %d", p.id, n, p.yes[n], p.lastDone, s.from)
	}
	if s.cfg.unshared && s.cfg.procs > 1 {
		s.fatalf("process %d: completed %d in a directory of its own", p.id, n)
	}
	p.lastDone, p.justDone = n, n
}

// trim carries out TrimIncomplete: only after the warning, keeping one
// more than the complete checkpoints kept.
func (s *sim) trim(p *simProc, keep int) {
	if keep != s.cfg.keep+1 || p.warned != 1 {
		s.fatalf("process %d: trim keeping %d, keep is %d, warned %d times", p.id, keep, s.cfg.keep, p.warned)
	}
	st := s.stores[p.id]
	st.trimIncomplete(keep)
	if s.cfg.unshared && len(st.dirs) > keep {
		s.fatalf("process %d: %d checkpoints left after the trim keeping %d", p.id, len(st.dirs), keep)
	}
}

// write checks a part against the naive model and what every part must
// hold, and writes it, or fails to (written or not).
func (s *sim) write(p *simProc, part checkpoint.Part) {
	if p.writes >= len(p.model.expect) {
		s.fatalf("process %d: %v, which the model does not write", p.id, coord.WritePart{Part: part})
	}
	if want := p.model.expect[p.writes]; !same(want, part) {
		s.fatalf("process %d: %v; the model writes %v", p.id, coord.WritePart{Part: part}, coord.WritePart{Part: want})
	}
	p.writes++
	s.checkContent(part, p)
	if part.Checkpoint <= s.from {
		s.fatalf("process %d: writes checkpoint %d in a run from %d", p.id, part.Checkpoint, s.from)
	}
	st, n := s.stores[p.id], part.Checkpoint
	ans := coord.PartWritten{N: n}
	switch {
	case s.fault(60): // nothing written
		ans.Err = errInjected
	case s.fault(80): // written, but the directory's sync failed
		s.mustWrite(p, part)
		ans.Err = errInjected
	default:
		s.mustWrite(p, part)
	}
	if ans.Err != nil {
		ans.Superseded = st.completedAfter(n)
		p.injected = p.injected || !ans.Superseded
	}
	p.answer = ans
}

func (s *sim) mustWrite(p *simProc, part checkpoint.Part) {
	if err := s.stores[p.id].writePart(part); err != nil {
		s.fatalf("process %d: %v", p.id, err)
	}
}

// checkContent checks that a part holds each of its process's tasks
// once: its report of the part's checkpoint, or its final state (when
// p is known, only of a task that ended).
func (s *sim) checkContent(part checkpoint.Part, p *simProc) {
	n, self := part.Checkpoint, part.Process
	if part.Epoch != n || part.Processes != s.cfg.procs || part.Meta["key_groups"] != fmt.Sprint(simGroups) {
		s.fatalf("part %v: wrong header", coord.WritePart{Part: part})
	}
	if len(part.State) != s.cfg.tasks || len(part.Sources) != s.cfg.tasks {
		s.fatalf("part %v: want one state and one source blob of each of %d tasks", coord.WritePart{Part: part}, s.cfg.tasks)
	}
	for t := range s.cfg.tasks {
		b, src := part.State[t], part.Sources[t]
		if b.Operator != "op" || b.KeyGroup != uint32(self*16+t) || src.Operator != "src" || src.Instance != t || string(b.Data) != string(src.Data) {
			s.fatalf("part %v: task %d's blobs are not there", coord.WritePart{Part: part}, t)
		}
		switch string(b.Data) {
		case fmt.Sprintf("p%dt%d@%d", self, t, n):
		case fmt.Sprintf("p%dt%d@end", self, t):
			if p != nil && !p.tasks[t].ended {
				s.fatalf("part %v: task %d's final state, and it has not ended", coord.WritePart{Part: part}, t)
			}
		default:
			s.fatalf("part %v: task %d's blob is of another checkpoint", coord.WritePart{Part: part}, t)
		}
	}
}

// end drains the job and checks what must hold once it is idle: nothing
// held in memory, every write the model makes made, and no checkpoint
// whose parts are all in the store left incomplete.
func (s *sim) end() {
	s.drain()
	for _, p := range s.procs {
		if p.c.Pending() != 0 || p.writes != len(p.model.expect) {
			s.fatalf("process %d: %d parts pending, %d of the model's %d writes made", p.id, p.c.Pending(), p.writes, len(p.model.expect))
		}
	}
	if s.cfg.unshared {
		return
	}
	latest, _ := s.stores[0].latest()
	for _, n := range s.stores[0].full() {
		if n > latest {
			s.fatalf("checkpoint %d has every part and is not complete (newest complete %d)", n, latest)
		}
	}
}
