package report

import (
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// latency plots the epoch latency percentiles: YSB's by parallelism, and
// each Nexmark query's.
func (b *builder) latency() error {
	p := &b.p
	p.heading(2, "Epoch latency")
	p.para("An epoch's latency is from its earliest source cut to its end; p50 and p99 are over the epochs of a run " +
		"(the medians over runs), cut every `--interval` of the commands. The figures are those of the YSB and Nexmark tables.")
	var ysb, nex *plot.Plot
	var err error
	if g := b.groups[YSB]; g.has() {
		if ysb, err = ysbLatencyPlot(ysbRuns(g)); err != nil {
			return err
		}
	}
	if g := b.groups[Nexmark]; g.has() {
		if nex, err = nexmarkLatencyPlot(nexRuns(g)); err != nil {
			return err
		}
	}
	if ysb == nil && nex == nil {
		p.para("No YSB or Nexmark line holds latency percentiles: nothing to plot.")
		return nil
	}
	if ysb != nil {
		png, err := render(ysb)
		if err := b.plot("latency.png", "YSB epoch latency p50 and p99 by parallelism", png, err); err != nil {
			return err
		}
	}
	if nex != nil {
		png, err := render(nex)
		return b.plot("nexmark_latency.png", "Nexmark epoch latency p50 and p99 by query and parallelism (log scale)", png, err)
	}
	return nil
}

// ysbLatencyPlot draws YSB's p50 and p99 as bars by parallelism; nil if
// no line has them.
func ysbLatencyPlot(runs []ysbRun) (*plot.Plot, error) {
	var labels []string
	var p50, p99 plotter.Values
	for _, r := range runs {
		if r.hasP50 && r.hasP9 {
			labels = append(labels, configLabel(r.workers, r.procs))
			p50, p99 = append(p50, r.p50), append(p99, r.p99)
		}
	}
	if len(labels) == 0 {
		return nil, nil
	}
	pl := newPlot("YSB: epoch latency", "parallelism", "epoch latency, ms")
	w := vg.Points(20)
	for i, v := range []plotter.Values{p50, p99} {
		bars, err := plotter.NewBarChart(v, w)
		if err != nil {
			return nil, err
		}
		bars.Color, _ = style(i)
		bars.LineStyle.Width = 0
		bars.Offset = w * vg.Length(2*i-1) / 2
		pl.Add(bars)
		pl.Legend.Add([]string{"p50", "p99"}[i], bars)
	}
	pl.NominalX(labels...)
	pl.Y.Min, pl.Y.Max = 0, 1.25*max(slices.Max(p99), slices.Max(p50))
	pl.Legend.Top, pl.Legend.Left = true, true
	pl.Legend.XOffs = vg.Points(8)
	return pl, nil
}

// nexmarkLatencyPlot draws each query's p99 (filled) and p50 (hollow) at
// each parallelism, on a log scale; nil if no line has them.
func nexmarkLatencyPlot(runs []nexRun) (*plot.Plot, error) {
	var ss []dots
	for ci, c := range configsOf(runs) {
		col, filled := style(ci)
		hollow := draw.GlyphStyle{Color: col, Radius: filled.Radius, Shape: draw.RingGlyph{}}
		p99 := dots{name: "p99, " + c.String(), at: map[string]float64{}, glyph: filled}
		p50 := dots{name: "p50, " + c.String(), at: map[string]float64{}, glyph: hollow}
		for _, r := range runs {
			if (config{r.workers, r.procs}) == c {
				if v, ok := num(r.e.Result, "latency_p99_ms"); ok {
					p99.at[r.query] = v
				}
				if v, ok := num(r.e.Result, "latency_p50_ms"); ok {
					p50.at[r.query] = v
				}
			}
		}
		ss = append(ss, p99, p50)
	}
	pl := newPlot("Nexmark: epoch latency", "query", "epoch latency, ms (log)")
	lo, hi, err := dotPlot(pl, queries(runs), ss, 0.6)
	if err != nil {
		return nil, err
	}
	if hi == 0 {
		return nil, nil
	}
	logY(pl, lo, hi*10)
	pl.Legend.Top, pl.Legend.Left = true, true
	pl.Legend.XOffs = vg.Points(8)
	return pl, nil
}
