package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/timewheel/timewheel/lab"
	"github.com/timewheel/timewheel/lab/workload"
)

func TestCompact(t *testing.T) {
	cases := map[float64]string{
		0.25: "0.2", 9.94: "9.9", 10: "10", 999.4: "999", 999.6: "1.0k", 1234: "1.2k",
		45_000: "45k", 999_000: "999k", 1_234_567: "1.2M", 45e6: "45M", 3e9: "3G",
	}
	for v, want := range cases {
		if got := Compact(v); got != want {
			t.Errorf("Compact(%v) = %q, want %q", v, got, want)
		}
	}
}

func TestSizeLabel(t *testing.T) {
	cases := map[int]string{1: "1", 10: "1e1", 100: "1e2", 1_000_000: "1e6", 2000: "2000", 8: "8"}
	for n, want := range cases {
		if got := SizeLabel(n); got != want {
			t.Errorf("SizeLabel(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestCPUModel(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cpuinfo")
	os.WriteFile(path, []byte("processor\t: 0\nvendor_id\t: X\nmodel name\t: Test CPU @ 1GHz\n"), 0o644)
	if got := cpuModel(path); got != "Test CPU @ 1GHz" {
		t.Errorf("cpuModel = %q", got)
	}
	if got := cpuModel(filepath.Join(t.TempDir(), "none")); got != "unknown" {
		t.Errorf("cpuModel of a missing file = %q", got)
	}
}

// fakeSteps are the steps of the fake run's counting structures: heap's
// schedule and cancel flat, its expire O(log n) and its far O(log n)
// with the day's steps shared; sorted's schedule O(n), over budget at
// 1e6 as its times are; the wheel a step or two for everything.
func fakeSteps(contender string, k workload.Kind, n int) float64 {
	x := float64(n)
	switch contender {
	case "heap":
		switch k {
		case workload.Schedule:
			return 4.3
		case workload.Cancel:
			return 5
		case workload.Expire:
			return 3 * math.Log2(x+1000)
		case workload.Far:
			return 5 + 3*math.Log(x) + 86400/x
		}
		return 8
	case "sorted":
		if k == workload.Schedule || k == workload.Churn {
			return x/2 + 2
		}
		return 1
	}
	if k == workload.Far {
		return 7 + 86400/x
	}
	return 1.7
}

// fake returns results for five contenders at three sizes, each a median
// with its middle half ±5 %: heap O(log n) and sorted the same, sorted
// over budget at the largest; wheel half of heap's cost but the same at
// 1e6; package time twice heap's, without expire; the scheduler faster
// than package time at 1e3, the same at 1e5, slower at 1e6; and the
// steps of fakeSteps for the structures.
func fake() (*Results, Layout) {
	factor := map[string][]float64{
		"heap": {1, 1, 1}, "sorted": {1, 1, 1}, "wheel": {0.5, 0.5, 0.98},
		"time": {2, 2, 2}, "timewheel": {1, 1.96, 3},
	}
	var cs []workload.Contender
	for _, c := range lab.Contenders() {
		if factor[c.Name] != nil {
			cs = append(cs, c)
		}
	}
	sizes := []int{1e3, 1e5, 1e6}
	var rs []workload.Result
	for _, c := range cs {
		for _, k := range workload.Kinds() {
			if !c.Supports(k) {
				continue
			}
			for i, n := range sizes {
				v := float64(10*(i+2)) * factor[c.Name][i]
				r := workload.Result{Contender: c.Name, Workload: k, N: n, Value: v, Lo: v * 0.95, Hi: v * 1.05,
					Rounds: 9, Unit: k.Unit(), Ops: 100, Status: workload.OK}
				if c.Name == "sorted" && n == 1e6 {
					r = workload.Result{Contender: c.Name, Workload: k, N: n, Unit: k.Unit(), Status: workload.Over}
				}
				rs = append(rs, r)
			}
		}
	}
	var steps []workload.Result
	for _, c := range cs {
		for _, k := range workload.Kinds() {
			if !c.Counted(k) {
				continue
			}
			for _, n := range sizes {
				v := fakeSteps(c.Name, k, n)
				r := workload.Result{Contender: c.Name, Workload: k, N: n, Value: v, Lo: v, Hi: v, Rounds: 1,
					Unit: k.StepUnit(), Ops: 1000, Steps: int64(1000 * v), Status: workload.OK}
				if c.Name == "sorted" && n == 1e6 {
					r = workload.Result{Contender: c.Name, Workload: k, N: n, Unit: k.StepUnit(), Status: workload.Predicted}
				}
				steps = append(steps, r)
			}
		}
	}
	return Index(rs).WithSteps(steps), Layout{Contenders: cs, Sizes: sizes, Kinds: workload.Kinds()}
}

func TestTables(t *testing.T) {
	r, l := fake()
	var b bytes.Buffer
	Tables(&b, r, l)
	out := b.String()
	for _, want := range []string{"schedule, ns/op", "expire, ns/fired", "far, ns/timer", "memory, B/timer", "1e3", "1e6", "memory 0.10", "over",
		"schedule, steps/op", "expire, steps/fired", "far, steps/timer", "O(1) ±0%", "O(log n) ±", "? 2 sizes", "class"} {
		if !strings.Contains(out, want) {
			t.Errorf("tables lack %q:\n%s", want, out)
		}
	}
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "time ") { // the first block: schedule, cancel, expire
			if !strings.HasSuffix(line, " -") {
				t.Errorf("package time's row shows an expire value: %q", line)
			}
			break
		}
	}
}

func TestClaims(t *testing.T) {
	r, l := fake()
	var b bytes.Buffer
	checks := Claims(&b, r, l)
	out := b.String()
	for prefix, want := range map[string][]string{
		"heap ":   {"O(lg n) 004   O(1) ±0%", "✗1", "O(1) 004      O(1) ±0%            ✓", "O(1) 004      O(log n)", "✗2"},
		"sorted ": {"O(n) 004      ? 2 sizes           ?"},
		"wheel ":  {"O(1) 004      O(1) ±0%            ✓"},
		"✗1 ":     {"heap schedule: claimed O(lg n) (004), counted O(1): a random deadline sifts up O(1) levels on average"},
		"✗2 ":     {"heap expire: claimed O(1) (004), counted O(log n): each timer fired is a pop"},
	} {
		got := line(t, out, prefix)
		for _, w := range want {
			if !strings.Contains(got, w) {
				t.Errorf("%q lacks %q", got, w)
			}
		}
	}
	if strings.Contains(out, "timewheel") || strings.Contains(out, "✗3") {
		t.Errorf("claims of package time or the scheduler, or a third disagreement:\n%s", out)
	}
	var disagree int
	for _, x := range checks {
		if x.Disagrees() {
			disagree++
		}
	}
	if len(checks) != 9 || disagree != 2 {
		t.Errorf("%d checks, %d disagreeing; want 9 (three structures, three claims) and 2:\n%s", len(checks), disagree, out)
	}
}

func TestCompare(t *testing.T) {
	cell := func(v, lo, hi float64) workload.Result {
		return workload.Result{Value: v, Lo: lo, Hi: hi, Status: workload.OK}
	}
	laps := func(costs ...float64) workload.Result {
		med := slices.Sorted(slices.Values(costs))[len(costs)/2]
		return workload.Result{Value: med, Costs: costs, Status: workload.OK, Rounds: len(costs)}
	}
	cases := []struct {
		a, b  workload.Result
		want  Order
		ratio float64
	}{
		{cell(10, 9, 11), cell(20, 19, 21), Cheaper, 0.5},
		{cell(20, 19, 21), cell(10, 9, 11), Dearer, 2},
		{cell(10, 9, 11), cell(10.5, 10, 11), Same, 10 / 10.5},    // within the band of each other
		{cell(10, 9, 11), cell(10.6, 10, 11), Cheaper, 10 / 10.6}, // just outside it
		{cell(10.5, 10, 11), cell(10, 9, 11), Same, 10.5 / 10},
		{cell(10.6, 10, 11), cell(10, 9, 11), Dearer, 10.6 / 10},
		{cell(10, 5, 30), cell(20, 19, 21), Cheaper, 0.5}, // the spread of a run's rounds does not widen the band
		// rounds of the same laps: the median of the laps' ratios, not the
		// ratio of the medians (50/20, a slower moment of the machine
		// that fell on a's second round and b's third)
		{laps(9, 50, 50), laps(10, 20, 60), Cheaper, 0.9},
		{laps(9, 50, 50), laps(10, 20), Dearer, 2.5}, // not the same laps: the medians
		{laps(9, 50), laps(10, 20), Dearer, 1.7},     // an even number of laps: the mean of the middle two ratios
	}
	for _, c := range cases {
		if o, ratio := Compare(c.a, c.b); o != c.want || math.Abs(ratio-c.ratio) > 1e-9 {
			t.Errorf("Compare(%v, %v) = %v, %v; want %v, %v", c.a, c.b, o, ratio, c.want, c.ratio)
		}
	}
}

// line returns the line of out that starts with prefix.
func line(t *testing.T, out, prefix string) string {
	t.Helper()
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, prefix) {
			return l
		}
	}
	t.Fatalf("no line starting with %q in\n%s", prefix, out)
	return ""
}

func TestVersus(t *testing.T) {
	r, l := fake()
	var b bytes.Buffer
	Versus(&b, r, l.Sizes)
	out := b.String()
	for prefix, want := range map[string]string{
		"W1 churn    ns/op      1e3": "0.50x  faster",
		"W1 churn    ns/op      1e5": "≈  same",
		"W1 churn    ns/op      1e6": "1.50x  slower",
		"W4 memory   B/timer    1e3": "0.50x  smaller",
	} {
		if got := line(t, out, prefix); !strings.HasSuffix(got, want) {
			t.Errorf("%q, want it to end in %q", got, want)
		}
	}
	if got := line(t, out, "W2 refresh  ns/op      1e3"); !strings.Contains(got, "20.0 ±5%") {
		t.Errorf("%q: want the median with its spread, 20.0 ±5%%", got)
	}
}

func TestVerdict(t *testing.T) {
	r, l := fake()
	var b bytes.Buffer
	Verdict(&b, r, l)
	out := b.String()
	for prefix, want := range map[string]string{
		"churn     cheapest:": "wheel, 2.0× ahead of heap ≈ sorted at 1e3–1e5; heap ≈ wheel (39 ns/op) at 1e6",
		"expire    cheapest:": "wheel, 2.0× ahead of heap ≈ sorted at 1e3–1e5; heap ≈ wheel (39 ns/fired) at 1e6",
		"memory    smallest:": "wheel, 2.0× below heap ≈ sorted at 1e3–1e5; heap ≈ wheel (39 B/timer) at 1e6",
	} {
		if got := line(t, out, prefix); !strings.HasSuffix(got, want) {
			t.Errorf("%q, want it to end in %q", got, want)
		}
	}
	if !strings.Contains(out, "timewheel vs time: 2.0× faster at 1e3; ≈ at 1e5; 1.5× slower at 1e6") {
		t.Errorf("no scheduler-against-time verdict in\n%s", out)
	}
	if strings.Contains(line(t, out, "expire "), "timewheel vs time") {
		t.Errorf("a scheduler-against-time verdict for expire, which they do not run:\n%s", out)
	}
}

func TestChartsAndJSON(t *testing.T) {
	r, l := fake()
	l.Kinds = []workload.Kind{workload.Schedule, workload.Expire, workload.Memory}
	l.Contenders = l.Contenders[:2] // sorted, heap
	dir := filepath.Join(t.TempDir(), "out")
	files, err := Charts(dir, r, l)
	if err != nil {
		t.Fatal(err)
	}
	// three workloads, two of them counted, and the two contenders' ns/op; PNG and SVG each
	var names []string
	for _, f := range Figures(r, l) {
		names = append(names, f.Name)
	}
	want := []string{"workload-schedule", "workload-expire", "workload-memory", "steps-schedule", "steps-expire", "structure-sorted", "structure-heap"}
	if !slices.Equal(names, want) || len(files) != 2*len(want) {
		t.Errorf("figures %v, %d files; want %v, twice as many files", names, len(files), want)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil || len(data) < 100 {
			t.Fatalf("%s: %d bytes, %v", f, len(data), err)
		}
		if strings.HasSuffix(f, ".png") && !bytes.HasPrefix(data, []byte("\x89PNG")) {
			t.Errorf("%s is not a PNG", f)
		}
	}
	var b bytes.Buffer
	run := NewRun(ThisMachine(), Load{}, l, workload.DefaultBudget(), 0, r, files)
	if err := run.WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	var back Run
	if err := json.Unmarshal(b.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	if len(back.Results) != len(r.all) || len(back.Steps) != len(r.steps) || len(back.Growth) == 0 || len(back.Classes) == 0 ||
		len(back.Claims) != 4 || back.Machine.Go == "" {
		t.Errorf("JSON round trip lost something: %d results, %d steps, %d growths, %d classes, %d claims",
			len(back.Results), len(back.Steps), len(back.Growth), len(back.Classes), len(back.Claims))
	}
}

// TestFiguresCannotMislead checks that the charts cannot mislead: one unit on each chart's axis, an axis that covers the
// data with a labelled tick at or below it, and a line that stops at a
// cell over budget marked where it stopped.
func TestFiguresCannotMislead(t *testing.T) {
	r, l := fake()
	for _, f := range Figures(r, l) {
		c := f.chart
		if strings.HasPrefix(f.Name, "structure-") && c.unit != "ns/op" {
			t.Errorf("%s: unit %s", f.Name, c.unit)
		}
		if strings.HasPrefix(f.Name, "steps-") != strings.HasPrefix(c.unit, "steps") {
			t.Errorf("%s: unit %s", f.Name, c.unit)
		}
		lo, hi := c.yRange()
		ticks := decades{unit: c.unit}.Ticks(lo, hi)
		first := math.Inf(1)
		for _, tk := range ticks {
			if tk.Label != "" {
				first = min(first, tk.Value)
			}
		}
		for i, line := range c.lines {
			for _, p := range line {
				if p.Y < lo || p.Y > hi || p.Y < first {
					t.Errorf("%s, %s: %v outside the axis %v–%v or under its first label %v", f.Name, c.names[i], p.Y, lo, hi, first)
				}
			}
			// sorted is over budget at 1e6 in every workload, timed and counted
			sorted := strings.HasPrefix(c.names[i], "sorted") || f.Name == "structure-sorted"
			said := strings.Contains(c.names[i], "(over budget from 1e6)")
			if crossed := len(c.overs[i]) == 1; crossed != sorted || said != sorted {
				t.Errorf("%s, %s: over-budget cross %v", f.Name, c.names[i], c.overs[i])
			}
		}
	}
	// sorted's schedule stops at 1e6: a cross there, at its last value
	for _, f := range Figures(r, l) {
		if f.Name != "workload-schedule" {
			continue
		}
		i := slices.Index(f.chart.names, "sorted (over budget from 1e6)")
		if i < 0 || len(f.chart.overs[i]) != 1 || f.chart.overs[i][0].X != 1e6 || f.chart.overs[i][0].Y != 30 {
			t.Errorf("sorted's line: names %v, overs %v", f.chart.names, f.chart.overs)
		}
	}
}

func TestLoad(t *testing.T) {
	stat := func(user, system, idle, steal int) string {
		return fmt.Sprintf("cpu  %d 0 %d %d 0 0 0 %d 0 0\ncpu0 1 2 3 4 5 6 7 8 9 10\ncpu1 1 2 3 4 5 6 7 8 9 10\nintr 1\n", user, system, idle, steal)
	}
	busy, steal, cpus, ok := parseProcStat(stat(300, 100, 600, 50))
	if !ok || busy != 4 || steal != 0.5 || cpus != 2 {
		t.Fatalf("parseProcStat = %v, %v, %v, %v; want 4 s busy, 0.5 s steal, 2 CPUs", busy, steal, cpus, ok)
	}
	if _, _, _, ok := parseProcStat("intr 1\n"); ok {
		t.Error("parseProcStat of a file without a cpu line succeeded")
	}
	at := time.Now()
	a := cpuSample{at: at, busy: 10, own: 2, steal: 1, cpus: 2, loadavg: 0.5, ok: true}
	b := cpuSample{at: at.Add(10 * time.Second), busy: 25, own: 7, steal: 1, cpus: 2, loadavg: 1.5, ok: true}
	l := loadBetween(a, b)
	if !l.Known || l.Busy != 1.5 || l.Own != 0.5 || l.Others != 1 || l.Steal != 0 || l.LoadAvg != [2]float64{0.5, 1.5} {
		t.Errorf("loadBetween = %+v; want 1.5 cores busy, 0.5 of them the lab's, 1 others'", l)
	}
	if s := l.String(); !strings.Contains(s, "other processes kept 1.00 of 2 cores busy") || !strings.Contains(s, "a busy machine") {
		t.Errorf("Load.String() = %q", s)
	}
	a.ok = false
	if l := loadBetween(a, b); l.Known || l.String() != "unknown (no /proc/stat)" {
		t.Errorf("loadBetween without counters = %+v, %q", l, l.String())
	}
}

// TestRankFollowsThePairedRatio: when the laps' paired ratios put the
// cell with the higher median ahead, the verdict names it the cheapest,
// ahead by a ratio above one, never "0.9× ahead".
func TestRankFollowsThePairedRatio(t *testing.T) {
	laps := func(name string, costs ...float64) workload.Result {
		med := slices.Sorted(slices.Values(costs))[len(costs)/2]
		return workload.Result{Contender: name, Value: med, Costs: costs, Status: workload.OK, Rounds: len(costs)}
	}
	// a's median is lower, but b was cheaper in two laps of three by 5 %
	a, b := laps("a", 10, 10, 30), laps("b", 9.5, 12, 12)
	st := rank([]workload.Result{a, b})
	if st.best.Contender != "b" || !slices.Equal(st.next, []string{"a"}) || st.ahead <= 1 {
		t.Errorf("rank: best %s, next %v, ahead %.3f; want b, [a], above 1", st.best.Contender, st.next, st.ahead)
	}
}

// TestConclusion: for each use of timers, the cheapest structure size by
// size, where the choice changes, what the winner costs elsewhere when
// its steps grow as n, and how far the engine is.
func TestConclusion(t *testing.T) {
	r, l := fake()
	var b bytes.Buffer
	lines := Conclusion(&b, r, l)
	if len(lines) != 3 {
		t.Fatalf("%d sentences, want one per use:\n%s", len(lines), b.String())
	}
	want := "timeouts that are mostly cancelled (churn: cancel one, schedule one): wheel (10–15 ns/op) at 1e3–1e5; heap ≈ wheel (39 ns/op) at 1e6. The engine, wheel, is the cheapest at every size."
	if lines[0] != want {
		t.Errorf("churn:\n%s\nwant\n%s", lines[0], want)
	}
	// unordered cheapest at 1e3 and its expire O(n); the wheel from 1e5
	var cs []workload.Contender
	for _, c := range lab.Contenders() {
		if c.Name == "unordered" || c.Name == "wheel" {
			cs = append(cs, c)
		}
	}
	sizes := []int{1e3, 1e5, 1e6}
	var rs, steps []workload.Result
	for _, n := range sizes {
		for _, c := range cs {
			v := map[string]float64{"unordered": 10, "wheel": 20}[c.Name]
			if n > 1e3 {
				v = map[string]float64{"unordered": 60, "wheel": 30}[c.Name]
			}
			for _, k := range []workload.Kind{workload.Churn, workload.Expire} {
				rs = append(rs, workload.Result{Contender: c.Name, Workload: k, N: n, Value: v, Status: workload.OK})
				s := 2.0
				if c.Name == "unordered" && k == workload.Expire {
					s = 13 + float64(n)/1000
				}
				steps = append(steps, workload.Result{Contender: c.Name, Workload: k, N: n, Value: s, Status: workload.OK})
			}
		}
	}
	r = Index(rs).WithSteps(steps)
	b.Reset()
	lines = Conclusion(&b, r, Layout{Contenders: cs, Sizes: sizes, Kinds: []workload.Kind{workload.Churn, workload.Expire}})
	want = "timeouts that are mostly cancelled (churn: cancel one, schedule one): unordered (10 ns/op) at 1e3; wheel (30 ns/op) at 1e5–1e6. " +
		"unordered's expire counts O(n) steps (60 ns/fired at 1e6). The engine, wheel, costs 1.0–2.0× the cheapest."
	if len(lines) != 2 || lines[0] != want {
		t.Errorf("conclusion:\n%s\nwant first\n%s", b.String(), want)
	}
}

// TestLegendStatesTheBand: the legends say the band Compare uses, in its
// numbers, and the lab's other words for what its slopes and classes
// mean.
func TestLegendStatesTheBand(t *testing.T) {
	r, l := fake()
	var b bytes.Buffer
	Verdict(&b, r, l)
	Tables(&b, r, l)
	lo, hi := SameRatios()
	out := b.String()
	for _, want := range []string{fmt.Sprintf("the ratio %.3f–%.3f, each side ±2.5%%", lo, hi), "(far 3)", "flat |s|<0.05", "falls s≤−0.05", "within ±5% of the steps"} {
		if !strings.Contains(out, want) {
			t.Errorf("legends lack %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "3–3") || strings.Contains(out, "≲O(log n)") {
		t.Errorf("legends say 3–3 or ≲O(log n):\n%s", out)
	}
	if o, _ := Compare(workload.Result{Value: lo * 1.0001, Status: workload.OK}, workload.Result{Value: 1, Status: workload.OK}); o != Same {
		t.Errorf("a ratio just inside %.4f: %v, want Same", lo, o)
	}
	if o, _ := Compare(workload.Result{Value: hi * 1.0001, Status: workload.OK}, workload.Result{Value: 1, Status: workload.OK}); o != Dearer {
		t.Errorf("a ratio just outside %.4f: %v, want Dearer", hi, o)
	}
}
