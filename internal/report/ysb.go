package report

import (
	"math"
	"slices"

	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// ysbRun is one line of `weir bench ysb`.
type ysbRun struct {
	e                      Entry
	workers, procs, cores  int
	rate, p50, p99         float64
	hasRate, hasP50, hasP9 bool
}

func ysbRuns(g *group) []ysbRun {
	var out []ysbRun
	for _, e := range g.results {
		m := e.Result
		r := ysbRun{e: e, workers: intOr(m, "workers", 0), procs: intOr(m, "processes", 1)}
		r.cores = intOr(m, "gomaxprocs", r.workers) * r.procs
		r.rate, r.hasRate = num(m, "events_per_s")
		r.p50, r.hasP50 = num(m, "latency_p50_ms")
		r.p99, r.hasP9 = num(m, "latency_p99_ms")
		out = append(out, r)
	}
	slices.SortStableFunc(out, func(a, b ysbRun) int {
		if a.cores != b.cores {
			return a.cores - b.cores
		}
		return a.procs - b.procs
	})
	return out
}

// ysbAbout says what the YSB section measures.
const ysbAbout = "`weir bench ysb` generates the events in memory beforehand (not timed) and runs the YSB query over them " +
	"(the median of --runs runs); every run's output is checked against a plain computation. GOMAXPROCS follows " +
	"--workers, so the cores are workers × processes. Epoch latency is from an epoch's earliest source cut to its end, " +
	"over the epochs of the runs (p50 and p99 are the medians over runs). With `--baseline` the hand-written " +
	"single-threaded loop runs the same query on the same events (*engine / loop*)."

func (b *builder) ysb() error {
	g := b.suite("YSB", YSB, ysbAbout)
	if g == nil {
		return nil
	}
	p := &b.p
	var c commands
	rows := [][]string{{"parallelism", "cores", "events", "events/s", "per core", "epochs", "latency p50", "latency p99",
		"loop events/s", "engine / loop", "wire bytes/event", "checked", "command"}}
	for _, r := range ysbRuns(g) {
		m := r.e.Result
		loop, okl := num(m, "baseline_events_per_s")
		ratio, okr := num(m, "ratio_to_baseline")
		wire, okw := num(m, "wire_bytes_per_event")
		rows = append(rows, []string{configLabel(r.workers, r.procs), itoa(r.cores), field(m, "events"), si(r.rate, r.hasRate),
			si(r.rate/float64(r.cores), r.hasRate && r.cores > 0), field(m, "epochs"), millis(r.p50, r.hasP50), millis(r.p99, r.hasP9),
			si(loop, okl), times(ratio, okr), plain(wire, okw), checked(m), c.ref(r.e)})
	}
	p.table(rows)
	c.write(p)
	return nil
}

// throughput plots events/s against workers and processes, YSB's and
// each Nexmark query's.
func (b *builder) throughput() error {
	p := &b.p
	p.heading(2, "Throughput against workers and processes")
	type point struct {
		cores, procs int
		label        string
		rate         float64
	}
	type series struct {
		name   string
		points []point
	}
	var ss []series
	if g := b.groups[YSB]; g.has() {
		s := series{name: "YSB"}
		for _, r := range ysbRuns(g) {
			if r.hasRate {
				s.points = append(s.points, point{r.cores, r.procs, configLabel(r.workers, r.procs), r.rate})
			}
		}
		ss = append(ss, s)
	}
	if g := b.groups[Nexmark]; g.has() {
		runs := nexRuns(g)
		for _, q := range queries(runs) {
			s := series{name: "Nexmark " + q}
			for _, r := range runs {
				if r.query == q && r.hasRate {
					s.points = append(s.points, point{r.workers * r.procs, r.procs, configLabel(r.workers, r.procs), r.rate})
				}
			}
			ss = append(ss, s)
		}
	}
	var configs []point // in order of cores, then processes
	for _, s := range ss {
		for _, pt := range s.points {
			if !slices.ContainsFunc(configs, func(c point) bool { return c.label == pt.label }) {
				configs = append(configs, pt)
			}
		}
	}
	if len(configs) == 0 {
		p.para("No YSB or Nexmark figure: nothing to plot.")
		return nil
	}
	slices.SortStableFunc(configs, func(a, b point) int {
		if a.cores != b.cores {
			return a.cores - b.cores
		}
		return a.procs - b.procs
	})
	var labels []string
	for _, c := range configs {
		labels = append(labels, c.label)
	}
	pl := newPlot("Throughput against workers and processes", "parallelism", "events/s (log)")
	lo, hi := math.Inf(1), 0.0
	for i, s := range ss {
		var xys plotter.XYs
		for x, l := range labels {
			for _, pt := range s.points {
				if pt.label == l && pt.rate > 0 {
					xys = append(xys, plotter.XY{X: float64(x), Y: pt.rate})
					lo, hi = min(lo, pt.rate), max(hi, pt.rate)
				}
			}
		}
		if len(xys) == 0 {
			continue
		}
		l, pts, err := plotter.NewLinePoints(xys)
		if err != nil {
			return err
		}
		l.Color, pts.GlyphStyle = style(i)
		l.Width = vg.Points(1.5)
		if i >= len(palette) { // the colours come round again: dash the line
			l.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
		}
		pl.Add(l, pts)
		pl.Legend.Add(s.name, l, pts)
	}
	pl.NominalX(labels...)
	// Room on the right for the legend.
	pl.X.Min, pl.X.Max = -0.3, float64(len(labels))-0.7+0.8
	logY(pl, lo, hi)
	pl.Legend.Top = true
	p.para("The figures are those of the YSB and Nexmark tables.")
	png, err := render(pl)
	return b.plot("throughput.png", "Events/s of YSB and of each Nexmark query against workers and processes (log scale)", png, err)
}
