package main

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// tiny is a run small enough for a unit test.
func tiny(out string, extra ...string) []string {
	return append([]string{"-sizes", "8,16", "-only", "heap,time,timewheel", "-workloads", "schedule,churn,expire,memory", "-out", out}, extra...)
}

func TestRunPrintsTheTables(t *testing.T) {
	dir := t.TempDir()
	var out, progress bytes.Buffer
	if err := run(tiny(dir), &out, &progress); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"machine:", "GOMAXPROCS=", "schedule, ns/op", "schedule, steps/op", "churn, ns/op", "heap", "claimed against counted",
		"timewheel vs time", "conclusion", "charts:", "report.html", "wall time:", "peak memory:"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	if !strings.Contains(progress.String(), "timerlab:") {
		t.Errorf("no progress on stderr: %q", progress.String())
	}
	if pngs, _ := filepath.Glob(filepath.Join(dir, "*.png")); len(pngs) == 0 {
		t.Error("no PNG charts written")
	}
	page, err := os.ReadFile(filepath.Join(dir, "report.html"))
	if err != nil {
		t.Fatal(err)
	}
	d := xml.NewDecoder(bytes.NewReader(page))
	d.Entity = xml.HTMLEntity
	figures := 0
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("report.html: %v", err)
		}
		if x, ok := tok.(xml.StartElement); ok && x.Name.Local == "figure" {
			figures++
		}
	}
	if svgs, _ := filepath.Glob(filepath.Join(dir, "*.svg")); figures == 0 || figures != len(svgs) {
		t.Errorf("report.html holds %d charts, the run wrote %d", figures, len(svgs))
	}
}

// TestProgressQuietWhenNotATerminal: with standard error a file, not a
// terminal, the progress is one line per workload and size of each pass,
// each saying how far the run is, and no carriage return.
func TestProgressQuietWhenNotATerminal(t *testing.T) {
	var progress bytes.Buffer
	if err := run(tiny(""), io.Discard, &progress); err != nil {
		t.Fatal(err)
	}
	out := progress.String()
	if strings.Contains(out, "\r") {
		t.Errorf("carriage returns in a non-terminal's progress: %q", out)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	var groups int
	for _, l := range lines[1:] { // the first names the machine
		if strings.HasPrefix(l, "timerlab: timed ") || strings.HasPrefix(l, "timerlab: steps ") {
			groups++
			if !strings.Contains(l, "% done after") {
				t.Errorf("progress line without the share done: %q", l)
			}
		}
	}
	// timed: 2 sizes × schedule, churn, expire, memory; steps: 2 sizes × schedule, churn, expire
	if groups != 2*4+2*3 || len(lines) != groups+1 {
		t.Errorf("%d progress lines for %d workloads and sizes, want 14:\n%s", len(lines), groups, out)
	}
}

func TestRunJSON(t *testing.T) {
	var out bytes.Buffer
	if err := run(tiny("", "-json"), &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	var got struct {
		Machine struct{ Go string }
		Results []struct {
			Contender, Workload, Status string
			N                           int
		}
	}
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatalf("%v:\n%s", err, out.String())
	}
	if got.Machine.Go == "" || len(got.Results) == 0 {
		t.Fatalf("JSON without machine or results:\n%s", out.String())
	}
	for _, r := range got.Results {
		if r.Contender == "time" && r.Workload == "expire" {
			t.Error("package time has an expire result")
		}
	}
}

func TestBadFlags(t *testing.T) {
	for _, args := range [][]string{
		{"-only", "heap,nosuch"},
		{"-sizes", "1e3,lots"},
		{"-sizes", "0"},
		{"-workloads", "nap"},
		{"extra"},
	} {
		if err := run(args, io.Discard, io.Discard); err == nil || err == errHelp {
			t.Errorf("run(%q) = %v, want an error", args, err)
		}
	}
	var usage bytes.Buffer
	if err := run([]string{"-h"}, io.Discard, &usage); err != errHelp || !strings.Contains(usage.String(), "-only") {
		t.Errorf("-h: %v, usage %q", err, usage.String())
	}
}

func TestFullAddsTenMillion(t *testing.T) {
	o, err := parseOptions([]string{"-full"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if got := o.sizes[len(o.sizes)-1]; got != 1e7 {
		t.Errorf("-full: largest size %d, want 1e7", got)
	}
	if o.out != "timerlab-out" {
		t.Errorf("default -out is %q", o.out)
	}
}

// TestRepeatReportsAgreement: -repeat runs the lab that many times and
// reports how far the runs agree, with no tables and no charts.
func TestRepeatReportsAgreement(t *testing.T) {
	dir := t.TempDir()
	var out bytes.Buffer
	if err := run(append(tiny(dir, "-repeat", "2"), "-sizes", "8,16,32"), &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"2 runs of the same lab", "load:", "timewheel vs time over 2 runs", "churn", "classes of the steps over 2 runs",
		"heap       expire    O(", "agreement: verdicts differ in", "of 9 cells", "classes of the steps differ in 0 of 3", "wall time:"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	if strings.Contains(out.String(), "schedule, ns/op") {
		t.Errorf("-repeat printed the tables:\n%s", out.String())
	}
	if files, _ := filepath.Glob(filepath.Join(dir, "*")); len(files) != 0 {
		t.Errorf("-repeat wrote charts: %v", files)
	}
}
