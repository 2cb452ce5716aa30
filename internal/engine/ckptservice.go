package engine

import (
	"fmt"

	"github.com/weirstream/weir/internal/checkpoint"
	"github.com/weirstream/weir/internal/trace"

	"github.com/weirstream/weir/internal/coord"
	"github.com/weirstream/weir/internal/runtime"
)

// join makes one more reporter a task that every part waits for, and
// returns its id. Every reporter joins before the service starts.
func (c *coordinator) join() coord.TaskID {
	c.tasks++
	return coord.TaskID(c.tasks - 1)
}

// joinLater makes reporter id one that takes part from checkpoint from
// on (notYet: not until joinFrom says so). It is called before the
// service starts.
func (c *coordinator) joinLater(id coord.TaskID, from uint64) {
	if c.later == nil {
		c.later = map[coord.TaskID]uint64{}
	}
	c.later[id] = from
}

// joinFrom makes reporter id, which took no part, or ended, take part
// from checkpoint from on: the parts before it do not wait for it. It
// must be sent before any task reports to checkpoint from.
func (c *coordinator) joinFrom(id coord.TaskID, from uint64) {
	c.send(coord.Join{Task: id, From: from})
}

// trySend queues ev unless the service's inbox is full (or the service
// is done), and says whether it did.
func (c *coordinator) trySend(ev coord.Event) bool {
	select {
	case c.inbox <- ev:
		return true
	default:
		return false
	}
}

// start registers the checkpoint service on rt, once every reporter has
// joined.
func (c *coordinator) start(rt *runtime.Runtime) {
	c.open(rt.Done())
	c.meter = rt.NewMeter("checkpoints", 0)
	rt.AddService("checkpoints", c.serve)
}

// open makes the service's inbox: room for two events of each task and
// one claim of each peer. Events sent once done has closed may be lost.
func (c *coordinator) open(done <-chan struct{}) {
	c.inbox = make(chan coord.Event, 2*c.tasks+c.procs)
	c.done = done
	c.served = make(chan struct{})
}

// send hands ev to the service, or drops it once the runtime has
// stopped.
func (c *coordinator) send(ev coord.Event) {
	select {
	case c.inbox <- ev:
	case <-c.done:
	}
}

// progress returns the newest checkpoint a task reported and the newest
// known complete, both at least the checkpoint restored from.
func (c *coordinator) progress() (highest, complete uint64) {
	return max(c.highest.Load(), c.from), max(c.complete.Load(), c.from)
}

// newestWritten returns the newest checkpoint whose part this process
// wrote: a part counts once its write has been answered.
func (c *coordinator) newestWritten() uint64 { return c.written.Load() }

// ckptService is the checkpoint service's state: the state machine it
// alone steps.
type ckptService struct {
	c *coordinator
	m *coord.Coordinator
}

// serve is the checkpoint service. It steps every event queued in the
// inbox before it carries out what they call for (the store's writes,
// checks and prunes, the commits), so that the tasks only collect their
// state and send it. Once done closes (every task has ended, or the job
// stopped or failed) it takes what is left in the inbox, the tasks' last
// reports and ends among it, and carries out the remaining actions
// before it returns: a job whose tasks end has its last parts written
// and completed when Run returns, and a stopped job has them written
// before its final summary says which checkpoint is complete (served).
// A failed write or store check, and an error of a commit or prune,
// fail the job.
func (c *coordinator) serve(done <-chan struct{}) error {
	defer close(c.served)
	m, err := coord.New(coord.Config{Self: c.self, Processes: c.procs, Every: c.every, Keep: c.keep,
		KeyGroups: c.groups, From: c.from})
	if err != nil {
		return err
	}
	s := &ckptService{c: c, m: m}
	if c.meter != nil {
		c.meter.Open()
		defer c.meter.Close()
	}
	for k := range c.tasks {
		id := coord.TaskID(k)
		from, later := c.later[id]
		if later && from == notYet {
			continue
		}
		if err := s.step(coord.Join{Task: id, From: from}); err != nil {
			return err
		}
	}
	c.firstLive.Store(m.FirstLive()) // also when no task joined
	for {
		select {
		case ev := <-c.inbox:
			if err := s.step(ev); err != nil {
				return err
			}
			if err := s.takeQueued(); err != nil {
				return err
			}
			if err := s.carryAll(); err != nil {
				return err
			}
			c.gate.setBusy(!m.Idle())
		case <-done:
			if err := s.takeQueued(); err != nil {
				return err
			}
			return s.carryAll()
		}
	}
}

// step steps one event and publishes what the summaries and a stop read.
func (s *ckptService) step(ev coord.Event) error {
	err := s.m.Step(ev)
	highest, complete := s.m.Progress()
	s.c.highest.Store(highest)
	s.c.complete.Store(complete)
	s.c.written.Store(s.m.NewestWritten())
	s.c.pending.Store(int64(s.m.Pending()))
	switch ev.(type) {
	case coord.Join, coord.Finish, coord.Withdraw: // the live tasks change
		s.c.firstLive.Store(s.m.FirstLive())
	}
	s.c.gate.setBusy(!s.m.Idle())
	return err
}

// takeQueued steps the events waiting in the inbox.
func (s *ckptService) takeQueued() error {
	for {
		select {
		case ev := <-s.c.inbox:
			if err := s.step(ev); err != nil {
				return err
			}
		default:
			return nil
		}
	}
}

// carryAll carries out the machine's actions, in order, until it asks
// for nothing more.
func (s *ckptService) carryAll() error {
	for s.m.HasReady() {
		actions := s.m.Ready()
		s.m.Advance()
		for i, a := range actions {
			actions[i] = nil // a part written is garbage once its write is
			if err := s.carry(a); err != nil {
				return err
			}
		}
	}
	return nil
}

// carry carries out one action; a store request's answer is stepped at
// once.
func (s *ckptService) carry(a coord.Action) error {
	c := s.c
	switch a := a.(type) {
	case coord.WritePart:
		n := a.Part.Checkpoint
		var err error
		if !c.awaySelf(n) {
			// (A process that left writes no part of a checkpoint from its
			// leave on: the checkpoint's leader writes it, empty. Both
			// writing it raced.)
			err = c.writePart(a.Part)
		}
		if err == nil {
			err = c.writeLeft(a.Part)
		}
		checkpoint.Recycle(a.Part.State) // written (or failed): nothing else holds its pooled blobs (final state is kept unmarked)
		ev := coord.PartWritten{N: n, Err: err}
		ev.Superseded = s.superseded(n, ev.Err, "its part was written")
		return s.step(ev)
	case coord.CheckComplete:
		ok, err := c.store.Complete(a.N, a.Processes)
		if s.superseded(a.N, err, "it was completed") {
			ok, err = false, nil // a later checkpoint is complete: this one is not needed
		}
		return s.step(coord.CompleteChecked{N: a.N, Complete: ok, Err: err})
	case coord.CheckPart:
		ok, err := c.store.Has(a.N, a.Process)
		return s.step(coord.PartChecked{N: a.N, Process: a.Process, Has: ok, Err: err})
	case coord.Completed:
		c.log.Debug("weir: checkpoint complete", "checkpoint", a.N)
		if c.reg != nil {
			c.reg.CheckpointComplete(a.N)
		}
		if c.onComplete != nil {
			c.onComplete(a.N)
		}
	case coord.Commit:
		for _, cm := range c.committers {
			if err := cm.commit(a.N); err != nil {
				return err
			}
		}
		c.acks.acknowledge(a.N, c.log)
	case coord.Prune:
		return c.store.Prune(a.Keep)
	case coord.TrimIncomplete:
		return c.store.TrimIncomplete(a.Keep)
	case coord.WarnUnshared:
		c.log.Warn(fmt.Sprintf("weir: no checkpoint can complete: processes %v wrote their parts of checkpoint %d, but %s does not hold them; the checkpoint directory must be shared by every process of the job (a network file system or shared volume), or the job cannot recover", a.Missing, a.Checkpoint, c.store.Dir()),
			"process", c.self)
	default:
		return fmt.Errorf("weir: checkpoints: unknown action %v", a)
	}
	return nil
}

// superseded reports whether err, from writing checkpoint n's part or its
// manifest, came from another process that completed a later checkpoint
// and pruned n meanwhile: then n is not needed, and err is no failure.
func (s *ckptService) superseded(n uint64, err error, while string) bool {
	if err == nil {
		return false
	}
	later, lerr := s.c.store.CompletedAfter(n)
	if later && lerr == nil {
		s.c.log.Debug("weir: checkpoint superseded while "+while, "checkpoint", n, "err", err)
		return true
	}
	return false
}

// writePart writes this process's part of a checkpoint, measuring it.
func (c *coordinator) writePart(p checkpoint.Part) error {
	m := c.meter
	tracing := m != nil && m.Tracing()
	var t0 int64
	if tracing {
		t0 = runtime.Now()
	}
	err := c.store.WritePart(p)
	t1 := runtime.Now()
	if tracing {
		m.Event(trace.CheckpointIO, t0, t1, 0, 0)
		m.Flush()
	}
	if err == nil && c.reg != nil {
		var size int64
		for _, b := range p.State {
			size += int64(len(b.Data))
		}
		for _, b := range p.Sources {
			size += int64(len(b.Data))
		}
		c.reg.CheckpointWritten(p.Checkpoint, size, t1)
	}
	return err
}
