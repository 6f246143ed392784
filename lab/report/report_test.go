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

// fake returns results for five contenders at three sizes, each a median
// with its middle half ±5 %: heap O(log n) and sorted the same, sorted
// over budget at the largest; wheel half of heap's cost but the same at
// 1e6; package time twice heap's, without expire; the scheduler faster
// than package time at 1e3, the same at 1e5, slower at 1e6.
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
	return Index(rs), Layout{Contenders: cs, Sizes: sizes, Kinds: workload.Kinds()}
}

func TestTables(t *testing.T) {
	r, l := fake()
	var b bytes.Buffer
	Tables(&b, r, l)
	out := b.String()
	for _, want := range []string{"schedule, ns/op", "expire, ns/fired", "far, ns/timer", "memory, B/timer", "1e3", "1e6", "≲O(log n) 0.10", "over"} {
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
	Claims(&b, r, l)
	if !strings.Contains(b.String(), "O(log n)") || strings.Contains(b.String(), "timewheel") {
		t.Errorf("claims:\n%s", b.String())
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
	l.Kinds = []workload.Kind{workload.Schedule, workload.Memory}
	l.Contenders = l.Contenders[:2]
	dir := filepath.Join(t.TempDir(), "out")
	files, err := Charts(dir, r, l)
	if err != nil {
		t.Fatal(err)
	}
	// two workloads and two contenders, PNG and SVG each
	if len(files) != 2*(2+2) {
		t.Errorf("wrote %d files: %v", len(files), files)
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
	if len(back.Results) != len(r.all) || len(back.Growth) == 0 || back.Machine.Go == "" {
		t.Errorf("JSON round trip lost something: %d results, %d growths", len(back.Results), len(back.Growth))
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
