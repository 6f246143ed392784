package report

import (
	"bytes"
	"encoding/xml"
	"io"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/timewheel/timewheel/lab"
	"github.com/timewheel/timewheel/lab/workload"
)

// page is what TestHTML reads back from a written report.
type page struct {
	cells    map[string]string // data-view/data-cell → text
	growths  map[string]string // data-view/data-growth → text
	charts   map[string]string // figure name → the svg element, as written
	order    []string          // figure names in order
	claims   map[string]string // data-claim → the row's text
	items    []string          // the conclusion's sentences
	verdicts map[string]string // data-verdict → text
	key      map[string]string // data-key → the style of its marker
	sections []string          // the ids of the h2 headings, in order
	external []string          // attributes that point outside the page
	viewport bool              // a viewport meta sized to the device
	// Where the tables are: the first value cell's offset and the last
	// chart's end; how many value cells are not folded in a <details>,
	// and how many tables do not scroll on their own (in a div.scroll).
	firstCell, lastChart int64
	unfolded, unscrolled int
}

// readPage parses an XHTML report with encoding/xml, strictly, and
// gathers what TestHTML holds to the run.
func readPage(t *testing.T, data []byte) page {
	t.Helper()
	p := page{cells: map[string]string{}, growths: map[string]string{}, charts: map[string]string{}, claims: map[string]string{},
		verdicts: map[string]string{}, key: map[string]string{}, firstCell: -1}
	d := xml.NewDecoder(bytes.NewReader(data))
	d.Strict = true
	d.Entity = xml.HTMLEntity
	var text strings.Builder
	var gather func(string) // set while the text of an element is gathered: called with it at its end
	depth, gatherAt := 0, 0
	chart, svgStart, inConclusion, keyOf := "", int64(0), false, ""
	var open []string // the open elements' names, "div.scroll" for a div that scrolls
	inside := func(name string) bool { return slices.Contains(open, name) }
	for {
		offset := d.InputOffset()
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("the report is not well-formed XML: %v", err)
		}
		switch x := tok.(type) {
		case xml.StartElement:
			depth++
			attr := func(name string) string {
				for _, a := range x.Attr {
					if a.Name.Local == name {
						return a.Value
					}
				}
				return ""
			}
			name := x.Name.Local
			if name == "div" && attr("class") == "scroll" {
				name = "div.scroll"
			}
			open = append(open, name)
			for _, a := range x.Attr {
				if (a.Name.Local == "src" || a.Name.Local == "href") && !strings.HasPrefix(a.Value, "#") {
					p.external = append(p.external, a.Value)
				}
			}
			collect := func(set func(string)) { text.Reset(); gather, gatherAt = set, depth }
			switch view := attr("data-view"); {
			case attr("data-cell") != "":
				key := view + "/" + attr("data-cell")
				collect(func(s string) { p.cells[key] = s })
				if p.firstCell < 0 {
					p.firstCell = offset
				}
				if !inside("details") {
					p.unfolded++
				}
			case attr("data-growth") != "":
				key := view + "/" + attr("data-growth")
				collect(func(s string) { p.growths[key] = s })
			case attr("data-claim") != "":
				key := attr("data-claim")
				collect(func(s string) { p.claims[key] = s })
			case attr("data-verdict") != "":
				key := attr("data-verdict")
				collect(func(s string) { p.verdicts[key] = s })
			case attr("data-key") != "":
				keyOf = attr("data-key")
			case x.Name.Local == "span" && keyOf != "":
				p.key[keyOf] = attr("style")
				keyOf = ""
			case attr("data-chart") != "":
				chart = attr("data-chart")
				p.order = append(p.order, chart)
			case x.Name.Local == "svg" && chart != "":
				svgStart = offset
			case x.Name.Local == "table" && !inside("div.scroll"):
				p.unscrolled++
			case x.Name.Local == "meta" && attr("name") == "viewport":
				p.viewport = strings.Contains(attr("content"), "width=device-width")
			case x.Name.Local == "h2":
				p.sections = append(p.sections, attr("id"))
				if attr("id") == "conclusion" {
					inConclusion = true
				}
			case x.Name.Local == "li" && inConclusion:
				collect(func(s string) { p.items = append(p.items, s) })
			}
		case xml.CharData:
			if gather != nil {
				text.Write(x)
			}
		case xml.EndElement:
			switch {
			case gather != nil && depth == gatherAt:
				gather(text.String())
				gather = nil
			case x.Name.Local == "svg" && chart != "":
				p.charts[chart] = string(data[svgStart:d.InputOffset()])
				p.lastChart = d.InputOffset()
				chart = ""
			case x.Name.Local == "ul":
				inConclusion = false
			}
			open = open[:len(open)-1]
			depth--
		}
	}
	return p
}

// legendStyles reads the legend of a chart's SVG: for each line's name,
// its colour, dashes and marker, as the line drawn beside the name (the
// last path of width 1.5 before it) and the marker's paths after that
// line, their numbers left out.
func legendStyles(t *testing.T, svg string) map[string]string {
	t.Helper()
	styles := map[string]string{}
	d := xml.NewDecoder(strings.NewReader(svg))
	var paths []map[string]string // since the last text
	var text strings.Builder
	inText := false
	numbers := regexp.MustCompile(`-?[0-9.]+`)
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("chart: %v", err)
		}
		switch x := tok.(type) {
		case xml.StartElement:
			a := map[string]string{}
			for _, y := range x.Attr {
				a[y.Name.Local] = y.Value
			}
			switch x.Name.Local {
			case "path":
				paths = append(paths, a)
			case "text":
				inText = true
				text.Reset()
			}
		case xml.CharData:
			if inText {
				text.Write(x)
			}
		case xml.EndElement:
			if x.Name.Local != "text" {
				continue
			}
			inText = false
			line := -1
			for i, pa := range paths {
				if strings.Contains(pa["style"], "stroke-width:1.5") {
					line = i
				}
			}
			if line >= 0 {
				name, _, _ := strings.Cut(text.String(), " (over budget")
				style := strings.ToLower(paths[line]["style"])
				for _, m := range paths[line+1:] {
					style += " | " + numbers.ReplaceAllString(m["d"], "") + " " + strings.ToLower(m["style"][:strings.Index(m["style"]+";", ";")])
				}
				styles[name] = style
			}
			paths = nil
		}
	}
	return styles
}

// colourOf returns the colour in a style, "#1f77b4", or "".
func colourOf(style string) string {
	return regexp.MustCompile(`#[0-9a-f]{6}`).FindString(strings.ToLower(style))
}

// TestHTML writes the page of a run and reads it back as XML: it must be
// well-formed and self-contained, every value cell, slope and class must
// be the run's, every claim and conclusion the run's, and every chart the
// run's figure, drawn from its results, byte for byte.
func TestHTML(t *testing.T) {
	r, l := fake()
	var b bytes.Buffer
	err := WriteHTML(&b, Page{Machine: ThisMachine(), Load: Load{}, Budget: workload.DefaultBudget(), Wall: 90 * time.Second, Results: r, Layout: l})
	if err != nil {
		t.Fatal(err)
	}
	p := readPage(t, b.Bytes())
	if len(p.external) > 0 {
		t.Errorf("the page is not self-contained: %v", p.external)
	}
	// Every cell of the run, timed and counted, and nothing else.
	want := map[string]string{}
	wantGrowth := map[string]string{}
	for _, v := range []view{timed, counted} {
		name := map[bool]string{false: "time", true: "steps"}[v.steps]
		for _, c := range v.rows(l) {
			for _, k := range l.Kinds {
				if !v.shows(c, k) {
					continue
				}
				for _, n := range l.Sizes {
					want[name+"/"+c.Name+" "+string(k)+" "+SizeLabel(n)] = v.cell(r, c.Name, k, n)
				}
				wantGrowth[name+"/"+c.Name+" "+string(k)] = v.growth(r, c.Name, k)
			}
		}
	}
	got := p.cells
	if len(got) != len(want) || len(p.growths) != len(wantGrowth) {
		t.Errorf("%d cells and %d slopes or classes, want %d and %d", len(got), len(p.growths), len(want), len(wantGrowth))
	}
	for key, w := range want {
		if got[key] != w {
			t.Errorf("cell %s: %q, want %q", key, got[key], w)
		}
	}
	for key, w := range wantGrowth {
		if p.growths[key] != w {
			t.Errorf("%s: %q, want %q", key, p.growths[key], w)
		}
	}
	// Every chart, in order, byte for byte.
	var names []string
	for _, f := range Figures(r, l) {
		names = append(names, f.Name)
		svg, err := f.Render("svg")
		if err != nil {
			t.Fatal(err)
		}
		if p.charts[f.Name] != InlineSVG(svg) {
			t.Errorf("chart %s is not the run's figure (%d bytes, want %d)", f.Name, len(p.charts[f.Name]), len(InlineSVG(svg)))
		}
	}
	if !slices.Equal(p.order, names) {
		t.Errorf("charts %v, want %v", p.order, names)
	}
	// Every claim, with its mark and reason.
	checks := Checks(r, l)
	if len(p.claims) != len(checks) {
		t.Errorf("%d claims, want %d", len(p.claims), len(checks))
	}
	for _, x := range checks {
		row := p.claims[x.Structure+" "+string(x.Workload)]
		if !strings.Contains(row, x.Claim.Cost) || !strings.Contains(row, x.Fit.String()) || !strings.Contains(row, x.Match.Mark()) ||
			x.Disagrees() != strings.Contains(row, x.Reason()) {
			t.Errorf("claim %s %s: row %q", x.Structure, x.Workload, row)
		}
	}
	// The conclusion, sentence for sentence.
	var c bytes.Buffer
	if lines := Conclusion(&c, r, l); !slices.Equal(p.items, lines) {
		t.Errorf("conclusion %q, want %q", p.items, lines)
	}
	// The verdicts, line for line with the printed ones.
	var v bytes.Buffer
	Verdict(&v, r, l)
	wantVerdicts := verdictLines(v.String())
	if len(p.verdicts) != len(wantVerdicts) || len(wantVerdicts) == 0 {
		t.Errorf("%d verdicts, want %d", len(p.verdicts), len(wantVerdicts))
	}
	for key, w := range wantVerdicts {
		if kind, _, _ := strings.Cut(key, " "); p.verdicts[key] != kind+w {
			t.Errorf("verdict %s: %q, want %q", key, p.verdicts[key], kind+w)
		}
	}
}

// verdictLines reads Verdict's text back: "churn versus" → ": 1.2×
// faster at every size", "churn cheapest" → ", cheapest: wheel, …", as
// the page writes them after the workload.
func verdictLines(text string) map[string]string {
	lines := map[string]string{}
	kind := ""
	for _, line := range strings.Split(strings.TrimSpace(text), "\n")[1:] {
		if !strings.HasPrefix(line, " ") {
			kind, line, _ = strings.Cut(line, " ")
		}
		line = strings.TrimSpace(line)
		if rest, ok := strings.CutPrefix(line, "timewheel vs time: "); ok {
			lines[kind+" versus"] = ": " + rest
			continue
		}
		word, rest, _ := strings.Cut(line, ": ")
		lines[kind+" "+word] = ", " + word + ": " + rest
	}
	return lines
}

// TestHTMLAnswersFirst: the page opens with the conclusion, then the
// verdicts and the run, then the charts, and only then the tables, each
// folded; it sizes itself to the device, and no table widens the page.
func TestHTMLAnswersFirst(t *testing.T) {
	r, l := fake()
	p := writePage(t, r, l)
	want := []string{"conclusion", "verdict", "run", "charts", "tables"}
	if !slices.Equal(p.sections, want) {
		t.Errorf("sections %v, want %v", p.sections, want)
	}
	if len(p.items) == 0 || len(p.charts) == 0 || len(p.cells) == 0 {
		t.Fatalf("%d conclusions, %d charts, %d cells: the fake run should have all three", len(p.items), len(p.charts), len(p.cells))
	}
	if p.firstCell < p.lastChart {
		t.Errorf("a value cell at byte %d, before the last chart ends at %d", p.firstCell, p.lastChart)
	}
	if p.unfolded > 0 {
		t.Errorf("%d value cells outside a <details>", p.unfolded)
	}
	if p.unscrolled > 0 {
		t.Errorf("%d tables not in a div.scroll: they widen the page on a phone", p.unscrolled)
	}
	if !p.viewport {
		t.Error("no viewport meta with width=device-width: a phone draws the page 980 px wide and shrinks it")
	}
}

// TestHTMLStyles: a structure has one colour, one marker and one dash in
// every chart of the page, the same in a run of fewer contenders, and in
// the charts' key; no two structures share a colour; a structure's own
// chart draws every line in its colour and marker. Styles used to follow
// a contender's place in the run, so -only changed every colour, and a
// structure's chart drew its workloads in the colours of other
// structures.
func TestHTMLStyles(t *testing.T) {
	r, l := fake()
	all := pageStyles(t, writePage(t, r, l), l)
	fewer := l
	fewer.Contenders = l.Contenders[1:]
	some := pageStyles(t, writePage(t, r, fewer), fewer)
	if len(some) == 0 {
		t.Fatal("no styles read from the charts")
	}
	for name, st := range some {
		if all[name] != st {
			t.Errorf("%s: %q in a run of %d contenders, %q in one of %d", name, st, len(fewer.Contenders), all[name], len(l.Contenders))
		}
	}
	for _, c := range lab.Contenders() {
		if _, ok := styles[c.Name]; !ok {
			t.Errorf("%s has no style of its own: add it to styles", c.Name)
		}
	}
	byColour := map[string]string{}
	for name, st := range all {
		if other, ok := byColour[colourOf(st)]; ok {
			t.Errorf("%s and %s share the colour %s", name, other, colourOf(st))
		}
		byColour[colourOf(st)] = name
	}
}

// pageStyles returns each contender's style in the charts of page p
// (see legendStyles), failing t where a contender has two, where its own
// chart draws a line in another colour or marker, or where the key gives
// it another colour.
func pageStyles(t *testing.T, p page, l Layout) map[string]string {
	t.Helper()
	styles := map[string]string{}
	for _, name := range p.order {
		if strings.HasPrefix(name, "structure-") {
			continue
		}
		for line, st := range legendStyles(t, p.charts[name]) {
			if had, ok := styles[line]; ok && had != st {
				t.Errorf("%s in chart %s: %q, before %q", line, name, st, had)
			}
			styles[line] = st
		}
	}
	marker := func(st string) string { _, m, _ := strings.Cut(st, " | "); return m }
	for _, c := range l.Contenders {
		st, ok := styles[c.Name]
		if !ok {
			t.Errorf("%s has no line in any chart", c.Name)
			continue
		}
		for line, own := range legendStyles(t, p.charts["structure-"+c.Name]) {
			if colourOf(own) != colourOf(st) || marker(own) != marker(st) {
				t.Errorf("chart structure-%s draws %s as %q, not in %s's colour and marker %q", c.Name, line, own, c.Name, st)
			}
		}
		if colourOf(p.key[c.Name]) != colourOf(st) {
			t.Errorf("the key gives %s the colour %q, its lines %q", c.Name, colourOf(p.key[c.Name]), colourOf(st))
		}
	}
	return styles
}

// writePage writes the page of r and l and reads it back.
func writePage(t *testing.T, r *Results, l Layout) page {
	t.Helper()
	var b bytes.Buffer
	if err := WriteHTML(&b, Page{Machine: ThisMachine(), Budget: workload.DefaultBudget(), Wall: 90 * time.Second, Results: r, Layout: l}); err != nil {
		t.Fatal(err)
	}
	return readPage(t, b.Bytes())
}
