package report

import (
	"bytes"
	"encoding/xml"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

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
	external []string          // attributes that point outside the page
}

// readPage parses an XHTML report with encoding/xml, strictly, and
// gathers what TestHTML holds to the run.
func readPage(t *testing.T, data []byte) page {
	t.Helper()
	p := page{cells: map[string]string{}, growths: map[string]string{}, charts: map[string]string{}, claims: map[string]string{}}
	d := xml.NewDecoder(bytes.NewReader(data))
	d.Strict = true
	d.Entity = xml.HTMLEntity
	var text strings.Builder
	var gather func(string) // set while the text of an element is gathered: called with it at its end
	depth, gatherAt := 0, 0
	chart, svgStart, inConclusion := "", int64(0), false
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
			case attr("data-growth") != "":
				key := view + "/" + attr("data-growth")
				collect(func(s string) { p.growths[key] = s })
			case attr("data-claim") != "":
				key := attr("data-claim")
				collect(func(s string) { p.claims[key] = s })
			case attr("data-chart") != "":
				chart = attr("data-chart")
				p.order = append(p.order, chart)
			case x.Name.Local == "svg" && chart != "":
				svgStart = offset
			case attr("id") == "conclusion":
				inConclusion = true
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
				chart = ""
			case x.Name.Local == "ul":
				inConclusion = false
			}
			depth--
		}
	}
	return p
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
}
