package report

import (
	"bytes"
	"fmt"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"github.com/timewheel/timewheel/lab/workload"
)

// Figure is one chart of a run: the name of its files, and what it draws.
type Figure struct {
	Name  string // "workload-churn": its files are Name.png and Name.svg
	Title string
	chart chart
}

// Figures returns every chart of a run, log-log, cost against n, one unit
// on each axis:
//   - one per workload, a line per contender, its time (or bytes);
//   - one per counted workload, a line per structure, its steps;
//   - one per contender, a line per workload measured in ns/op.
//
// Every line
// of a contender has its colour and marker (styleOf), in every chart of
// every run; the lines of a contender's own chart differ by their dashes.
// A line that
// stops where a cell went over budget ends in a cross at the size it
// could not finish, and says so in the legend.
func Figures(r *Results, l Layout) []Figure {
	var fs []Figure
	add := func(name string, c chart) {
		if !c.empty() {
			fs = append(fs, Figure{Name: name, Title: c.title, chart: c})
		}
	}
	for _, v := range []view{timed, counted} {
		prefix, counting := "workload-", ""
		if v.steps {
			prefix, counting = "steps-", ", counted"
		}
		for _, k := range l.Kinds {
			c := chart{title: fmt.Sprintf("%s: %s against pending timers%s", k, v.unit(k), counting), unit: v.unit(k)}
			for _, ct := range l.Contenders {
				if v.shows(ct, k) {
					c.add(ct.Name, v, r, ct.Name, k, l.Sizes, styleOf(ct.Name))
				}
			}
			add(prefix+string(k), c)
		}
	}
	for _, ct := range l.Contenders {
		c := chart{title: fmt.Sprintf("%s: ns per operation against pending timers", ct.Name), unit: "ns/op"}
		for _, k := range l.Kinds {
			if k.Unit() == "ns/op" && ct.Supports(k) {
				st := styleOf(ct.Name)
				st.Dash = kindDashes[k]
				c.add(string(k), timed, r, ct.Name, k, l.Sizes, st)
			}
		}
		add("structure-"+ct.Name, c)
	}
	return fs
}

// Charts writes into dir, creating it, every figure of the run (see
// Figures) as PNG and SVG. It returns the files written.
func Charts(dir string, r *Results, l Layout) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var files []string
	for _, f := range Figures(r, l) {
		for _, format := range []string{"png", "svg"} {
			data, err := f.Render(format)
			if err != nil {
				return files, err
			}
			path := filepath.Join(dir, f.Name+"."+format)
			if err := os.WriteFile(path, data, 0o644); err != nil {
				return files, err
			}
			files = append(files, path)
		}
	}
	return files, nil
}

// chart is one figure: lines with their names and styles, and where each
// stopped over budget.
type chart struct {
	title, unit string
	names       []string
	lines       []plotter.XYs
	overs       []plotter.XYs // one point or none: the first size over budget, at the line's last value
	styles      []style
}

// add adds the line of one contender's workload in view v: its cells at
// the sizes, up to the first over budget.
func (c *chart) add(name string, v view, r *Results, contender string, k workload.Kind, sizes []int, st style) {
	var xys, over plotter.XYs
	for _, n := range sizes {
		x, ok := v.get(r, contender, k, n)
		switch {
		case !ok:
		case x.Status == workload.OK && x.Value > 0:
			xys = append(xys, plotter.XY{X: float64(n), Y: x.Value})
		case x.Status != workload.OK && len(over) == 0 && len(xys) > 0:
			over = plotter.XYs{{X: float64(n), Y: xys[len(xys)-1].Y}}
			name += " (over budget from " + SizeLabel(n) + ")"
		}
	}
	if len(xys) == 0 {
		return
	}
	c.names, c.lines, c.overs, c.styles = append(c.names, name), append(c.lines, xys), append(c.overs, over), append(c.styles, st)
}

func (c *chart) empty() bool { return len(c.lines) == 0 }

// span returns the least and the greatest value the chart draws.
func (c *chart) span() (lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, xys := range c.lines { // an over-budget cross sits at its line's last value
		for _, p := range xys {
			lo, hi = min(lo, p.Y), max(hi, p.Y)
		}
	}
	return lo, hi
}

// style is how the charts draw a contender's lines: a colour, a marker
// and a dash pattern.
type style struct {
	Colour color.RGBA
	Marker marker
	Dash   int // an index of plotutil.DefaultDashes
}

// Hex returns the style's colour as "#1f77b4".
func (s style) Hex() string {
	return fmt.Sprintf("#%02x%02x%02x", s.Colour.R, s.Colour.G, s.Colour.B)
}

// marker is a glyph of the charts, with the character that stands for it
// in text.
type marker struct {
	glyph  draw.GlyphDrawer
	Symbol string
}

// The markers. A cross is not one of them: it marks where a line went
// over budget.
var (
	ring     = marker{draw.RingGlyph{}, "○"}
	square   = marker{draw.SquareGlyph{}, "□"}
	triangle = marker{draw.TriangleGlyph{}, "△"}
	plus     = marker{draw.PlusGlyph{}, "+"}
	disc     = marker{draw.CircleGlyph{}, "●"}
	box      = marker{draw.BoxGlyph{}, "■"}
	pyramid  = marker{draw.PyramidGlyph{}, "▲"}
)

// styles is every contender's style, fixed by name, so that a structure
// looks the same in every chart of a run and in every run, whatever
// -only leaves out. The colours are Tableau's ten and three more; the
// engine is black.
var styles = map[string]style{
	"unordered": {color.RGBA{31, 119, 180, 255}, ring, 0},
	"sorted":    {color.RGBA{255, 127, 14, 255}, square, 0},
	"heap":      {color.RGBA{44, 160, 44, 255}, triangle, 0},
	"heap4":     {color.RGBA{214, 39, 40, 255}, plus, 0},
	"rbtree":    {color.RGBA{148, 103, 189, 255}, ring, 1},
	"skiplist":  {color.RGBA{140, 86, 75, 255}, box, 1},
	"libco":     {color.RGBA{227, 119, 194, 255}, pyramid, 1},
	"rounds":    {color.RGBA{127, 127, 127, 255}, square, 1},
	"node":      {color.RGBA{188, 189, 34, 255}, triangle, 1},
	"wheel":     {color.RGBA{0, 0, 0, 255}, disc, 0},
	"linux":     {color.RGBA{23, 190, 207, 255}, plus, 1},
	"time":      {color.RGBA{158, 123, 0, 255}, box, 2},
	"timewheel": {color.RGBA{0, 0, 128, 255}, disc, 2},
}

// styleOf returns the style of the contender named name: its own, or a
// grey dotted ring for a name styles lacks.
func styleOf(name string) style {
	if s, ok := styles[name]; ok {
		return s
	}
	return style{color.RGBA{170, 170, 170, 255}, ring, 3}
}

// kindDashes tells apart the workloads in a contender's own chart.
var kindDashes = map[workload.Kind]int{
	workload.Schedule: 0, workload.Cancel: 1, workload.Churn: 2, workload.Refresh: 4,
	workload.Expire: 5, workload.Far: 6, workload.Memory: 3,
}

const (
	chartWidth  = 9 * vg.Inch
	chartHeight = 5.5 * vg.Inch
	legendWidth = 3 * vg.Inch
)

// Render draws the figure, its legend to the right of the plot, as PNG
// or SVG, and returns the file's bytes. The same figure renders to the
// same bytes.
func (f Figure) Render(format string) ([]byte, error) { return f.chart.render(format) }

// render draws the chart as format.
func (c *chart) render(format string) ([]byte, error) {
	p := plot.New()
	p.Title.Text = c.title
	p.X.Label.Text = "pending timers n"
	p.Y.Label.Text = c.unit
	p.X.Scale, p.Y.Scale = plot.LogScale{}, plot.LogScale{}
	p.X.Tick.Marker = decades{unit: ""}
	p.Y.Tick.Marker = decades{unit: c.unit}
	p.Add(plotter.NewGrid())
	legend := plot.NewLegend()
	legend.Top, legend.Left = true, true
	legend.TextStyle.Font.Size = vg.Points(10)
	for i, xys := range c.lines {
		line, points, err := plotter.NewLinePoints(xys)
		if err != nil {
			return nil, err
		}
		s := c.styles[i]
		col := s.Colour
		line.Color, points.Color = col, col
		line.Width = vg.Points(1.5)
		line.Dashes = plotutil.Dashes(s.Dash)
		points.Shape = s.Marker.glyph
		points.Radius = vg.Points(3)
		p.Add(line, points)
		legend.Add(c.names[i], line, points)
		if len(c.overs[i]) > 0 {
			over, err := plotter.NewScatter(c.overs[i])
			if err != nil {
				return nil, err
			}
			over.Color, over.Shape, over.Radius = col, draw.CrossGlyph{}, vg.Points(6)
			p.Add(over)
		}
	}
	p.Y.Min, p.Y.Max = c.yRange()
	var canvas vg.CanvasWriterTo
	if format == "png" { // sharper than the default 96 dpi
		canvas = vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(chartWidth, chartHeight), vgimg.UseDPI(144))}
	} else {
		var err error
		if canvas, err = draw.NewFormattedCanvas(chartWidth, chartHeight, format); err != nil {
			return nil, err
		}
	}
	dc := draw.New(canvas)
	pad := vg.Points(8)
	p.Draw(draw.Crop(dc, pad, -legendWidth, pad, -pad))
	legend.Draw(draw.Crop(dc, chartWidth-legendWidth+vg.Points(10), 0, 0, -vg.Points(40)))
	var b bytes.Buffer
	if _, err := canvas.WriteTo(&b); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// yRange returns the y axis's bounds. They cover the data with a
// labelled tick below it: from the power of ten at or under the least
// value to a 1, 2 or 5 over the greatest. So no point sits on an edge or
// under the first label.
func (c *chart) yRange() (lo, hi float64) {
	lo, hi = c.span()
	return math.Pow(10, math.Floor(math.Log10(lo/1.05))), niceAbove(hi * 1.05)
}

// niceAbove returns the least of 1, 2 and 5 times a power of ten at or
// above v.
func niceAbove(v float64) float64 {
	e := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*e >= v {
			return m * e
		}
	}
	return 10 * e
}

// decades marks the powers of ten of a log axis, labelled 1e3 on the n
// axis and 10 ns, 1 µs, 1 kB on the others, with unlabelled minor ticks.
type decades struct{ unit string }

func (d decades) Ticks(lo, hi float64) []plot.Tick {
	var ticks []plot.Tick
	labelled := 0
	for e := math.Floor(math.Log10(lo)); e <= math.Ceil(math.Log10(hi)); e++ {
		v := math.Pow(10, e)
		if v >= lo/1.0001 && v <= hi*1.0001 {
			ticks = append(ticks, plot.Tick{Value: v, Label: d.label(v, int(e))})
			labelled++
		}
		for m := 2.0; m < 10; m++ {
			if mv := m * v; mv > lo && mv < hi {
				ticks = append(ticks, plot.Tick{Value: mv})
			}
		}
	}
	if labelled < 2 && d.unit != "" { // less than a decade shown: label 2s and 5s too
		for i, t := range ticks {
			if m := t.Value / math.Pow(10, math.Floor(math.Log10(t.Value)+1e-9)); t.Label == "" && (math.Abs(m-2) < 1e-6 || math.Abs(m-5) < 1e-6) {
				ticks[i].Label = d.label(t.Value, 0)
			}
		}
	}
	return ticks
}

func (d decades) label(v float64, e int) string {
	switch {
	case d.unit == "":
		return fmt.Sprintf("1e%d", e)
	case d.unit == "B/timer":
		return scaled(v, []string{"B", "kB", "MB", "GB"})
	case strings.HasPrefix(d.unit, "steps"):
		return scaled(v, []string{"", "k", "M", "G"})
	}
	return scaled(v, []string{"ns", "µs", "ms", "s"})
}

// scaled writes v with the largest unit of the ladder (each 1000 times the
// last) that keeps it at least 1.
func scaled(v float64, units []string) string {
	i := 0
	for v >= 1000 && i < len(units)-1 {
		v /= 1000
		i++
	}
	return strings.TrimSpace(fmt.Sprintf("%g %s", v, units[i]))
}
