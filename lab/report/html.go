package report

import (
	"bytes"
	"fmt"
	"html/template"
	"io"
	"strings"
	"time"

	"github.com/timewheel/timewheel/lab/workload"
)

// Page is everything the HTML report of one run shows.
type Page struct {
	Machine Machine
	Load    Load
	Budget  workload.Budget
	Wall    time.Duration
	PeakRSS int64 // bytes; 0 if unknown
	Results *Results
	Layout  Layout
}

// WriteHTML writes the run as one self-contained page, XHTML that any
// XML parser reads: the header lines, the tables of time and steps with
// their slopes and classes, the claims held to the steps, the scheduler
// against package time, the verdict, the conclusion, and every chart of
// Figures inline as SVG. Every value cell carries data-cell="contender
// workload n" and data-view="time" or "steps", every chart its figure's
// name, so that a test can hold each to the run.
func WriteHTML(w io.Writer, p Page) error {
	figs := Figures(p.Results, p.Layout)
	d := htmlData{Page: p, Title: "timerlab: every timer structure, side by side"}
	for _, g := range groups {
		ks := p.Layout.kinds(g)
		if len(ks) == 0 {
			continue
		}
		d.Tables = append(d.Tables, p.table(ks, timed))
		if p.Results.countedAny(ks) {
			d.Tables = append(d.Tables, p.table(ks, counted))
		}
	}
	var b bytes.Buffer
	legend(&b, p.Results, p.Layout)
	d.Legend = b.String()
	d.Checks = Checks(p.Results, p.Layout)
	b.Reset()
	Versus(&b, p.Results, p.Layout.Sizes)
	d.Versus = b.String()
	b.Reset()
	Verdict(&b, p.Results, p.Layout)
	d.Verdict = b.String()
	b.Reset()
	d.Conclusion = Conclusion(&b, p.Results, p.Layout)
	for _, f := range figs {
		svg, err := f.Render("svg")
		if err != nil {
			return err
		}
		d.Figures = append(d.Figures, htmlFigure{Name: f.Name, Title: f.Title, SVG: template.HTML(InlineSVG(svg))})
	}
	return pageTemplate.Execute(w, d)
}

// InlineSVG returns an SVG file as an element to put in a page: its svg
// element, without the XML declaration (which only a document's first
// line may hold) and the comment before it.
func InlineSVG(svg []byte) string {
	s := string(svg)
	if i := strings.Index(s, "<svg"); i >= 0 {
		s = s[i:]
	}
	return strings.TrimSpace(s)
}

type htmlData struct {
	Page
	Title      string
	Tables     []htmlTable
	Legend     string
	Checks     []Check
	Versus     string
	Verdict    string
	Conclusion []string
	Figures    []htmlFigure
}

type htmlTable struct {
	View    string // "time" or "steps"
	Kinds   []workload.Kind
	Units   []string
	Sizes   []string
	Growth  string
	Rows    []htmlRow
	Caption string
}

type htmlRow struct {
	Name   string
	Groups []htmlGroup
}

type htmlGroup struct {
	Shown  bool
	Cells  []htmlCell
	Growth string
	Kind   workload.Kind
}

type htmlCell struct {
	Key, Text string
	Over      bool
}

type htmlFigure struct {
	Name, Title string
	SVG         template.HTML
}

// table returns one block of the tables, in view v.
func (p Page) table(ks []workload.Kind, v view) htmlTable {
	t := htmlTable{View: "time", Kinds: ks, Growth: v.growthHeader(), Caption: "measured"}
	if v.steps {
		t.View, t.Caption = "steps", "counted"
	}
	for _, k := range ks {
		t.Units = append(t.Units, v.unit(k))
	}
	for _, n := range p.Layout.Sizes {
		t.Sizes = append(t.Sizes, SizeLabel(n))
	}
	for _, c := range v.rows(p.Layout) {
		row := htmlRow{Name: c.Name}
		for _, k := range ks {
			g := htmlGroup{Shown: v.shows(c, k), Kind: k}
			if g.Shown {
				for _, n := range p.Layout.Sizes {
					text := v.cell(p.Results, c.Name, k, n)
					g.Cells = append(g.Cells, htmlCell{Key: fmt.Sprintf("%s %s %s", c.Name, k, SizeLabel(n)), Text: text, Over: text == "over"})
				}
				g.Growth = v.growth(p.Results, c.Name, k)
			}
			row.Groups = append(row.Groups, g)
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

var pageTemplate = template.Must(template.New("page").Funcs(template.FuncMap{
	"size": SizeLabel,
	"seconds": func(d time.Duration) string {
		return fmt.Sprintf("%.1f s", d.Seconds())
	},
	"plus1": func(i int) int { return i + 1 },
	"gb":    func(b int64) string { return fmt.Sprintf("%.1f GB", float64(b)/1e9) },
}).Parse(`<!DOCTYPE html>
<html xmlns="http://www.w3.org/1999/xhtml" lang="en">
<head>
<meta charset="utf-8"/>
<title>{{.Title}}</title>
<style>
body { font: 14px/1.4 system-ui, sans-serif; margin: 1.5em; color: #222; }
table { border-collapse: collapse; margin: 0.5em 0 1.5em; font-variant-numeric: tabular-nums; }
th, td { padding: 0.15em 0.5em; text-align: right; border-bottom: 1px solid #ddd; }
th.name, td.name { text-align: left; }
td.growth { text-align: left; color: #555; white-space: nowrap; }
td.over { color: #b00; }
td.group, th.group { border-left: 2px solid #888; }
tr.steps td { color: #036; }
.disagrees { color: #b00; font-weight: bold; }
.agrees { color: #080; }
pre { background: #f6f6f6; padding: 0.6em; overflow-x: auto; }
figure { margin: 1em 0; }
figure svg { max-width: 100%; height: auto; }
</style>
</head>
<body>
<h1>{{.Title}}</h1>
<p id="machine">machine: {{.Machine}}</p>
<p id="load">load: {{.Load}}</p>
<p id="budget">budget: {{.Budget.Cell}} per cell, {{.Budget.Fill}} to fill, {{.Budget.Far}} per far cell; rounds of {{.Budget.Round}}; wall time {{seconds .Wall}}{{if .PeakRSS}}; peak memory {{gb .PeakRSS}}{{end}}</p>

<h2 id="tables">Time and steps</h2>
{{range $t := .Tables}}<table class="{{$t.View}}" data-view="{{$t.View}}">
<caption>{{$t.Caption}}: {{range $i, $k := $t.Kinds}}{{if $i}}, {{end}}{{$k}} ({{index $t.Units $i}}){{end}}</caption>
<thead>
<tr><th class="name"></th>{{range $i, $k := $t.Kinds}}<th class="group" colspan="{{len $t.Sizes | plus1}}">{{$k}}, {{index $t.Units $i}}</th>{{end}}</tr>
<tr><th class="name">structure</th>{{range $t.Kinds}}{{range $j, $n := $t.Sizes}}<th{{if not $j}} class="group"{{end}}>{{$n}}</th>{{end}}<th>{{$t.Growth}}</th>{{end}}</tr>
</thead>
<tbody>
{{range $r := $t.Rows}}<tr class="{{$t.View}}"><td class="name">{{$r.Name}}</td>{{range $g := $r.Groups}}{{if $g.Shown}}{{range $j, $c := $g.Cells}}<td class="{{if not $j}}group {{end}}{{if $c.Over}}over{{end}}" data-view="{{$t.View}}" data-cell="{{$c.Key}}">{{$c.Text}}</td>{{end}}<td class="growth" data-view="{{$t.View}}" data-growth="{{$r.Name}} {{$g.Kind}}">{{$g.Growth}}</td>{{else}}<td class="group" colspan="{{len $t.Sizes | plus1}}">-</td>{{end}}{{end}}</tr>
{{end}}</tbody>
</table>
{{end}}
<pre id="legend">{{.Legend}}</pre>

{{if .Checks}}<h2 id="claims">Claimed against counted</h2>
<p>What the reference documents claim (001, 002, 004) beside the class of the steps the lab counted; expire per timer fired, k timers being due.</p>
<table id="claims-table">
<thead><tr><th class="name">structure</th><th class="name">workload</th><th class="name">claimed</th><th class="name">source</th><th class="name">counted</th><th></th><th class="name">reason</th></tr></thead>
<tbody>
{{range .Checks}}<tr data-claim="{{.Structure}} {{.Workload}}"><td class="name">{{.Structure}}</td><td class="name">{{.Workload}}</td><td class="name">{{.Claim.Cost}}</td><td class="name">{{.Claim.Source}}</td><td class="name">{{.Fit}}</td><td class="{{if .Disagrees}}disagrees{{else}}agrees{{end}}">{{.Match.Mark}}{{if .Note}}{{.Note}}{{end}}</td><td class="name">{{if .Note}}{{.Reason}}{{end}}</td></tr>
{{end}}</tbody>
</table>
{{end}}
{{if .Versus}}<h2 id="versus">timewheel against package time</h2>
<pre>{{.Versus}}</pre>
{{end}}
{{if .Verdict}}<h2 id="verdict">Verdict</h2>
<pre>{{.Verdict}}</pre>
{{end}}
{{if .Conclusion}}<h2 id="conclusion">Conclusion</h2>
<ul>
{{range .Conclusion}}<li>{{.}}</li>
{{end}}</ul>
{{end}}
<h2 id="charts">Charts</h2>
{{range .Figures}}<figure id="chart-{{.Name}}" data-chart="{{.Name}}">
{{.SVG}}
<figcaption>{{.Title}}</figcaption>
</figure>
{{end}}
</body>
</html>
`))
