package critical

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/weirstream/weir/internal/metrics"
	"github.com/weirstream/weir/internal/trace"
)

// The summary groups, in the order rows are listed, and the names of the
// rows that are not an activity kind, operator, worker or pair.
const (
	Transfer = "transfer"         // a message edge: its type
	Unknown  = "unknown"          // a gap: its type
	Messages = "(transfer)"       // message edges, as an operator or worker
	Local    = "(within workers)" // everything but message edges, as a pair
)

// Groups are the summary groups.
var Groups = []string{"type", "operator", "worker", "pair"}

// Windows cuts the trace into windows of length win (ns), aligned at
// multiples of it and truncated to the trace's span, and analyses each
// one that holds an activity.
func (x *Index) Windows(win int64) []Window {
	lo, hi := x.Span()
	if win <= 0 || hi <= lo {
		return nil
	}
	var out []Window
	for ts := lo - mod(lo, win); ts < hi; ts += win {
		w := x.Window(max(ts, lo), min(ts+win, hi))
		if len(w.Activities) > 0 {
			out = append(out, w)
		}
	}
	return out
}

func mod(a, b int64) int64 {
	m := a % b
	if m < 0 {
		m += b
	}
	return m
}

// WorkerName names worker w of t: its operator chain and instance, and
// its process in a trace of several.
func WorkerName(t *trace.Trace, w int) string {
	if w < 0 || w >= len(t.Workers) {
		return fmt.Sprintf("worker %d", w)
	}
	wk := t.Workers[w]
	if t.Processes > 1 {
		return fmt.Sprintf("%s#%d@%d", wk.Name, wk.Instance, wk.Process)
	}
	return fmt.Sprintf("%s#%d", wk.Name, wk.Instance)
}

type rowKey struct{ group, name string }

type acc struct {
	cp   float64 // Σ CP × window length
	busy int64
}

// Summary accumulates CP and busy time by group over windows; windows
// without a critical path (N = 0) are counted and left out.
type Summary struct {
	t       *trace.Trace
	rows    map[rowKey]*acc
	span    float64
	busy    int64
	Windows int // windows summed
	Empty   int // windows left out: no critical path
	Dropped int // message edges dropped
}

// NewSummary returns an empty summary of windows of t.
func NewSummary(t *trace.Trace) *Summary { return &Summary{t: t, rows: map[rowKey]*acc{}} }

func (s *Summary) row(group, name string) *acc {
	k := rowKey{group, name}
	r := s.rows[k]
	if r == nil {
		r = &acc{}
		s.rows[k] = r
	}
	return r
}

func (s *Summary) opName(op int) string {
	if op >= 0 && op < len(s.t.Ops) {
		return s.t.Ops[op]
	}
	return fmt.Sprintf("operator %d", op)
}

// Add adds a window.
func (s *Summary) Add(w Window) {
	s.Dropped += w.Dropped
	if w.Paths == 0 {
		s.Empty++
		return
	}
	s.Windows++
	span := float64(w.End - w.Start)
	s.span += span
	var msgBusy int64
	for _, a := range w.Activities {
		cp := a.CP * span
		if a.Message {
			p := s.row("pair", WorkerName(s.t, a.Worker)+" → "+WorkerName(s.t, a.To))
			p.cp += cp
			p.busy += a.Busy
			msgBusy += a.Busy
			s.row("type", Transfer).cp += cp
			s.row("operator", Messages).cp += cp
			s.row("worker", Messages).cp += cp
			continue
		}
		kind := a.Kind.String()
		if a.Gap {
			kind = Unknown
		}
		for _, r := range []*acc{s.row("type", kind), s.row("operator", s.opName(a.Op)),
			s.row("worker", WorkerName(s.t, a.Worker)), s.row("pair", Local)} {
			r.cp += cp
			r.busy += a.Busy
		}
		s.busy += a.Busy
	}
	s.row("pair", Local).busy -= msgBusy
}

// Rows returns the summary: by group in the order of Groups, then by CP,
// highest first. CP is the share of the critical paths over the windows
// summed (each window weighted by its length); Busy is the share of the
// busy time in them.
func (s *Summary) Rows() []metrics.Participation {
	out := make([]metrics.Participation, 0, len(s.rows))
	for k, r := range s.rows {
		p := metrics.Participation{Group: k.group, Name: k.name}
		if s.span > 0 {
			p.CP = r.cp / s.span
		}
		if s.busy > 0 {
			p.Busy = float64(r.busy) / float64(s.busy)
		}
		out = append(out, p)
	}
	SortRows(out)
	return out
}

// SortRows orders rows by group (as Groups lists them), then by CP,
// highest first, then by name.
func SortRows(rows []metrics.Participation) {
	slices.SortFunc(rows, func(a, b metrics.Participation) int {
		return cmp.Or(cmp.Compare(slices.Index(Groups, a.Group), slices.Index(Groups, b.Group)),
			cmp.Compare(b.CP, a.CP), cmp.Compare(a.Name, b.Name))
	})
}

// Table formats rows as a ranked table per group, at most top rows each
// (0: all).
func Table(rows []metrics.Participation) string {
	return TableTop(rows, 0)
}

// TableTop is Table with at most top rows per group (0: all).
func TableTop(rows []metrics.Participation, top int) string {
	var b strings.Builder
	width := 4
	for _, r := range rows {
		width = max(width, len([]rune(r.Name)))
	}
	group, n := "", 0
	for _, r := range rows {
		if r.Group != group {
			group, n = r.Group, 0
			fmt.Fprintf(&b, "\nby %s\n  %-*s  %6s  %6s\n", group, width, "name", "CP", "busy")
		}
		if n++; top > 0 && n > top {
			continue
		}
		fmt.Fprintf(&b, "  %-*s  %5.1f%%  %5.1f%%\n", width, r.Name, 100*r.CP, 100*r.Busy) // fmt pads by runes
	}
	return strings.TrimPrefix(b.String(), "\n")
}

// Bottleneck names, in words, the operator and the worker that carry the
// largest share of the critical paths, each next to its share of busy
// time.
func Bottleneck(rows []metrics.Participation) string {
	rows = slices.Clone(rows)
	SortRows(rows)
	var parts []string
	for _, g := range []string{"operator", "worker"} {
		for _, r := range rows {
			if r.Group != g || r.Name == Messages {
				continue
			}
			parts = append(parts, fmt.Sprintf("%s %s carries %.0f%% of the critical path (busy %.0f%%)", g, r.Name, 100*r.CP, 100*r.Busy))
			break
		}
	}
	if len(parts) == 0 {
		return "no critical path: the trace holds no window where work connects the window's start to its end"
	}
	return strings.Join(parts, "; ")
}
