package coord

import (
	"cmp"
	"maps"
	"slices"

	"github.com/weirstream/weir/internal/checkpoint"
)

// pending is a checkpoint's part while its tasks report to it.
type pending struct {
	part checkpoint.Part
	from map[TaskID]bool // the tasks that reported to it
}

// blobKey names a blob within a part: a state blob by operator and key
// group (inst -1), a source blob by operator and instance.
type blobKey struct {
	op   string
	inst int
	kg   uint32
}

func stateKey(b checkpoint.StateBlob) blobKey {
	return blobKey{op: b.Operator, inst: -1, kg: b.KeyGroup}
}
func sourceKey(b checkpoint.SourceBlob) blobKey { return blobKey{op: b.Operator, inst: b.Instance} }

// report adds one task's blobs to checkpoint n's part.
func (c *Coordinator) report(e Report) {
	if e.N <= c.taken {
		return // written without this task, which had ended, or skipped
	}
	p := c.pending(e.N)
	c.highest = max(c.highest, e.N)
	p.part.State = append(p.part.State, e.State...)
	p.part.Sources = append(p.part.Sources, e.Sources...)
	p.from[e.Task] = true
	c.takeReady()
}

// pending returns checkpoint n's part, made if it is not yet.
func (c *Coordinator) pending(n uint64) *pending {
	p := c.parts[n]
	if p == nil {
		p = &pending{part: checkpoint.Part{Checkpoint: n, Epoch: n, Process: c.cfg.Self, Processes: c.cfg.Processes,
			Meta: map[string]string{"key_groups": c.meta}}, from: map[TaskID]bool{}}
		c.parts[n] = p
	}
	return p
}

// passed makes checkpoint n's part ready, with the final state of the
// tasks that ended alone, if no live task reports to it (Passed).
func (c *Coordinator) passed(n uint64) {
	if n <= c.taken || n <= c.cfg.From || c.FirstLive() <= n {
		return // written, or a live task reports to it (or skipped it)
	}
	c.pending(n)
	c.highest = max(c.highest, n)
	c.takeReady()
}

// finish takes a task that has ended out of the tasks the parts wait for,
// and keeps its final state for every later part. Its blobs are no longer
// Pooled: every later part holds them, so writing one must not give their
// buffers back (checkpoint.Recycle).
func (c *Coordinator) finish(e Finish) {
	delete(c.live, e.Task)
	f := final{sources: e.Sources}
	for _, b := range e.State {
		b.Pooled = false
		f.state = append(f.state, b)
	}
	c.finals[e.Task] = f
	c.takeReady()
}

// final is the final state of a task that ended.
type final struct {
	state   []checkpoint.StateBlob
	sources []checkpoint.SourceBlob
}

// takeReady queues the parts every live task has reported to, with the
// final state of the tasks that ended, in checkpoint order; a part older
// than one that is ready never will be (a task skipped it) and is
// dropped. Then it asks for the next write, if the store is free.
func (c *Coordinator) takeReady() {
	var ready []checkpoint.Part
	var newest uint64
	for n, p := range c.parts {
		if !c.allLive(p) {
			continue
		}
		ready = append(ready, c.withFinal(p.part))
		delete(c.parts, n)
		newest = max(newest, n)
	}
	for n := range c.parts {
		if n < newest {
			delete(c.parts, n)
		}
	}
	c.taken = max(c.taken, newest)
	slices.SortFunc(ready, func(a, b checkpoint.Part) int { return cmp.Compare(a.Checkpoint, b.Checkpoint) })
	for _, p := range ready {
		c.queue = append(c.queue, sorted(p))
	}
	c.next()
}

func (c *Coordinator) allLive(p *pending) bool {
	for t, from := range c.live {
		if from <= p.part.Checkpoint && !p.from[t] {
			return false
		}
	}
	return true
}

// withFinal adds to part the final state of the tasks that ended, but
// for the blobs it holds already: a task that reported the part and ended
// since is in it as it was then.
func (c *Coordinator) withFinal(part checkpoint.Part) checkpoint.Part {
	have := map[blobKey]bool{}
	for _, b := range part.State {
		have[stateKey(b)] = true
	}
	for _, b := range part.Sources {
		have[sourceKey(b)] = true
	}
	var tasks []TaskID
	for _, t := range slices.Sorted(maps.Keys(c.finals)) {
		if from, ok := c.live[t]; !ok || from > part.Checkpoint {
			tasks = append(tasks, t) // not joined again by then
		}
	}
	for _, t := range tasks {
		for _, b := range c.finals[t].state {
			if !have[stateKey(b)] {
				part.State = append(part.State, b)
			}
		}
	}
	for _, t := range tasks {
		for _, b := range c.finals[t].sources {
			if !have[sourceKey(b)] {
				part.Sources = append(part.Sources, b)
			}
		}
	}
	return part
}

// sorted orders a part's state blobs by operator and key group and its
// source blobs by operator and instance.
func sorted(p checkpoint.Part) checkpoint.Part {
	slices.SortStableFunc(p.State, func(x, y checkpoint.StateBlob) int {
		return cmp.Or(cmp.Compare(x.Operator, y.Operator), cmp.Compare(x.KeyGroup, y.KeyGroup))
	})
	slices.SortStableFunc(p.Sources, func(x, y checkpoint.SourceBlob) int {
		return cmp.Or(cmp.Compare(x.Operator, y.Operator), cmp.Compare(x.Instance, y.Instance))
	})
	return p
}
