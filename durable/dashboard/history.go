package dashboard

import (
	"context"
	"fmt"
	"html/template"
	"math"
	"net/http"
	"strings"
	"time"

	"github.com/timewheel/timewheel/durable"
)

// The history page (?view=history, with &kind= for a kind's, &span= for
// hour, day or month) draws the figures of durable.Queue.History as two
// charts, inline SVG made here: the attempts a minute (hour), started,
// succeeded and failed, and their lateness, p50, p99 and max, on a log
// scale. The page keeps its policy of no script. history.html's
// "history" draws it. It costs one round trip, and one for the kinds.

func init() {
	routes["history"] = route{tab: "history and lateness", get: (*handler).history}
}

// spans are the history page's spans: the points, and whether hourly.
var spans = map[string]struct {
	points int
	hourly bool
	label  string
}{
	"hour":  {60, false, "last hour, by minute"},
	"day":   {1440, false, "last day, by minute"},
	"month": {720, true, "last 30 days, by hour"},
}

// historyView is what the history page shows.
type historyView struct {
	Kind   string // the kind the history is of, "" for the queue's
	Span   string
	Spans  []string
	Labels map[string]string
	Total  durable.Point
	Counts template.HTML
	Late   template.HTML
	Kinds  []string
}

// history is the page of the history of the queue, or of &kind=, over
// &span=.
func (h *handler) history(r *request, v *view) int {
	kind := r.query.Get("kind")
	if err := checkKind(kind); err != nil {
		v.Err = err.Error()
		return http.StatusBadRequest
	}
	hv, err := readHistory(r.ctx, r.q, kind, r.query.Get("span"))
	if err != nil {
		v.Err = err.Error()
		return errStatus(err)
	}
	v.Section, v.Data = "history", hv
	return http.StatusOK
}

// readHistory reads kind's history ("" for the queue's) over span.
func readHistory(ctx context.Context, q *durable.Queue, kind, span string) (*historyView, error) {
	sp, ok := spans[span]
	if !ok {
		span, sp = "hour", spans["hour"]
	}
	hv := &historyView{Kind: kind, Span: span, Spans: []string{"hour", "day", "month"}, Labels: map[string]string{}}
	for k, s := range spans {
		hv.Labels[k] = s.label
	}
	ps, err := q.History(ctx, kind, sp.hourly)
	if err != nil {
		return nil, err
	}
	if hv.Kinds, err = q.HistoryKinds(ctx, 50); err != nil {
		return nil, err
	}
	ps = ps[len(ps)-sp.points:]
	hv.Total = durable.Sum(ps)
	started, ok2, failed := make([]float64, len(ps)), make([]float64, len(ps)), make([]float64, len(ps))
	p50, p99, pmax := make([]float64, len(ps)), make([]float64, len(ps)), make([]float64, len(ps))
	for i, p := range ps {
		started[i], ok2[i], failed[i] = float64(p.Started), float64(p.Succeeded), float64(p.Failed)
		p50[i], p99[i], pmax[i] = math.NaN(), math.NaN(), math.NaN()
		if p.Started > 0 {
			p50[i], p99[i], pmax[i] = lateMs(p.Quantile(0.5)), lateMs(p.Quantile(0.99)), lateMs(p.LateMax)
		}
	}
	unit := "minute"
	if sp.hourly {
		unit = "hour"
	}
	hv.Counts = chart("Attempts a "+unit, ps, false, []series{
		{"started", "#2457c5", started}, {"succeeded", "#1a7f37", ok2}, {"failed", "#b42318", failed}})
	hv.Late = chart("Lateness, due time to start (ms, log scale; p50 and p99 are bucket bounds)", ps, true, []series{
		{"p50", "#1a7f37", p50}, {"p99", "#a15c07", p99}, {"max", "#b42318", pmax}})
	return hv, nil
}

// lateMs returns a lateness in ms; a quantile past the last bucket (-1)
// as twice the last bound.
func lateMs(d time.Duration) float64 {
	if d < 0 {
		b := durable.LatenessBounds()
		d = 2 * b[len(b)-1]
	}
	return max(float64(d)/1e6, 0.01)
}

// lateText writes a quantile of a point's lateness, or "–" without
// starts.
func lateText(p durable.Point, q float64) string {
	switch d := p.Quantile(q); {
	case p.Started == 0:
		return "–"
	case d < 0:
		return "> 10s"
	default:
		return "≤ " + d.String()
	}
}

// A series is one line of a chart: NaN where it has no value.
type series struct {
	name, color string
	v           []float64
}

// The charts' size, in SVG units.
const (
	chartW, chartH     = 1100.0, 200.0
	padL, padB, padT   = 56.0, 22.0, 26.0
	plotW, plotH       = chartW - padL - 10, chartH - padB - padT
	logMin, logMax     = -2.0, 5.0 // 0.01 ms to 100 s
	maxTicks           = 5
	xLabels            = 6
	chartFont          = `font-family="system-ui, sans-serif" font-size="11"`
	chartAxisColor     = "#dfe3ea"
	chartTextColor     = "#5f6b7a"
	chartStrokeWidth   = 1.5
	chartLegendSpacing = 110.0
)

// chart draws the series over the points' times as an SVG line chart,
// its y axis linear from 0 or, with logY, log10 of ms.
func chart(title string, ps []durable.Point, logY bool, ss []series) template.HTML {
	n := len(ps)
	top := 1.0
	for _, s := range ss {
		for _, v := range s.v {
			if !math.IsNaN(v) {
				top = max(top, v)
			}
		}
	}
	top = niceCeil(top)
	y := func(v float64) float64 {
		if logY {
			f := (math.Log10(v) - logMin) / (logMax - logMin)
			return padT + plotH*(1-min(max(f, 0), 1))
		}
		return padT + plotH*(1-v/top)
	}
	x := func(i int) float64 { return padL + plotW*float64(i)/float64(max(n-1, 1)) }
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="chart" viewBox="0 0 %.0f %.0f" role="img" aria-label="%s" %s>`, chartW, chartH, template.HTMLEscapeString(title), chartFont)
	fmt.Fprintf(&b, `<text x="%.0f" y="14" fill="#1d2330" font-weight="600">%s</text>`, padL, template.HTMLEscapeString(title))
	for i, s := range ss {
		lx := chartW - 10 - chartLegendSpacing*float64(len(ss)-i)
		fmt.Fprintf(&b, `<rect x="%.0f" y="6" width="12" height="3" fill="%s"/><text x="%.0f" y="14" fill="%s">%s</text>`, lx, s.color, lx+16, chartTextColor, s.name)
	}
	var ticks []float64
	if logY {
		for e := logMin; e <= logMax; e++ {
			ticks = append(ticks, math.Pow(10, e))
		}
	} else {
		for i := 0; i <= maxTicks-1; i++ {
			ticks = append(ticks, top*float64(i)/float64(maxTicks-1))
		}
	}
	for _, t := range ticks {
		fmt.Fprintf(&b, `<line x1="%.0f" x2="%.0f" y1="%.1f" y2="%.1f" stroke="%s"/>`, padL, padL+plotW, y(t), y(t), chartAxisColor)
		fmt.Fprintf(&b, `<text x="%.0f" y="%.1f" text-anchor="end" fill="%s">%s</text>`, padL-6, y(t)+4, chartTextColor, tickText(t, logY))
	}
	for i := 0; i < xLabels && n > 1; i++ {
		k := i * (n - 1) / (xLabels - 1)
		layout := "15:04"
		if ps[n-1].At.Sub(ps[0].At) > 36*time.Hour {
			layout = "Jan 2 15:04"
		}
		anchor := map[bool]string{true: "end", false: "middle"}[i == xLabels-1]
		if i == 0 {
			anchor = "start"
		}
		fmt.Fprintf(&b, `<text x="%.1f" y="%.0f" text-anchor="%s" fill="%s">%s</text>`, x(k), chartH-6, anchor, chartTextColor, ps[k].At.UTC().Format(layout))
	}
	for _, s := range ss {
		var d strings.Builder
		pen := false
		for i, v := range s.v {
			if math.IsNaN(v) {
				pen = false
				continue
			}
			cmd := "L"
			if !pen {
				cmd = "M"
			}
			fmt.Fprintf(&d, "%s%.1f %.1f", cmd, x(i), y(v))
			pen = true
		}
		if d.Len() > 0 {
			fmt.Fprintf(&b, `<path d="%s" fill="none" stroke="%s" stroke-width="%.1f" stroke-linejoin="round"/>`, d.String(), s.color, chartStrokeWidth)
		}
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String()) // every value in it is a number or escaped
}

// niceCeil rounds v up to 1, 2 or 5 times a power of ten.
func niceCeil(v float64) float64 {
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 5, 10} {
		if v <= m*p {
			return m * p
		}
	}
	return 10 * p
}

// tickText writes a tick's value: a count, or ms on a log axis.
func tickText(t float64, logY bool) string {
	if !logY {
		return fmt.Sprintf("%.0f", t)
	}
	switch {
	case t < 1:
		return fmt.Sprintf("%gms", t)
	case t < 1000:
		return fmt.Sprintf("%.0fms", t)
	}
	return fmt.Sprintf("%.0fs", t/1000)
}
