package report

import (
	"bytes"
	"fmt"
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// Every plot is a PNG of PlotWidth × PlotHeight pixels.
const (
	PlotWidth  = 768
	PlotHeight = 432
	plotDPI    = 96
)

// palette is Okabe and Ito's, which reads in colour blindness too.
var palette = []color.Color{
	color.RGBA{0, 114, 178, 255},   // blue
	color.RGBA{213, 94, 0, 255},    // vermillion
	color.RGBA{0, 158, 115, 255},   // green
	color.RGBA{204, 121, 167, 255}, // purple
	color.RGBA{230, 159, 0, 255},   // orange
	color.RGBA{86, 180, 233, 255},  // sky
	color.RGBA{0, 0, 0, 255},       // black
	color.RGBA{240, 228, 66, 255},  // yellow
}

// shapes are filled first, then hollow.
var shapes = []draw.GlyphDrawer{draw.CircleGlyph{}, draw.BoxGlyph{}, draw.PyramidGlyph{},
	draw.RingGlyph{}, draw.SquareGlyph{}, draw.TriangleGlyph{}, draw.CrossGlyph{}, draw.PlusGlyph{}}

// style returns series i's colour and glyph.
func style(i int) (color.Color, draw.GlyphStyle) {
	c := palette[i%len(palette)]
	return c, draw.GlyphStyle{Color: c, Radius: vg.Points(3.5), Shape: shapes[(i/len(palette)+i)%len(shapes)]}
}

// newPlot returns a plot with a title and axis labels, and a grid.
func newPlot(title, x, y string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = x
	p.Y.Label.Text = y
	g := plotter.NewGrid()
	g.Vertical.Color = nil
	p.Add(g)
	return p
}

// logY makes p's Y axis logarithmic over [lo, hi], widened to whole
// steps of the ticks.
func logY(p *plot.Plot, lo, hi float64) {
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = siLogTicks{}
	p.Y.Min = math.Pow(10, math.Floor(math.Log10(lo)))
	p.Y.Max = math.Pow(10, math.Ceil(math.Log10(hi)))
}

// siLogTicks marks 1, 2 and 5 of each power of ten with K, M, G labels
// (only 1 over a wide range), and the other digits without.
type siLogTicks struct{}

func (siLogTicks) Ticks(lo, hi float64) []plot.Tick {
	// Over more than 4 powers of ten, only the powers are labelled.
	wide := math.Log10(hi/lo) > 4
	var ts []plot.Tick
	for e := math.Floor(math.Log10(lo)); e <= math.Ceil(math.Log10(hi)); e++ {
		for m := 1.0; m < 10; m++ {
			v := m * math.Pow(10, e)
			if v < lo*(1-1e-9) || v > hi*(1+1e-9) {
				continue
			}
			t := plot.Tick{Value: v}
			if m == 1 || !wide && (m == 2 || m == 5) {
				t.Label = shortSI(v)
			}
			ts = append(ts, t)
		}
	}
	return ts
}

// shortSI writes v as 500, 2K, 10M, 1G.
func shortSI(v float64) string {
	for _, u := range []struct {
		f float64
		s string
	}{{1e9, "G"}, {1e6, "M"}, {1e3, "K"}} {
		if v >= u.f {
			return fmt.Sprintf("%g%s", math.Round(v/u.f*10)/10, u.s)
		}
	}
	return fmt.Sprintf("%g", v)
}

// render draws plots side by side into a PNG.
func render(plots ...*plot.Plot) ([]byte, error) {
	c := vgimg.NewWith(vgimg.UseDPI(plotDPI),
		vgimg.UseWH(vg.Length(PlotWidth)*vg.Inch/plotDPI, vg.Length(PlotHeight)*vg.Inch/plotDPI))
	dc := draw.New(c)
	if len(plots) == 1 {
		plots[0].Draw(dc)
	} else {
		pad := vg.Points(6)
		tiles := draw.Tiles{Rows: 1, Cols: len(plots), PadX: 3 * pad, PadTop: pad, PadBottom: pad, PadLeft: pad, PadRight: pad}
		for i, tc := range plot.Align([][]*plot.Plot{plots}, tiles, dc)[0] {
			plots[i].Draw(tc)
		}
	}
	var b bytes.Buffer
	if _, err := (vgimg.PngCanvas{Canvas: c}).WriteTo(&b); err != nil {
		return nil, fmt.Errorf("report: drawing a plot: %w", err)
	}
	return b.Bytes(), nil
}

// dots is a series of a dot plot: a value per category.
type dots struct {
	name  string
	at    map[string]float64
	glyph draw.GlyphStyle
}

// dotPlot adds each series' positive values at their categories (the
// series side by side within a category) and the legend, makes the X
// axis the categories, and returns the range of the values (lo > hi if
// there are none).
func dotPlot(p *plot.Plot, cats []string, ss []dots, spread float64) (lo, hi float64, err error) {
	lo, hi = math.Inf(1), 0.0
	for i, s := range ss {
		var xys plotter.XYs
		for j, c := range cats {
			if v, ok := s.at[c]; ok && v > 0 {
				off := (float64(i) - float64(len(ss)-1)/2) * spread / float64(len(ss))
				xys = append(xys, plotter.XY{X: float64(j) + off, Y: v})
				lo, hi = min(lo, v), max(hi, v)
			}
		}
		if len(xys) == 0 {
			continue
		}
		sc, err := plotter.NewScatter(xys)
		if err != nil {
			return 0, 0, err
		}
		sc.GlyphStyle = s.glyph
		p.Add(sc)
		p.Legend.Add(s.name, sc)
	}
	p.NominalX(cats...)
	p.X.Min, p.X.Max = -0.5, float64(len(cats))-0.5
	return lo, hi, nil
}
