package summary

import "sync"

// Board keeps the newest message of every process. It is safe for
// concurrent use.
type Board struct {
	mu     sync.Mutex
	latest []Message
	have   []bool
	final  []bool
	gone   []bool
	// taken marks the slots a new process takes again, until the board
	// forgets the one before (Renew): its final message is not the new
	// one's.
	taken []bool
	// prior sums the counters of the processes that left each slot
	// before the one in it now.
	prior []map[string]int64
}

// NewBoard returns an empty board for procs processes.
func NewBoard(procs int) *Board {
	return &Board{latest: make([]Message, procs), have: make([]bool, procs), final: make([]bool, procs), gone: make([]bool, procs), taken: make([]bool, procs)}
}

// Post records m if it is newer than what the board holds of its process;
// it reports whether it was.
func (b *Board) Post(m Message) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if m.Process < 0 || m.Process >= len(b.latest) || b.have[m.Process] && m.Seq <= b.latest[m.Process].Seq {
		return false
	}
	b.latest[m.Process], b.have[m.Process] = m, true
	b.final[m.Process] = b.final[m.Process] || m.Final
	return true
}

// Gone records that process p will send nothing more (its connection
// ended).
func (b *Board) Gone(p int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.gone[p] = true
}

// absent says whether process p never took part: gone without a word.
func (b *Board) absent(p int) bool { return b.gone[p] && !b.have[p] }

// Back records that process p, gone because it had not joined, is
// present now.
func (b *Board) Back(p int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.gone[p] = false
}

// Renew forgets process p, which left: a new process in its slot posts
// its messages from the first again. Its counters stay in the totals.
func (b *Board) Renew(p int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.prior == nil {
		b.prior = make([]map[string]int64, len(b.latest))
	}
	if b.prior[p] == nil {
		b.prior[p] = map[string]int64{}
	}
	for _, c := range b.latest[p].Counts {
		b.prior[p][c.Name] += c.Value
	}
	b.latest[p], b.have[p], b.final[p], b.gone[p], b.taken[p] = Message{}, false, false, false, false
}

// Taken records that a new process takes slot p again: until Renew, the
// final message of the one before does not count as the slot's end
// (Ended).
func (b *Board) Taken(p int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.taken[p] = true
}

// Settled reports whether every process but self has sent its final
// message or is gone.
func (b *Board) Settled(self int) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	for p := range b.latest {
		if p != self && !b.final[p] && !b.gone[p] {
			return false
		}
	}
	return true
}

// Totals sums every counter over the processes' newest messages, with
// own standing in for process self's; missing lists the processes whose
// final counts are not in.
func (b *Board) Totals(self int, own []Count) (totals map[string]int64, missing []int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	totals = map[string]int64{}
	for p, m := range b.latest {
		counts := m.Counts
		if p == self {
			counts = own
		} else if b.absent(p) {
			continue
		} else if !b.final[p] {
			missing = append(missing, p)
		}
		for _, c := range counts {
			totals[c.Name] += c.Value
		}
	}
	for _, m := range b.prior {
		for name, v := range m {
			totals[name] += v
		}
	}
	return totals, missing
}

// AllEnded reports whether every process but self sent a final message
// that says its part of the job ran to its end (not stopped).
func (b *Board) AllEnded(self int) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	for p, m := range b.latest {
		if p != self && !b.absent(p) && (!b.final[p] || m.Stopped) {
			return false
		}
	}
	return true
}

// Ended returns the processes but self whose final message came: their
// part of the job is over (run to its end, stopped or left). A slot
// taken again by a new process (Taken) is not among them.
func (b *Board) Ended(self int) []int {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []int
	for p := range b.latest {
		if p != self && b.final[p] && !b.taken[p] {
			out = append(out, p)
		}
	}
	return out
}

// Complete returns the newest checkpoint any process knows is complete.
func (b *Board) Complete() uint64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	var n uint64
	for _, m := range b.latest {
		n = max(n, m.Complete)
	}
	return n
}

// Stopping reports whether any process was asked to stop.
func (b *Board) Stopping() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, m := range b.latest {
		if m.Stop {
			return true
		}
	}
	return false
}

// StopAt returns the highest checkpoint the processes but self propose to
// stop at, and whether every one of them has proposed (a process that is
// gone counts as having agreed).
func (b *Board) StopAt(self int) (uint64, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	var at uint64
	all := true
	for p, m := range b.latest {
		if p == self {
			continue
		}
		if !m.Stop && !b.gone[p] {
			all = false
		}
		at = max(at, m.StopAt)
	}
	return at, all
}

// Latest returns the newest message of process p, if any arrived.
func (b *Board) Latest(p int) (Message, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.latest[p], b.have[p]
}
