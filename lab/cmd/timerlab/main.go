// Command timerlab measures every timer structure of the lab side by side.
// The workloads are schedule, cancel, expire, churn, refresh, far timers
// and memory per pending timer. The sizes run from 1e2 to 1e6 pending
// timers. The contenders are the structures of package lab, the engine,
// package time and the scheduler. Then it counts the steps each structure
// takes per operation of the same workloads, fits a growth class to them
// and holds the reference documents' claims to it.
//
// It prints the tables and writes log-log charts as PNG and SVG. It also
// writes one self-contained HTML page of it all (report.html). It reports
// its progress on standard error: a line redrawn in place on a terminal,
// a line per workload and size otherwise.
//
// Usage:
//
//	go run ./lab/cmd/timerlab [-full] [-json] [-only heap,wheel,time] [-sizes 1e3,1e5] [-workloads churn,far] [-budget 1s] [-out DIR] [-repeat N]
//
// A run with no flags takes minutes and peaks near 2.9 GB of memory:
// docs/lab.md has measured runs, and smaller ones. Every workload and
// size is measured on all contenders in turn, round after round. Each
// cell is the median of its rounds. The report says how busy the machine
// was and prints ≈ where two cells are too close to tell apart. It ends
// with a verdict per workload and a conclusion computed from the run.
// Every cell is budgeted: a structure whose cost explodes is reported
// over budget, and its larger sizes are not run.
//
// With -repeat N it runs the lab N times back to back. Instead of the
// tables, it then reports how far the runs agree:
//   - the scheduler's verdict against package time in each run;
//   - every class of the steps in each run, which must not differ, since
//     steps are exact;
//   - how many changed.
//
// That is the measure of how much one run can be trusted with.
package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/timewheel/timewheel/lab/report"
	"github.com/timewheel/timewheel/lab/workload"
)

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if err == errHelp {
			return // -h asked for the usage: not a failure
		}
		fmt.Fprintln(os.Stderr, "timerlab:", err)
		os.Exit(2)
	}
}

// run is the whole command, writing its report to stdout and its progress
// to stderr.
func run(args []string, stdout, stderr io.Writer) error {
	o, err := parseOptions(args, stderr)
	if err != nil {
		return err
	}
	start := time.Now()
	load := report.StartLoad()
	machine := report.ThisMachine()
	cfg := workload.Config{Contenders: o.contenders, Kinds: o.kinds, Sizes: o.sizes, Budget: o.budget, Seed: 1}
	if workload.Cells(cfg) == 0 {
		return errNothing
	}
	fmt.Fprintf(stderr, "timerlab: %s\n", machine)
	if o.repeat > 1 {
		return repeat(o, cfg, start, load, machine, stdout, stderr)
	}
	p := newProgress(stderr, cfg, 1)
	results := measure(cfg, p)
	p.finish()
	layout := report.Layout{Contenders: o.contenders, Sizes: o.sizes, Kinds: o.kinds}
	var charts []string
	if o.out != "" {
		fmt.Fprintf(stderr, "timerlab: writing charts and report.html to %s\n", o.out)
		if charts, err = report.Charts(o.out, results, layout); err != nil {
			return err
		}
	}
	wall, busy := time.Since(start), load.Stop()
	if o.out != "" {
		page := report.Page{Machine: machine, Load: busy, Budget: o.budget, Wall: wall, PeakRSS: report.PeakRSS(), Results: results, Layout: layout}
		if err := writeHTML(filepath.Join(o.out, "report.html"), page); err != nil {
			return err
		}
	}
	if o.json {
		return report.NewRun(machine, busy, layout, o.budget, wall, results, charts).WriteJSON(stdout)
	}
	printReport(stdout, o, machine, busy, results, layout, len(charts), wall)
	return nil
}

// measure runs the lab once: the timed rounds, then the counting pass,
// which comes after them so that nothing it does falls among them.
func measure(cfg workload.Config, p *progress) *report.Results {
	timed, counted := p.configure(cfg)
	r := report.Index(workload.Run(timed))
	return r.WithSteps(workload.CountSteps(counted))
}

// writeHTML writes the run's page to path.
func writeHTML(path string, page report.Page) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := report.WriteHTML(f, page); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// repeat runs the lab o.repeat times and writes how far the runs agree:
// the measure of what one run's verdicts can be trusted with.
func repeat(o options, cfg workload.Config, start time.Time, load *report.LoadMeter, machine report.Machine, stdout, stderr io.Writer) error {
	runs := make([]*report.Results, o.repeat)
	p := newProgress(stderr, cfg, o.repeat)
	for i := range runs {
		p.next(fmt.Sprintf("run %d/%d: ", i+1, o.repeat))
		runs[i] = measure(cfg, p)
	}
	p.finish()
	fmt.Fprintf(stdout, "timerlab: %d runs of the same lab, back to back\n", o.repeat)
	fmt.Fprintf(stdout, "machine: %s\n", machine)
	fmt.Fprintf(stdout, "load:    %s\n\n", load.Stop())
	report.Agreement(stdout, runs, report.Layout{Contenders: o.contenders, Sizes: o.sizes, Kinds: o.kinds})
	fmt.Fprintf(stdout, "wall time: %.1fs; peak memory: %s\n", time.Since(start).Seconds(), peak())
	return nil
}

// peak returns the process's peak resident memory, as "1.9 GB".
func peak() string {
	b := report.PeakRSS()
	if b == 0 {
		return "unknown"
	}
	return fmt.Sprintf("%.1f GB", float64(b)/1e9)
}

func printReport(w io.Writer, o options, m report.Machine, busy report.Load, r *report.Results, l report.Layout, charts int, wall time.Duration) {
	fmt.Fprintf(w, "timerlab: every timer structure, side by side (one tick = 1 ms)\n")
	fmt.Fprintf(w, "machine: %s\n", m)
	fmt.Fprintf(w, "load:    %s\n", busy)
	fmt.Fprintf(w, "rounds:  %v timed each, every contender's in turn; %s per cell, the same for every cell of a workload and size (far: %s), fewer once each middle half is within ±%.0f%% of its median\n",
		o.budget.Round, rangeOf(workload.MinRounds, workload.MaxRounds), rangeOf(workload.MinFarRounds, workload.MaxFarRounds), 100*workload.Settled)
	fmt.Fprintf(w, "budget:  %v per cell, %v to fill, %v per far cell, on %s; the counting pass: %s steps a cell\n\n",
		o.budget.Cell, o.budget.Fill, o.budget.Far, clockName(), report.Compact(workload.StepBudget))
	for _, section := range []func(io.Writer){
		func(w io.Writer) { report.Tables(w, r, l) },
		func(w io.Writer) { report.Claims(w, r, l) },
		func(w io.Writer) { report.Versus(w, r, l.Sizes) },
		func(w io.Writer) { report.Verdict(w, r, l) },
		func(w io.Writer) { report.Conclusion(w, r, l) },
	} {
		var b bytes.Buffer
		if section(&b); b.Len() > 0 {
			fmt.Fprintf(w, "%s\n", b.Bytes())
		}
	}
	if o.out != "" {
		fmt.Fprintf(w, "charts:  %d files in %s (workload-*, steps-*, structure-*; .png and .svg); the page with all of it: %s\n",
			charts, o.out, filepath.Join(o.out, "report.html"))
	}
	fmt.Fprintf(w, "wall time: %.1fs; peak memory: %s\n", wall.Seconds(), peak())
}

// rangeOf returns "15–41", or "3" when the bounds are one.
func rangeOf(lo, hi int) string {
	if lo == hi {
		return fmt.Sprint(lo)
	}
	return fmt.Sprintf("%d–%d", lo, hi)
}

// clockName names the clock budgets and rounds are on.
func clockName() string {
	if workload.CPUClock() {
		return "the lab thread's CPU time"
	}
	return "wall time (no thread CPU clock here)"
}
