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
// XML parser reads. It answers first: the conclusion, then the verdicts
// against package time and on the cheapest structure, then the run's
// machine and load. The charts of Figures follow, inline as SVG, under a
// key of each contender's colour and marker. The tables come last,
// folded. Every value cell carries data-cell="contender workload n" and
// data-view="time" or "steps", every chart its figure's name, so that a
// test can hold each to the run. The page fits a phone's width: only
// tables and preformatted text scroll sideways.
func WriteHTML(w io.Writer, p Page) error {
	d := htmlData{Page: p, Title: "timerlab: every timer structure, side by side", Band: bandWords()}
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
	d.Findings = findings(p.Results, p.Layout)
	for _, f := range d.Findings {
		d.VersusAny = d.VersusAny || f.Versus != ""
	}
	b.Reset()
	for _, s := range Conclusion(&b, p.Results, p.Layout) {
		d.Conclusion = append(d.Conclusion, headed(s))
	}
	for _, c := range p.Layout.Contenders {
		d.Key = append(d.Key, htmlKey{Name: c.Name, Style: styleOf(c.Name)})
	}
	for _, f := range Figures(p.Results, p.Layout) {
		svg, err := f.Render("svg")
		if err != nil {
			return err
		}
		d.Figures = append(d.Figures, htmlFigure{Name: f.Name, Title: f.Title, SVG: template.HTML(InlineSVG(svg))})
	}
	return pageTemplate.Execute(w, d)
}

// headed splits a sentence of the conclusion after its use, "timeouts
// that are mostly cancelled (churn: …):", which the page sets in bold.
func headed(s string) htmlSentence {
	if i := strings.Index(s, "): "); i >= 0 {
		return htmlSentence{Head: s[:i+2], Rest: s[i+2:]}
	}
	return htmlSentence{Rest: s}
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
	Band       string // what ≈ means
	Tables     []htmlTable
	Legend     string
	Checks     []Check
	Versus     string
	Findings   []finding
	VersusAny  bool // a finding compares the scheduler with package time
	Conclusion []htmlSentence
	Key        []htmlKey
	Figures    []htmlFigure
}

type htmlSentence struct{ Head, Rest string }

// htmlKey is a contender's entry in the charts' key.
type htmlKey struct {
	Name  string
	Style style
}

// Border returns the CSS line under a key's marker, drawn as the
// contender's lines are: solid, dashed or dotted.
func (k htmlKey) Border() template.CSS {
	line := [...]string{"solid", "dashed", "dotted"}[min(k.Style.Dash, 2)]
	return template.CSS("color:" + k.Style.Hex() + ";border-bottom:2px " + line + " " + k.Style.Hex())
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
	"oneLine": func(x fmt.Stringer) string { // the lines of x joined with "; "
		lines := strings.Split(x.String(), "\n")
		for i := range lines {
			lines[i] = strings.TrimSpace(lines[i])
		}
		return strings.Join(lines, "; ")
	},
	"gb": func(b int64) string { return fmt.Sprintf("%.1f GB", float64(b)/1e9) },
}).Parse(`<!DOCTYPE html>
<html xmlns="http://www.w3.org/1999/xhtml" lang="en">
<head>
<meta charset="utf-8"/>
<meta name="viewport" content="width=device-width, initial-scale=1"/>
<title>{{.Title}}</title>
<style>
body { font: 15px/1.45 system-ui, sans-serif; margin: 0 auto; padding: 0 1em 2em; max-width: 62em; color: #222; overflow-wrap: break-word; }
h1 { font-size: 1.5em; }
h2 { font-size: 1.2em; margin-top: 1.6em; }
#conclusion + ul li, .verdicts li { margin: 0.4em 0; }
.scroll { overflow-x: auto; max-width: 100%; }
table { border-collapse: collapse; margin: 0.5em 0 1.5em; font-variant-numeric: tabular-nums; font-size: 13px; }
th, td { padding: 0.15em 0.5em; text-align: right; border-bottom: 1px solid #ddd; }
th.name, td.name { text-align: left; }
.scroll th, .scroll td { white-space: nowrap; }
.scroll td.reason { white-space: normal; min-width: 24em; }
td.growth { text-align: left; color: #555; white-space: nowrap; }
td.over { color: #b00; }
td.group, th.group { border-left: 2px solid #888; }
tr.steps td { color: #036; }
.disagrees { color: #b00; font-weight: bold; }
.agrees { color: #080; }
.run { color: #555; font-size: 13px; }
pre { background: #f6f6f6; padding: 0.6em; overflow-x: auto; font-size: 12px; }
details { margin: 0.6em 0; }
summary { cursor: pointer; font-weight: bold; }
ul.key { list-style: none; padding: 0; display: flex; flex-wrap: wrap; gap: 0.3em 1.2em; }
ul.key span { display: inline-block; width: 2.2em; text-align: center; font-weight: bold; }
figure { margin: 1em 0; }
figure svg { max-width: 100%; height: auto; }
</style>
</head>
<body>
<h1>{{.Title}}</h1>
{{if .Conclusion}}<h2 id="conclusion">Conclusion: which structure for which timers</h2>
<ul>
{{range .Conclusion}}<li>{{if .Head}}<b>{{.Head}}</b>{{end}}{{.Rest}}</li>
{{end}}</ul>
{{end}}
{{if .Findings}}<h2 id="verdict">Verdicts</h2>
<p>Computed from this run: medians of the laps' ratios; ≈ means {{.Band}}, the resolution of back-to-back runs.</p>
{{if .VersusAny}}<h3 id="verdict-time">timewheel against package time</h3>
<ul class="verdicts">
{{range .Findings}}{{if .Versus}}<li data-verdict="{{.Kind}} versus"><b>{{.Kind}}</b>: {{.Versus}}</li>
{{end}}{{end}}</ul>
{{end}}<h3 id="verdict-structures">The cheapest structure</h3>
<ul class="verdicts">
{{range .Findings}}{{if .Cheapest}}<li data-verdict="{{.Kind}} {{.Word}}"><b>{{.Kind}}</b>, {{.Word}}: {{.Cheapest}}</li>
{{end}}{{end}}</ul>
{{end}}
<h2 id="run">The run</h2>
<p class="run" id="machine">machine: {{.Machine}}</p>
<p class="run" id="load">load: {{oneLine .Load}}</p>
<p class="run" id="budget">budget: {{.Budget.Cell}} per cell, {{.Budget.Fill}} to fill, {{.Budget.Far}} per far cell; rounds of {{.Budget.Round}}; wall time {{seconds .Wall}}{{if .PeakRSS}}; peak memory {{gb .PeakRSS}}{{end}}</p>

<h2 id="charts">Charts</h2>
<p>Log-log, cost against pending timers. Each structure has one colour and one marker in every chart; in a structure's own chart, its workloads differ by their dashes. A cross marks where a line went over budget.</p>
<ul class="key" id="key">
{{range .Key}}<li data-key="{{.Name}}"><span style="{{.Border}}">{{.Style.Marker.Symbol}}</span> {{.Name}}</li>
{{end}}</ul>
{{range .Figures}}<figure id="chart-{{.Name}}" data-chart="{{.Name}}">
{{.SVG}}
<figcaption>{{.Title}}</figcaption>
</figure>
{{end}}
<h2 id="tables">Tables</h2>
<p>Every number the charts and verdicts come from; click to open.</p>
{{if .Versus}}<details id="versus"><summary>timewheel against package time: W1, W2, W4</summary>
<pre>{{.Versus}}</pre>
</details>
{{end}}{{if .Checks}}<details id="claims"><summary>Claimed against counted</summary>
<p>What the reference documents claim (001, 002, 004) beside the class of the steps the lab counted; expire per timer fired, k timers being due.</p>
<div class="scroll"><table id="claims-table">
<thead><tr><th class="name">structure</th><th class="name">workload</th><th class="name">claimed</th><th class="name">source</th><th class="name">counted</th><th></th><th class="name">reason</th></tr></thead>
<tbody>
{{range .Checks}}<tr data-claim="{{.Structure}} {{.Workload}}"><td class="name">{{.Structure}}</td><td class="name">{{.Workload}}</td><td class="name">{{.Claim.Cost}}</td><td class="name">{{.Claim.Source}}</td><td class="name">{{.Fit}}</td><td class="{{if .Disagrees}}disagrees{{else}}agrees{{end}}">{{.Match.Mark}}{{if .Note}}{{.Note}}{{end}}</td><td class="name reason">{{if .Note}}{{.Reason}}{{end}}</td></tr>
{{end}}</tbody>
</table></div>
</details>
{{end}}{{range $t := .Tables}}<details class="table"><summary>{{$t.Caption}}: {{range $i, $k := $t.Kinds}}{{if $i}}, {{end}}{{$k}} ({{index $t.Units $i}}){{end}}</summary>
<div class="scroll"><table class="{{$t.View}}" data-view="{{$t.View}}">
<thead>
<tr><th class="name"></th>{{range $i, $k := $t.Kinds}}<th class="group" colspan="{{len $t.Sizes | plus1}}">{{$k}}, {{index $t.Units $i}}</th>{{end}}</tr>
<tr><th class="name">structure</th>{{range $t.Kinds}}{{range $j, $n := $t.Sizes}}<th{{if not $j}} class="group"{{end}}>{{$n}}</th>{{end}}<th>{{$t.Growth}}</th>{{end}}</tr>
</thead>
<tbody>
{{range $r := $t.Rows}}<tr class="{{$t.View}}"><td class="name">{{$r.Name}}</td>{{range $g := $r.Groups}}{{if $g.Shown}}{{range $j, $c := $g.Cells}}<td class="{{if not $j}}group {{end}}{{if $c.Over}}over{{end}}" data-view="{{$t.View}}" data-cell="{{$c.Key}}">{{$c.Text}}</td>{{end}}<td class="growth" data-view="{{$t.View}}" data-growth="{{$r.Name}} {{$g.Kind}}">{{$g.Growth}}</td>{{else}}<td class="group" colspan="{{len $t.Sizes | plus1}}">-</td>{{end}}{{end}}</tr>
{{end}}</tbody>
</table></div>
</details>
{{end}}<details id="legend"><summary>How to read the tables</summary>
<pre>{{.Legend}}</pre>
</details>
</body>
</html>
`))
