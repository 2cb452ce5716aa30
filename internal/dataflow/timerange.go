package dataflow

import (
	"fmt"
	"math"
	"unicode/utf8"

	"github.com/weirstream/weir/internal/window"
)

// TimeRange is the closed range of event times that an operator assigning
// them (EventTime; a window or join, whose results carry end-1) may give
// its records: the times every window downstream can hold (window.Spec's
// Range), up to the next operator that assigns times again. It never
// holds math.MinInt64 or math.MaxInt64, the watermark's -inf and +inf.
// The operator fails the job on a time outside it, so windows see only
// times they can hold and watermarks only come from such times.
type TimeRange struct{ Lo, Hi int64 }

func NewTimeRange() *TimeRange { return &TimeRange{math.MinInt64 + 1, math.MaxInt64 - 1} }

func (r TimeRange) Holds(ts int64) bool { return r.Lo <= ts && ts <= r.Hi }

// HoldTimes narrows to what spec can hold the ranges of the operators that
// assign the times of the records on the edge from n's output port: n
// itself if it assigns them, else, through operators that pass times on,
// those above it.
func HoldTimes(n *Node, port int, spec window.Spec) {
	lo, hi := spec.Range()
	seen := map[[2]int]bool{}
	var walk func(n *Node, port int)
	walk = func(n *Node, port int) {
		if n == nil || seen[[2]int{n.Id, port}] {
			return
		}
		seen[[2]int{n.Id, port}] = true
		if port < len(n.Times) && n.Times[port] != nil {
			r := n.Times[port]
			r.Lo, r.Hi = max(r.Lo, lo), min(r.Hi, hi)
			return
		}
		for _, in := range n.Inputs {
			walk(in.From, in.FromPort)
		}
	}
	walk(n, port)
}

// ShowRecord formats a record for an error message, cut to about 200
// bytes.
func ShowRecord(v any) string {
	const limit = 200
	s := fmt.Sprintf("%v", v)
	if len(s) <= limit {
		return s
	}
	cut := limit
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// BadWindowTime is the panic of a window operator given a time that its
// spec cannot hold: the operator that assigned the time should have failed
// the job instead.
func BadWindowTime(ts int64, spec window.Spec) string {
	lo, hi := spec.Range()
	return fmt.Sprintf("weir: event time %d reached a %v window, which holds [%d, %d]", ts, spec, lo, hi)
}
