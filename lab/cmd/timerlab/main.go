// Command timerlab measures every timer structure of the lab side by side:
// schedule, cancel, expire, churn, refresh, far timers and memory per
// pending timer, at sizes from 1e2 to 1e6 pending timers, for the
// structures of package lab, the engine, package time and the scheduler.
// It prints the tables, writes log-log charts as PNG and SVG, and shows
// its progress on standard error.
//
// Usage:
//
//	go run ./lab/cmd/timerlab [-full] [-json] [-only heap,wheel,time] [-sizes 1e3,1e5] [-out DIR] [-repeat N]
//
// A run with no flags takes about 105 seconds on two cores. Every
// workload and size is measured on all contenders in turn, round after
// round, and each cell is the median of its rounds; the report says how
// busy the machine was, prints ≈ where two cells are too close to tell
// apart, and ends with a verdict per workload computed from the run.
// Every cell is time-boxed: a structure whose cost explodes is reported
// over budget, and its larger sizes are not run.
//
// With -repeat N it runs the lab N times back to back and, instead of the
// tables, reports how far the runs agree: the scheduler's verdict against
// package time in each run, every growth label in each run, and how many
// changed. That is the measure of how much one run can be trusted with.
package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/schollz/progressbar/v3"

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
	fmt.Fprintf(stderr, "timerlab: %s\n", machine)
	cfg := workload.Config{Contenders: o.contenders, Kinds: o.kinds, Sizes: o.sizes, Budget: o.budget, Seed: 1}
	if workload.Cells(cfg) == 0 {
		return errNothing
	}
	if o.repeat > 1 {
		return repeat(o, cfg, start, load, machine, stdout, stderr)
	}
	cfg, done := withProgress(cfg, stderr, "")
	results := report.Index(workload.Run(cfg))
	done()
	layout := report.Layout{Contenders: o.contenders, Sizes: o.sizes, Kinds: o.kinds}
	var charts []string
	if o.out != "" {
		fmt.Fprintf(stderr, "timerlab: writing charts to %s\n", o.out)
		if charts, err = report.Charts(o.out, results, layout); err != nil {
			return err
		}
	}
	wall, busy := time.Since(start), load.Stop()
	if o.json {
		return report.NewRun(machine, busy, layout, o.budget, wall, results, charts).WriteJSON(stdout)
	}
	printReport(stdout, o, machine, busy, results, layout, len(charts), wall)
	return nil
}

// withProgress returns cfg with a progress bar on stderr, each cell
// described after prefix, and the function that clears the bar when the
// run is over.
func withProgress(cfg workload.Config, stderr io.Writer, prefix string) (workload.Config, func()) {
	bar := progressbar.NewOptions(workload.Cells(cfg),
		progressbar.OptionSetWriter(stderr),
		progressbar.OptionSetWidth(30),
		progressbar.OptionShowCount(),
		progressbar.OptionSetElapsedTime(true),
		progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionClearOnFinish(),
	)
	cfg.Progress = func(r workload.Result) {
		bar.Describe(fmt.Sprintf("%s%-9s %-8s n=%-4s", prefix, r.Contender, r.Workload, report.SizeLabel(r.N)))
		bar.Add(1)
	}
	return cfg, func() { bar.Finish() }
}

// repeat runs the lab o.repeat times and writes how far the runs agree:
// the measure of what one run's verdicts can be trusted with.
func repeat(o options, cfg workload.Config, start time.Time, load *report.LoadMeter, machine report.Machine, stdout, stderr io.Writer) error {
	runs := make([]*report.Results, o.repeat)
	for i := range runs {
		c, done := withProgress(cfg, stderr, fmt.Sprintf("run %d/%d: ", i+1, o.repeat))
		runs[i] = report.Index(workload.Run(c))
		done()
	}
	fmt.Fprintf(stdout, "timerlab: %d runs of the same lab, back to back\n", o.repeat)
	fmt.Fprintf(stdout, "machine: %s\n", machine)
	fmt.Fprintf(stdout, "load:    %s\n\n", load.Stop())
	report.Agreement(stdout, runs, report.Layout{Contenders: o.contenders, Sizes: o.sizes, Kinds: o.kinds})
	fmt.Fprintf(stdout, "wall time: %.1fs\n", time.Since(start).Seconds())
	return nil
}

func printReport(w io.Writer, o options, m report.Machine, busy report.Load, r *report.Results, l report.Layout, charts int, wall time.Duration) {
	fmt.Fprintf(w, "timerlab: every timer structure, side by side (one tick = 1 ms)\n")
	fmt.Fprintf(w, "machine: %s\n", m)
	fmt.Fprintf(w, "load:    %s\n", busy)
	far := fmt.Sprint(workload.MinFarRounds)
	if workload.MaxFarRounds != workload.MinFarRounds {
		far = fmt.Sprintf("%d–%d", workload.MinFarRounds, workload.MaxFarRounds)
	}
	fmt.Fprintf(w, "rounds:  %v timed each, every contender's in turn; %d–%d per cell, the same for every cell of a workload and size (far: %s), fewer once each middle half is within ±%.0f%% of its median\n",
		o.budget.Round, workload.MinRounds, workload.MaxRounds, far, 100*workload.Settled)
	clock := "the lab thread's CPU time"
	if !workload.CPUClock() {
		clock = "wall time"
	}
	fmt.Fprintf(w, "budget:  %v per cell, %v to fill, %v per far cell (%s)\n\n", o.budget.Cell, o.budget.Fill, o.budget.Far, clock)
	for _, section := range []func(io.Writer){
		func(w io.Writer) { report.Tables(w, r, l) },
		func(w io.Writer) { report.Claims(w, r, l) },
		func(w io.Writer) { report.Versus(w, r, l.Sizes) },
		func(w io.Writer) { report.Verdict(w, r, l) },
	} {
		var b bytes.Buffer
		if section(&b); b.Len() > 0 {
			fmt.Fprintf(w, "%s\n", b.Bytes())
		}
	}
	if o.out != "" {
		fmt.Fprintf(w, "charts: %d files in %s (workload-*.png|svg, structure-*.png|svg)\n", charts, o.out)
	}
	fmt.Fprintf(w, "wall time: %.1fs\n", wall.Seconds())
}
