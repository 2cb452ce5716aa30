package coord_test

import (
	"cmp"
	"fmt"
	"maps"
	"slices"

	"github.com/weirstream/weir/internal/checkpoint"
	"github.com/weirstream/weir/internal/coord"
)

// naive says which parts one process writes, from the whole history of
// its tasks' reports and ends, recomputed after every event: checkpoint
// n's part is written once n is newer than the last part written and
// every task has either reported n or ended; it holds each task's report
// of n, or else its final state.
type naive struct {
	self, procs, groups int
	reports             []map[uint64]blobs // per task: checkpoint -> its report
	final               []*blobs           // per task: its final state once it ended
	written             uint64
	expect              []checkpoint.Part // the writes so far, in order
}

type blobs struct {
	state   []checkpoint.StateBlob
	sources []checkpoint.SourceBlob
}

func newNaive(self, procs, groups, tasks int) *naive {
	m := &naive{self: self, procs: procs, groups: groups, reports: make([]map[uint64]blobs, tasks), final: make([]*blobs, tasks)}
	for i := range m.reports {
		m.reports[i] = map[uint64]blobs{}
	}
	return m
}

func (m *naive) report(t int, n uint64, b blobs) {
	m.reports[t][n] = b
	m.update()
}

func (m *naive) finish(t int, b blobs) {
	m.final[t] = &b
	m.update()
}

func (m *naive) update() {
	cands := map[uint64]bool{}
	for _, r := range m.reports {
		for n := range r {
			if n > m.written {
				cands[n] = true
			}
		}
	}
	var newest uint64
	for _, n := range slices.Sorted(maps.Keys(cands)) {
		if p, ok := m.part(n); ok {
			m.expect = append(m.expect, p)
			newest = n
		}
	}
	m.written = max(m.written, newest)
	for _, r := range m.reports {
		maps.DeleteFunc(r, func(n uint64, _ blobs) bool { return n <= m.written }) // never ready again
	}
}

// part returns n's part if every task reported n or ended.
func (m *naive) part(n uint64) (checkpoint.Part, bool) {
	p := checkpoint.Part{Checkpoint: n, Epoch: n, Process: m.self, Processes: m.procs,
		Meta: map[string]string{"key_groups": fmt.Sprint(m.groups)}}
	for t, r := range m.reports {
		if _, ok := r[n]; !ok && m.final[t] == nil {
			return p, false
		}
	}
	for t, r := range m.reports {
		b, ok := r[n]
		if !ok {
			b = *m.final[t]
		}
		p.State = append(p.State, b.state...)
		p.Sources = append(p.Sources, b.sources...)
	}
	slices.SortFunc(p.State, func(x, y checkpoint.StateBlob) int {
		return cmp.Or(cmp.Compare(x.Operator, y.Operator), cmp.Compare(x.KeyGroup, y.KeyGroup))
	})
	slices.SortFunc(p.Sources, func(x, y checkpoint.SourceBlob) int {
		return cmp.Or(cmp.Compare(x.Operator, y.Operator), cmp.Compare(x.Instance, y.Instance))
	})
	return p, true
}

// same reports whether two parts are alike, as their traces show them.
func same(a, b checkpoint.Part) bool {
	return coord.WritePart{Part: a}.String() == coord.WritePart{Part: b}.String()
}
