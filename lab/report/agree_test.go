package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/timewheel/timewheel/lab/workload"
)

// rescaled returns a copy of r with the values of one contender at size n
// multiplied by f, its steps too.
func rescaled(r *Results, contender string, n int, f float64) *Results {
	scale := func(all []workload.Result) []workload.Result {
		rs := make([]workload.Result, len(all))
		for i, x := range all {
			if x.Contender == contender && x.N == n && x.Status == workload.OK {
				x.Value, x.Lo, x.Hi = x.Value*f, x.Lo*f, x.Hi*f
			}
			rs[i] = x
		}
		return rs
	}
	return Index(scale(r.all)).WithSteps(scale(r.steps))
}

func TestAgreementOfIdenticalRuns(t *testing.T) {
	r, l := fake()
	var b bytes.Buffer
	v, g := Agreement(&b, []*Results{r, r, r}, l)
	if v != 0 || g != 0 {
		t.Errorf("identical runs: %d verdicts and %d growth labels differ, want 0 and 0:\n%s", v, g, b.String())
	}
	out := b.String()
	// fake: the scheduler is faster than time at 1e3, the same at 1e5,
	// slower at 1e6, on every workload both run.
	for _, want := range []string{"  churn       1e3  FFF  0.50 0.50 0.50", "  churn       1e5  ===", "  churn       1e6  SSS  1.50",
		"verdicts differ in 0 of 15 cells", "classes of the steps differ in 0 of 18", "  heap       expire    O(log n) ±1%"} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
}

func TestAgreementFindsWhatChanged(t *testing.T) {
	r, l := fake()
	// Run 2: the scheduler costs twice as much at 1e3 (the same as time
	// there now), and heap's cost and steps grow a hundredfold at 1e6 (a
	// new class).
	r2 := rescaled(rescaled(r, "timewheel", 1e3, 2), "heap", 1e6, 100)
	var b bytes.Buffer
	v, g := Agreement(&b, []*Results{r, r2}, l)
	out := b.String()
	if v != 5 { // the five workloads both measure, at 1e3
		t.Errorf("%d verdicts differ, want 5:\n%s", v, out)
	}
	if !strings.Contains(out, "! churn       1e3  F=  0.50 1.00") {
		t.Errorf("the changed verdict is not marked:\n%s", out)
	}
	if g != 5 || !strings.Contains(out, "! heap       schedule  O(1) ±0%") {
		t.Errorf("heap's changed classes are not marked (%d differ, want its 5 workloads counted at three sizes):\n%s", g, out)
	}
	if strings.Contains(out, "! wheel") || strings.Contains(out, "! time ") {
		t.Errorf("a class that did not change is marked:\n%s", out)
	}
}

func TestAgreementWithoutTheScheduler(t *testing.T) {
	r, l := fake()
	var cs []workload.Contender
	for _, c := range l.Contenders {
		if c.Name != "time" {
			cs = append(cs, c)
		}
	}
	l.Contenders = cs
	var rs []workload.Result
	for _, x := range r.all {
		if x.Contender != "time" {
			rs = append(rs, x)
		}
	}
	var b bytes.Buffer
	if v, _ := Agreement(&b, []*Results{Index(rs)}, l); v != 0 || !strings.Contains(b.String(), "no workload measured both") {
		t.Errorf("without package time: %d verdicts differ, report:\n%s", v, b.String())
	}
}
