package coord

import (
	"cmp"
	"slices"
)

// A job of several processes takes a checkpoint only if every process
// takes it: a part missing leaves it incomplete. So the processes cannot
// each skip a checkpoint while their own store is busy, as a job of one
// process does; with writes slower than the interval, every process
// would hold the state of one more checkpoint at each interval. Instead
// they take every Stride-th due checkpoint, the stride agreed ahead of
// time: the leader (the lowest process that takes part in the
// checkpoint) decides it from how far the slowest process's writes lag
// behind the checkpoints taken, and announces each change from an epoch
// the others have not reached (the summaries carry it). A change heard
// too late (a process has passed that epoch) costs one checkpoint that
// does not complete, and nothing else: the next one it takes is taken
// by all. When the leader leaves, the next one decides the checkpoints
// from its leave on; steps of the two may be heard in either order, so
// Add keeps them by their epoch whatever the order it hears them in.

// PaceStep is a stride in force from an epoch on: from checkpoint From
// on, the checkpoints taken are those whose number of intervals (n /
// every) is a multiple of Stride.
type PaceStep struct {
	From, Stride uint64
}

// MaxStride bounds the stride: a checkpoint at least every MaxStride
// intervals.
const MaxStride = 64

// Pace holds the strides in force, and, on the process that decides
// them, how long the writes have kept up.
type Pace struct {
	steps []PaceStep // by increasing From
	// before is the stride before the first step: 1, or the last
	// dropped step's, from dropped on (0: none dropped).
	before  uint64
	dropped uint64
	calm    int    // decisions in a row that found the writes caught up
	behind  uint64 // checkpoints waiting at the last decision
}

// Stride is the stride in force for checkpoint n.
func (p *Pace) Stride(n uint64) uint64 {
	s := max(p.before, 1)
	for _, st := range p.steps {
		if st.From > n {
			break
		}
		s = st.Stride
	}
	return s
}

// Takes reports whether checkpoint n, due every every epochs, is taken.
func (p *Pace) Takes(n, every uint64) bool {
	return every > 0 && (n/every)%p.Stride(n) == 0
}

// Last is the newest step (stride 1 from 0 if none).
func (p *Pace) Last() PaceStep {
	if len(p.steps) == 0 {
		return PaceStep{Stride: max(p.before, 1)}
	}
	return p.steps[len(p.steps)-1]
}

// Add puts s in force from s.From on, in order of From whatever the
// order steps are heard in (a step heard again changes nothing; of two
// steps from the same epoch, by two leaders one after the other, the
// larger stride holds, on every process alike), and reports whether it
// changed anything. A stride outside [1, MaxStride] is not taken.
func (p *Pace) Add(s PaceStep) bool {
	if s.Stride < 1 || s.Stride > MaxStride || p.dropped > 0 && s.From <= p.dropped {
		return false // a step folded into before already, heard again
	}
	i, found := slices.BinarySearchFunc(p.steps, s.From, func(st PaceStep, from uint64) int { return cmp.Compare(st.From, from) })
	if found {
		if s.Stride <= p.steps[i].Stride {
			return false
		}
		p.steps[i] = s
		return true
	}
	p.steps = slices.Insert(p.steps, i, s)
	// The steps before the last few are folded into before: a task far
	// behind the others still gets the stride in force for it, or the
	// one just before.
	if len(p.steps) > 8 {
		drop := len(p.steps) - 8
		p.before, p.dropped = p.steps[drop-1].Stride, p.steps[drop-1].From
		p.steps = append(p.steps[:0], p.steps[drop:]...)
	}
	return true
}

// calmDecisions is how many decisions in a row must find the writes
// caught up before the stride halves.
const calmDecisions = 4

// Decide is the deciding process's choice once it has taken checkpoint
// n: written is the newest checkpoint that every process has written its
// part of, and from the first epoch a change may take force at. The
// checkpoints taken since written, n included, wait for the slowest
// process's writes; each holds a copy of that process's state. Two or
// more (one waiting besides n) double the stride; at most one (n alone)
// in calmDecisions decisions in a row halve it. Fewer waiting than at
// the last decision do not double it: the slowest process is catching
// up at the stride in force (the checkpoints it took before a change
// are still to be written). It returns the step to put in force and
// announce, if the stride changes.
//
// Before every process has written a part (written 0) there is nothing
// to decide from: checkpoints are numbered by epoch from the Unix epoch,
// so n − 0 would count as far behind.
func (p *Pace) Decide(n, every, written, from uint64) (PaceStep, bool) {
	if every == 0 || written == 0 {
		return PaceStep{}, false
	}
	stride := p.Stride(n)
	behind := uint64(0)
	if n > written {
		behind = (n - written + every*stride - 1) / (every * stride)
	}
	shrank := behind < p.behind
	p.behind = behind
	switch {
	case behind >= 2:
		p.calm = 0
		if stride < MaxStride && !shrank {
			return p.change(from, stride*2)
		}
	case behind <= 1:
		p.calm++
		if p.calm >= calmDecisions && stride > 1 {
			return p.change(from, stride/2)
		}
	}
	return PaceStep{}, false
}

func (p *Pace) change(from, stride uint64) (PaceStep, bool) {
	s := PaceStep{From: max(from, p.Last().From+1), Stride: stride}
	p.calm = 0
	return s, p.Add(s)
}
