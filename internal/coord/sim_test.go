package coord_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/weirstream/weir/internal/checkpoint"
	"github.com/weirstream/weir/internal/coord"
	"github.com/weirstream/weir/internal/progress"
)

// chooser is where a simulation's choices come from: a seeded generator,
// or a fuzzer's bytes.
type chooser interface {
	intn(n int) int
	done() bool
}

// simConfig is the shape of a simulated job.
type simConfig struct {
	procs, tasks int // processes, tasks per process
	every        uint64
	keep         int
	unshared     bool // a store per process instead of one shared
	faults       bool // failed writes and checks, crashes
	steady       bool // tasks pass each epoch's marker in turn, and end when the job does
}

const simGroups = 64

// sim runs a job's processes, each with its own coordinator, over fake
// stores, in an order the chooser picks, and checks what they do.
type sim struct {
	t      testing.TB
	ch     chooser
	cfg    simConfig
	stores []*fakeStore // one per process; all the same one if shared
	procs  []*simProc
	from   uint64 // the checkpoint the current run restored
	runs   int
	// midway counts the crashes that came between an action and its
	// answer, or before actions handed over were carried out.
	midway int
	trace  []traced // the last steps, formatted only if the test fails
}

type traced struct {
	format string
	args   []any
}

// simProc is one process: its coordinator, its tasks, the actions Ready
// gave that are not carried out yet, and the answer to the store request
// carried out that is not stepped yet.
type simProc struct {
	id       int
	c        *coord.Coordinator
	tasks    []*simTask
	todo     []coord.Action
	answer   coord.Event
	injected bool // a failure was injected that may end the run
	model    *naive
	writes   int             // WriteParts carried out this run
	yes      map[uint64]bool // what the store said complete to it this run
	lastDone uint64          // newest Completed this run
	lastCmt  uint64          // newest Commit this run
	justDone uint64          // the Completed that the next action may commit
	warned   int
}

type simTask struct {
	epoch, last uint64
	ended       bool
}

func newSim(t testing.TB, ch chooser, cfg simConfig) *sim {
	s := &sim{t: t, ch: ch, cfg: cfg}
	shared := newFakeStore(cfg.procs)
	for range cfg.procs {
		if cfg.unshared {
			s.stores = append(s.stores, newFakeStore(cfg.procs))
		} else {
			s.stores = append(s.stores, shared)
		}
	}
	s.start()
	return s
}

func (s *sim) logf(format string, args ...any) {
	if len(s.trace) == 60 {
		s.trace = append(s.trace[:0], s.trace[30:]...)
	}
	s.trace = append(s.trace, traced{format, args})
}

func (s *sim) fatalf(format string, args ...any) {
	s.t.Helper()
	var steps []string
	for _, e := range s.trace {
		steps = append(steps, fmt.Sprintf(e.format, e.args...))
	}
	s.t.Fatalf("%+v: %s\nlast steps:\n\t%s", s.cfg, fmt.Sprintf(format, args...), strings.Join(steps, "\n\t"))
}

// start begins a run from the newest complete checkpoint (each process's
// store's, if not shared), as a restart of every process does.
func (s *sim) start() {
	s.runs++
	s.from = 0
	if n, ok := s.stores[0].latest(); ok && !s.cfg.unshared {
		s.from = n
	}
	s.procs = nil
	for i := range s.cfg.procs {
		s.stores[i].discardAfter(s.from)
		c, err := coord.New(coord.Config{Self: i, Processes: s.cfg.procs, Every: s.cfg.every, Keep: s.cfg.keep,
			KeyGroups: simGroups, From: s.from})
		if err != nil {
			s.fatalf("%v", err)
		}
		p := &simProc{id: i, c: c, model: newNaive(i, s.cfg.procs, simGroups, s.cfg.tasks), yes: map[uint64]bool{}}
		for t := range s.cfg.tasks {
			p.tasks = append(p.tasks, &simTask{epoch: s.from, last: s.from})
			s.step(p, coord.Join{Task: coord.TaskID(t)})
		}
		s.procs = append(s.procs, p)
	}
	s.logf("run %d from %d", s.runs, s.from)
}

// taskBlobs are task t of process p's blobs at checkpoint n ("end": its
// final state).
func taskBlobs(p, t int, n string) blobs {
	data := []byte(fmt.Sprintf("p%dt%d@%s", p, t, n))
	return blobs{state: []checkpoint.StateBlob{{Operator: "op", KeyGroup: uint32(p*16 + t), Data: data}},
		sources: []checkpoint.SourceBlob{{Operator: "src", Instance: t, Data: data}}}
}

// step steps p's coordinator. An error is a failure the simulation
// injected (then every process restarts), or fails the test.
func (s *sim) step(p *simProc, e coord.Event) {
	err := p.c.Step(e)
	switch {
	case err == nil:
		return
	case errors.Is(err, coord.ErrProtocol) || !p.injected:
		s.fatalf("process %d: step %T%+v: %v", p.id, e, e, err)
	}
	s.logf("process %d failed: %v", p.id, err)
	s.crash()
}

// run takes steps until the chooser has made n choices or has no more.
func (s *sim) run(n int) {
	for i := 0; i < n && !s.ch.done(); i++ {
		s.once()
	}
}

// once takes one step of one process: a task passes a marker or ends,
// its coordinator's actions are taken, one is carried out, an answer is
// stepped, a peer's claim arrives, or (rarely) every process crashes.
func (s *sim) once() {
	p := s.procs[s.ch.intn(len(s.procs))]
	switch k := s.ch.intn(20); {
	case k < 7:
		s.taskStep(p, s.ch.intn(len(p.tasks)))
	case k < 10:
		s.take(p)
	case k < 14:
		s.carryOut(p)
	case k < 17:
		s.deliver(p)
	case k < 19:
		q := s.ch.intn(len(s.procs))
		if q != p.id {
			s.step(p, coord.PeerWrote{Process: q, N: s.procs[q].c.NewestWritten()})
		}
	default:
		if s.cfg.faults && s.ch.intn(15) == 0 {
			s.logf("crash")
			s.crash()
		}
	}
}

// taskStep makes task t pass a marker (sometimes several epochs on, so
// that it skips checkpoints), or end.
func (s *sim) taskStep(p *simProc, t int) {
	tk := p.tasks[t]
	if tk.ended {
		return
	}
	if !s.cfg.steady && s.ch.intn(25) == 0 {
		tk.ended = true
		b := taskBlobs(p.id, t, "end")
		s.logf("process %d task %d ends", p.id, t)
		p.model.finish(t, b)
		s.step(p, coord.Finish{Task: coord.TaskID(t), State: b.state, Sources: b.sources})
		return
	}
	tk.epoch++
	if !s.cfg.steady {
		tk.epoch += uint64(s.ch.intn(3))
	}
	if !s.cfg.steady && s.ch.intn(10) == 0 {
		tk.epoch += 3 * s.cfg.every
	}
	n, ok := coord.Due(s.cfg.every, tk.last, progress.Marker{Epoch: progress.Epoch(tk.epoch)})
	if !ok {
		return
	}
	tk.last = n
	b := taskBlobs(p.id, t, fmt.Sprint(n))
	s.logf("process %d task %d reports %d", p.id, t, n)
	p.model.report(t, n, b)
	s.step(p, coord.Report{Task: coord.TaskID(t), N: n, State: b.state, Sources: b.sources})
}

// take moves the actions Ready gives to the process's to-do list.
func (s *sim) take(p *simProc) {
	if p.c.HasReady() {
		p.todo = append(p.todo, p.c.Ready()...)
		p.c.Advance()
	}
}

// deliver steps the answer to the store request carried out.
func (s *sim) deliver(p *simProc) {
	if p.answer == nil {
		return
	}
	a := p.answer
	p.answer = nil
	s.logf("process %d answer %T%+v", p.id, a, a)
	s.step(p, a)
}

// crash ends the run of every process at once and starts another from
// the newest complete checkpoint, once it has checked that it is whole.
func (s *sim) crash() {
	for _, p := range s.procs {
		if p.answer != nil || len(p.todo) > 0 {
			s.midway++
			break
		}
	}
	for i := range s.procs {
		if !s.cfg.unshared && i > 0 {
			break // one store, checked
		}
		st := s.stores[i]
		n, ok := st.latest()
		if !ok {
			continue
		}
		for q := range s.cfg.procs {
			part, ok := st.dirs[n].parts[q]
			if !ok {
				s.fatalf("checkpoint %d is complete without process %d's part", n, q)
			}
			s.checkContent(part, nil)
		}
	}
	s.start()
}

// drain ends every task, then carries out everything, with no faults,
// until every coordinator is idle.
func (s *sim) drain() {
	s.cfg.faults = false
	for _, p := range s.procs {
		for t, tk := range p.tasks {
			if !tk.ended {
				tk.ended = true
				b := taskBlobs(p.id, t, "end")
				p.model.finish(t, b)
				s.step(p, coord.Finish{Task: coord.TaskID(t), State: b.state, Sources: b.sources})
			}
		}
	}
	for {
		moved, idle := false, true
		for _, p := range s.procs {
			s.take(p)
			moved = moved || len(p.todo) > 0 || p.answer != nil
			for len(p.todo) > 0 {
				s.carryOut(p)
			}
			s.deliver(p)
			idle = idle && p.c.Idle() && p.answer == nil && len(p.todo) == 0
		}
		switch {
		case idle:
			return
		case !moved:
			s.fatalf("the coordinators wait, and nothing is left to do")
		}
	}
}
