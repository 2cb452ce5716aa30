package report

import (
	"fmt"
	"image/color"
	"math"
	"slices"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// skewRow is one strategy's figures in a line of `weir bench skew`.
type skewRow struct {
	e          Entry
	simulated  bool
	strategy   string
	partitions int
	figs       map[string]any
	ratio      float64
	hasRatio   bool
}

// skewRows splits the lines into one row per strategy, ordered by
// partitions and strategy.
func skewRows(g *group) []skewRow {
	var out []skewRow
	for _, e := range g.results {
		m := e.Result
		sim, _ := m["simulate"].(bool)
		ratios, _ := m["ratio_to_hash"].(map[string]any)
		per, ok := m["strategies"].(map[string]any)
		if !ok { // one strategy: its figures are the line's
			per = map[string]any{str(m, "strategy"): m}
		}
		for name, f := range per {
			figs, _ := f.(map[string]any)
			if figs == nil {
				continue
			}
			r := skewRow{e: e, simulated: sim, strategy: name, figs: figs}
			r.partitions = intOr(figs, "partitions", intOr(m, "partitions", 0))
			r.ratio, r.hasRatio = num(ratios, name)
			out = append(out, r)
		}
	}
	slices.SortStableFunc(out, func(a, b skewRow) int {
		if a.simulated != b.simulated {
			return map[bool]int{false: -1, true: 1}[a.simulated]
		}
		if a.partitions != b.partitions {
			return a.partitions - b.partitions
		}
		return strategyOrder(a.strategy) - strategyOrder(b.strategy)
	})
	return out
}

var strategies = []string{"hash", "roundrobin", "pkg", "prompt"}

func strategyOrder(s string) int {
	if i := slices.Index(strategies, s); i >= 0 {
		return i
	}
	return len(strategies)
}

// skewData describes a line's keys: "zipf s=1.5, 100000 keys".
func skewData(m map[string]any) string {
	d := str(m, "dist")
	if s, ok := num(m, "s"); ok {
		d += fmt.Sprintf(" s=%g", s)
	}
	if k, ok := num(m, "keys"); ok {
		d += fmt.Sprintf(", %.0f keys", k)
	}
	if w, ok := num(m, "words"); ok {
		d += fmt.Sprintf(", %.0f words", w)
	}
	return d
}

// skewAbout says what the Skew section measures.
const skewAbout = "`weir bench skew` counts records per key and one-second window over skewed keys under each partitioning " +
	"strategy (interleaved in one process, output checked against a plain computation); `--simulate` runs no job but " +
	"replays epochs through each strategy's planner under a cost model. Imbalance is the largest load over the mean " +
	"(1 is even): map over the map tasks' records, reduce over what the reducers receive."

func (b *builder) skew() error {
	g := b.suite("Skew", Skew, skewAbout)
	if g == nil {
		return nil
	}
	p := &b.p
	rows := skewRows(g)
	png, err := skewPlot(rows)
	if err := b.plot("skew_imbalance.png", "Map and reduce imbalance against partitions, by strategy: simulated (lines) and measured (rings)", png, err); err != nil {
		return err
	}
	var c commands
	measured := [][]string{{"data", "partitions", "strategy", "events/s", "/ hash", "map imbalance", "reduce imbalance",
		"split keys", "latency p50", "latency p99", "command"}}
	simulated := [][]string{{"data", "partitions", "strategy", "map imbalance", "reduce imbalance", "split keys",
		"modelled events/s", "/ hash", "command"}}
	for _, r := range rows {
		f := r.figs
		if r.simulated {
			simulated = append(simulated, []string{skewData(r.e.Result), itoa(r.partitions), r.strategy, imbalance(num(f, "map_imbalance")),
				imbalance(num(f, "reduce_imbalance")), field(f, "split_keys"), si(num(f, "events_per_s")), times(r.ratio, r.hasRatio), c.ref(r.e)})
			continue
		}
		measured = append(measured, []string{skewData(r.e.Result), itoa(r.partitions), r.strategy, si(num(f, "events_per_s")),
			times(r.ratio, r.hasRatio), imbalance(num(f, "map_imbalance")), imbalance(num(f, "reduce_imbalance")), field(f, "split_keys"),
			millis(num(f, "latency_p50_ms")), millis(num(f, "latency_p99_ms")), c.ref(r.e)})
	}
	if len(measured) > 1 {
		p.heading(3, "Measured")
		p.table(measured)
	}
	if len(simulated) > 1 {
		p.heading(3, "Simulated")
		p.table(simulated)
	}
	c.write(p)
	return nil
}

// skewPlot draws map and reduce imbalance against partitions, a line per
// strategy for the simulation and rings for the measured runs.
func skewPlot(rows []skewRow) ([]byte, error) {
	var parts []int
	for _, r := range rows {
		if r.partitions > 0 && !slices.Contains(parts, r.partitions) {
			parts = append(parts, r.partitions)
		}
	}
	slices.Sort(parts)
	var panels []*plot.Plot
	for i, key := range []string{"map_imbalance", "reduce_imbalance"} {
		pl := newPlot(strings.Replace(key, "_", " ", 1), "partitions (log)", "imbalance, max / mean (log)")
		hi := 1.0
		for k, s := range strategies {
			col, glyph := style(k)
			glyph.Shape = shapes[k%3] // filled: the measured points are rings
			for _, sim := range []bool{true, false} {
				var xys plotter.XYs
				for _, r := range rows {
					if v, ok := num(r.figs, key); ok && r.strategy == s && r.simulated == sim && r.partitions > 0 && v > 0 {
						xys = append(xys, plotter.XY{X: float64(r.partitions), Y: v})
						hi = max(hi, v)
					}
				}
				if len(xys) == 0 {
					continue
				}
				if err := addSkewSeries(pl, xys, sim, col, glyph, s, i == 0); err != nil {
					return nil, err
				}
			}
		}
		pl.X.Scale = plot.LogScale{}
		var ticks []plot.Tick
		for _, n := range parts {
			ticks = append(ticks, plot.Tick{Value: float64(n), Label: itoa(n)})
		}
		pl.X.Tick.Marker = plot.ConstantTicks(ticks)
		if len(parts) > 0 {
			pl.X.Min, pl.X.Max = float64(parts[0])/1.2, float64(parts[len(parts)-1])*1.2
		}
		logY(pl, 1, hi)
		pl.Y.Min, pl.Y.Max = 0.9, math.Max(hi*1.5, 2)
		pl.Legend.Top, pl.Legend.Left = true, true
		panels = append(panels, pl)
	}
	return render(panels...)
}

// addSkewSeries adds one strategy's points: a line when simulated, rings
// when measured; legend says whether they go in the legend.
func addSkewSeries(pl *plot.Plot, xys plotter.XYs, sim bool, col color.Color, glyph draw.GlyphStyle, name string, legend bool) error {
	if sim {
		l, pts, err := plotter.NewLinePoints(xys)
		if err != nil {
			return err
		}
		l.Color, l.Width = col, vg.Points(1.5)
		pts.GlyphStyle = glyph
		pts.GlyphStyle.Radius = vg.Points(2.5)
		pl.Add(l, pts)
		if legend {
			pl.Legend.Add(name+" (simulated)", l, pts)
		}
		return nil
	}
	sc, err := plotter.NewScatter(xys)
	if err != nil {
		return err
	}
	sc.GlyphStyle = draw.GlyphStyle{Color: col, Radius: vg.Points(5), Shape: draw.RingGlyph{}}
	pl.Add(sc)
	if legend {
		pl.Legend.Add(name+" (measured)", sc)
	}
	return nil
}
