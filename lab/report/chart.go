package report

import (
	"fmt"
	"image/color"
	"math"
	"os"
	"path/filepath"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"github.com/timewheel/timewheel/lab/workload"
)

// Charts writes into dir, creating it, log-log charts of cost against n as
// PNG and SVG: one per contender, a line per workload measured in ns, and
// one per workload, a line per contender. It returns the files written.
func Charts(dir string, r *Results, l Layout) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var files []string
	write := func(name string, c chart) error {
		if c.empty() {
			return nil
		}
		for _, format := range []string{"png", "svg"} {
			path := filepath.Join(dir, name+"."+format)
			if err := c.save(path, format); err != nil {
				return err
			}
			files = append(files, path)
		}
		return nil
	}
	for _, k := range l.Kinds {
		c := chart{title: fmt.Sprintf("%s: %s against pending timers", k, k.Unit()), unit: k.Unit()}
		for i, ct := range l.Contenders {
			if ct.Supports(k) {
				c.add(ct.Name, series(r, ct.Name, k, l.Sizes), i)
			}
		}
		if err := write("workload-"+string(k), c); err != nil {
			return files, err
		}
	}
	for _, ct := range l.Contenders {
		c := chart{title: fmt.Sprintf("%s: ns per operation against pending timers", ct.Name), unit: "ns"}
		for i, k := range l.Kinds {
			if k != workload.Memory && ct.Supports(k) {
				c.add(fmt.Sprintf("%s (%s)", k, k.Unit()), series(r, ct.Name, k, l.Sizes), i)
			}
		}
		if err := write("structure-"+ct.Name, c); err != nil {
			return files, err
		}
	}
	return files, nil
}

// series returns the measured points of one contender's workload.
func series(r *Results, contender string, k workload.Kind, sizes []int) plotter.XYs {
	var xys plotter.XYs
	for _, n := range sizes {
		if x, ok := r.Get(contender, k, n); ok && x.Status == workload.OK && x.Value > 0 {
			xys = append(xys, plotter.XY{X: float64(n), Y: x.Value})
		}
	}
	return xys
}

// chart is one figure: lines with their names, and style indexes.
type chart struct {
	title, unit string
	names       []string
	lines       []plotter.XYs
	styles      []int
}

func (c *chart) add(name string, xys plotter.XYs, style int) {
	if len(xys) == 0 {
		return
	}
	c.names, c.lines, c.styles = append(c.names, name), append(c.lines, xys), append(c.styles, style)
}

func (c *chart) empty() bool { return len(c.lines) == 0 }

// palette holds colours told apart easily (Tableau's ten and three more).
var palette = []color.RGBA{
	{31, 119, 180, 255}, {255, 127, 14, 255}, {44, 160, 44, 255}, {214, 39, 40, 255},
	{148, 103, 189, 255}, {140, 86, 75, 255}, {227, 119, 194, 255}, {127, 127, 127, 255},
	{188, 189, 34, 255}, {23, 190, 207, 255}, {0, 0, 0, 255}, {255, 187, 120, 255}, {0, 0, 128, 255},
}

const (
	chartWidth  = 9 * vg.Inch
	chartHeight = 5.5 * vg.Inch
	legendWidth = 2.4 * vg.Inch
)

// save draws the chart, its legend to the right of the plot, as format.
func (c *chart) save(path, format string) error {
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
			return err
		}
		s := c.styles[i]
		col := palette[s%len(palette)]
		line.Color, points.Color = col, col
		line.Width = vg.Points(1.5)
		line.Dashes = plotutil.Dashes(s / 5 % 3)
		points.Shape = plotutil.Shape(s % 7)
		points.Radius = vg.Points(3)
		p.Add(line, points)
		legend.Add(c.names[i], line, points)
	}
	var canvas vg.CanvasWriterTo
	if format == "png" { // sharper than the default 96 dpi
		canvas = vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(chartWidth, chartHeight), vgimg.UseDPI(144))}
	} else {
		var err error
		if canvas, err = draw.NewFormattedCanvas(chartWidth, chartHeight, format); err != nil {
			return err
		}
	}
	dc := draw.New(canvas)
	pad := vg.Points(8)
	p.Draw(draw.Crop(dc, pad, -legendWidth, pad, -pad))
	legend.Draw(draw.Crop(dc, chartWidth-legendWidth+vg.Points(10), 0, 0, -vg.Points(40)))
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := canvas.WriteTo(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
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
	switch d.unit {
	case "":
		return fmt.Sprintf("1e%d", e)
	case "B/timer":
		return scaled(v, []string{"B", "kB", "MB", "GB"})
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
	return fmt.Sprintf("%g %s", v, units[i])
}
