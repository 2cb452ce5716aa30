package report

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// nexRun is one query's line of `weir bench nexmark`.
type nexRun struct {
	e                 Entry
	query             string
	workers, procs    int
	rate, perCore     float64
	hasRate, hasCore  bool
	ratio, loopRate   float64
	hasRatio, hasLoop bool
}

func nexRuns(g *group) []nexRun {
	var out []nexRun
	for _, e := range g.results {
		m := e.Result
		r := nexRun{e: e, query: str(m, "query"), workers: intOr(m, "workers", 0), procs: intOr(m, "processes", 1)}
		r.rate, r.hasRate = num(m, "events_per_s")
		r.perCore, r.hasCore = num(m, "events_per_s_per_core")
		r.loopRate, r.hasLoop = num(m, "baseline_events_per_s")
		if r.ratio, r.hasRatio = num(m, "ratio"); !r.hasRatio {
			r.ratio, r.hasRatio = num(m, "ratio_to_baseline")
		}
		out = append(out, r)
	}
	slices.SortStableFunc(out, func(a, b nexRun) int {
		if c := queryOrder(a.query) - queryOrder(b.query); c != 0 {
			return c
		}
		return a.workers*a.procs - b.workers*b.procs
	})
	return out
}

func intOr(m map[string]any, key string, def int) int {
	if v, ok := num(m, key); ok {
		return int(v)
	}
	return def
}

// queryOrder orders q0 < q1 < ... < q22, then any other name.
func queryOrder(q string) int {
	if n, err := strconv.Atoi(strings.TrimPrefix(q, "q")); err == nil && strings.HasPrefix(q, "q") {
		return n
	}
	return math.MaxInt32
}

// queries returns the queries of runs and of the published figures, in
// order.
func queries(runs []nexRun) []string {
	var qs []string
	for _, r := range runs {
		if !slices.Contains(qs, r.query) {
			qs = append(qs, r.query)
		}
	}
	return qs
}

// configLabel names a run's parallelism: "2 workers", "2 processes × 1 worker".
func configLabel(workers, procs int) string {
	w := fmt.Sprintf("%d worker", workers)
	if workers != 1 {
		w += "s"
	}
	if procs > 1 {
		return fmt.Sprintf("%d processes × %s", procs, w)
	}
	return w
}

// nexmarkAbout says what the Nexmark section measures.
const nexmarkAbout = "`weir bench nexmark` generates the events in the process (generation is timed) and runs each query; " +
	"*checked* says the result's checksum equals the hand-written single-threaded loop's. " +
	"*engine / loop* is the engine's events/s over that loop's (the loop generates the same events inline, on one core). " +
	"Flink's and Feldera's are their published per-core figures, with the generator in the process. " +
	"The targets are per core at 2 workers (q0–q2 4 M events/s, the others 1.5 M) and, at 1 worker, " +
	"engine / loop (q0–q2 0.5, the others 0.3)."

func (b *builder) nexmark() error {
	g := b.suite("Nexmark", Nexmark, nexmarkAbout)
	if g == nil {
		return nil
	}
	p := &b.p
	runs := nexRuns(g)
	png, err := nexmarkPlot(runs)
	if err := b.plot("nexmark_per_core.png", "Nexmark events/s per core by query: Weir at each worker count, Flink and Feldera (log scale)", png, err); err != nil {
		return err
	}
	b.nexmarkCompare(runs)
	var c commands
	rows := [][]string{{"query", "parallelism", "events", "events/s", "per core", "loop events/s", "engine / loop",
		"latency p50", "latency p99", "checked", "command"}}
	for _, r := range runs {
		m := r.e.Result
		rows = append(rows, []string{r.query, configLabel(r.workers, r.procs), field(m, "events"), si(r.rate, r.hasRate),
			si(r.perCore, r.hasCore), si(r.loopRate, r.hasLoop), times(r.ratio, r.hasRatio),
			millis(num(m, "latency_p50_ms")), millis(num(m, "latency_p99_ms")), checked(m), c.ref(r.e)})
	}
	p.heading(3, "Every run")
	p.table(rows)
	c.write(p)
	return nil
}

// config is a run's parallelism.
type config struct{ workers, procs int }

func (c config) String() string { return configLabel(c.workers, c.procs) }

// configsOf returns the configurations of runs, by cores, then processes.
func configsOf(runs []nexRun) []config {
	var cs []config
	for _, r := range runs {
		if c := (config{r.workers, r.procs}); !slices.Contains(cs, c) {
			cs = append(cs, c)
		}
	}
	slices.SortFunc(cs, func(a, b config) int {
		if a.workers*a.procs != b.workers*b.procs {
			return a.workers*a.procs - b.workers*b.procs
		}
		return a.procs - b.procs
	})
	return cs
}

// nexmarkCompare writes per core by query next to the published figures,
// and the targets.
func (b *builder) nexmarkCompare(runs []nexRun) {
	perCore := map[string]map[config]float64{} // query -> config -> per core
	ratio1 := map[string]float64{}
	for _, r := range runs {
		if r.hasCore {
			if perCore[r.query] == nil {
				perCore[r.query] = map[config]float64{}
			}
			perCore[r.query][config{r.workers, r.procs}] = r.perCore
		}
		if r.workers == 1 && r.procs == 1 && r.hasRatio {
			ratio1[r.query] = r.ratio
		}
	}
	configs := configsOf(runs)
	head := []string{"query"}
	for _, c := range configs {
		head = append(head, "Weir per core, "+c.String())
	}
	head = append(head, "Flink", "Feldera", "2 workers / Flink", "2 workers / Feldera", "engine / loop, 1 worker", "target met")
	rows := [][]string{head}
	for _, q := range queries(runs) {
		row := []string{q}
		for _, c := range configs {
			v, ok := perCore[q][c]
			row = append(row, si(v, ok))
		}
		two, ok2 := perCore[q][config{2, 1}]
		fl, okf := Flink.PerCore[q]
		fe, oke := Feldera.PerCore[q]
		r1, okr := ratio1[q]
		row = append(row, si(fl, okf), si(fe, oke), times(two/fl, ok2 && okf), times(two/fe, ok2 && oke), times(r1, okr), targetMet(q, two, ok2, r1, okr))
		rows = append(rows, row)
	}
	b.p.heading(3, "Per core, next to Flink and Feldera")
	b.p.table(rows)
	b.p.para("Feldera's q0–q3, q5 and q8 are published as about 410–440 K events/s per core; the table and plot use 425 K.")
}

// targetMet says whether query q meets its targets.
func targetMet(q string, perCore float64, okCore bool, ratio float64, okRatio bool) string {
	if !okCore || !okRatio {
		return none
	}
	t := targetOf(q)
	var missed []string
	if perCore < t.perCore {
		missed = append(missed, fmt.Sprintf("per core %s < %s", si(perCore, true), si(t.perCore, true)))
	}
	if ratio < t.ratio {
		missed = append(missed, fmt.Sprintf("engine / loop %.2f < %.1f", ratio, t.ratio))
	}
	if len(missed) == 0 {
		return "yes"
	}
	return "**no**: " + strings.Join(missed, ", ")
}

// nexmarkPlot draws events/s per core by query: Weir at each worker
// count, Flink and Feldera, on a log scale.
func nexmarkPlot(runs []nexRun) ([]byte, error) {
	var ss []dots
	for i, c := range configsOf(runs) {
		_, g := style(i)
		s := dots{name: "Weir, " + c.String(), at: map[string]float64{}, glyph: g}
		for _, r := range runs {
			if r.hasCore && (config{r.workers, r.procs}) == c {
				s.at[r.query] = r.perCore
			}
		}
		ss = append(ss, s)
	}
	// The published figures are hollow, Weir's filled.
	ss = append(ss, dots{"Flink (published)", Flink.PerCore, draw.GlyphStyle{Color: palette[6], Shape: draw.TriangleGlyph{}}},
		dots{"Feldera (published; 425K for 410–440K)", Feldera.PerCore, draw.GlyphStyle{Color: palette[3], Shape: draw.RingGlyph{}}})
	for i := range ss {
		ss[i].glyph.Radius = vg.Points(4.5)
	}
	p := newPlot("Nexmark: events/s per core", "query", "events/s per core (log)")
	lo, hi, err := dotPlot(p, queries(runs), ss, 0.7)
	if err != nil {
		return nil, err
	}
	logY(p, lo, hi*5) // room above for the legend
	p.Legend.Top, p.Legend.Left = true, false
	return render(p)
}
