package ysb

import "github.com/weirstream/weir/connector/gen"

// Baseline is the fastest honest single-threaded loop for the query over
// events in memory: ad ids are looked up in a map to a campaign index, and
// each campaign keeps its counters in a slice indexed by window number, so
// nothing is allocated per event. It is the yardstick for the engine.
type Baseline struct {
	adIndex   map[string]int32
	campaigns []string
	counts    [][]int64 // [campaign][window - base]
	base      int64
	started   bool
}

// NewBaseline prepares the loop's lookup tables.
func NewBaseline(c Campaigns) *Baseline {
	b := &Baseline{adIndex: make(map[string]int32, len(c))}
	idx := map[string]int32{}
	for ad, camp := range c {
		i, ok := idx[camp]
		if !ok {
			i = int32(len(b.campaigns))
			idx[camp] = i
			b.campaigns = append(b.campaigns, camp)
		}
		b.adIndex[ad] = i
	}
	b.counts = make([][]int64, len(b.campaigns))
	return b
}

// Run processes events.
func (b *Baseline) Run(events []gen.YSBEvent) {
	for i := range events {
		e := &events[i]
		if e.EventType != "view" {
			continue
		}
		ci, ok := b.adIndex[e.AdID]
		if !ok {
			continue
		}
		w := WindowStart(e.EventTime) / WindowMillis
		if !b.started {
			b.base, b.started = w, true
		}
		if w < b.base {
			b.rebase(w)
		}
		slot := int(w - b.base)
		cs := b.counts[ci]
		if slot >= len(cs) {
			cs = append(cs, make([]int64, slot+1-len(cs))...)
			b.counts[ci] = cs
		}
		cs[slot]++
	}
}

func (b *Baseline) rebase(w int64) {
	shift := int(b.base - w)
	for i, cs := range b.counts {
		if len(cs) > 0 {
			b.counts[i] = append(make([]int64, shift), cs...)
		}
	}
	b.base = w
}

// Results returns the counts, sorted.
func (b *Baseline) Results() []Result {
	var out []Result
	for ci, cs := range b.counts {
		for slot, n := range cs {
			if n == 0 {
				continue
			}
			start := (b.base + int64(slot)) * WindowMillis
			out = append(out, Result{Key: b.campaigns[ci], Start: start, End: start + WindowMillis, Value: n})
		}
	}
	Sort(out)
	return out
}
