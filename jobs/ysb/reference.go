package ysb

import (
	"cmp"
	"slices"

	"github.com/weirstream/weir/connector/gen"
)

// Reference computes the query plainly: one map from (campaign, window
// start) to count over the events in any order. It is what end-to-end tests
// compare the job with.
func Reference(events []gen.YSBEvent, c Campaigns) []Result {
	type key struct {
		campaign string
		start    int64
	}
	counts := map[key]int64{}
	for _, e := range events {
		if e.EventType != "view" {
			continue
		}
		camp, ok := c[e.AdID]
		if !ok {
			continue
		}
		counts[key{camp, WindowStart(e.EventTime)}]++
	}
	out := make([]Result, 0, len(counts))
	for k, n := range counts {
		out = append(out, Result{Key: k.campaign, Start: k.start, End: k.start + WindowMillis, Value: n})
	}
	Sort(out)
	return out
}

// Sort orders results by campaign, then window start.
func Sort(rs []Result) {
	slices.SortFunc(rs, func(a, b Result) int {
		if c := cmp.Compare(a.Key, b.Key); c != 0 {
			return c
		}
		return cmp.Compare(a.Start, b.Start)
	})
}

// WindowStart is the start of the 10 s window of an event time, rounding
// down (also for times before 1970).
func WindowStart(t int64) int64 {
	s := t - t%WindowMillis
	if t%WindowMillis < 0 {
		s -= WindowMillis
	}
	return s
}
