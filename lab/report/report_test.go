package report

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

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

// fake returns results for two contenders at three sizes: heap O(log n),
// sorted over budget at the largest, and package time without expire.
func fake() (*Results, Layout) {
	var cs []workload.Contender
	for _, c := range lab.Contenders() {
		if c.Name == "heap" || c.Name == "sorted" || c.Name == "time" || c.Name == "wheel" || c.Name == "timewheel" {
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
				r := workload.Result{Contender: c.Name, Workload: k, N: n, Value: float64(10 * (i + 2)), Unit: k.Unit(), Ops: 100, Status: workload.OK}
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
	for _, want := range []string{"schedule, ns/op", "expire, ns/fired", "far, ns/timer", "memory, B/timer", "1e3", "1e6", "≈O(log n)", "over"} {
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

func TestClaimsAndVersus(t *testing.T) {
	r, l := fake()
	var b bytes.Buffer
	Claims(&b, r, l)
	if !strings.Contains(b.String(), "O(log n)") || strings.Contains(b.String(), "timewheel") {
		t.Errorf("claims:\n%s", b.String())
	}
	b.Reset()
	Versus(&b, r, l.Sizes)
	for _, want := range []string{"W1 churn", "W2 refresh", "W4 memory", "1.00x"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("versus lacks %q:\n%s", want, b.String())
		}
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
	run := NewRun(ThisMachine(), l, workload.DefaultBudget(), 0, r, files)
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
