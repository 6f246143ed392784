package report

import (
	"fmt"
	"io"

	"github.com/timewheel/timewheel/lab/workload"
)

// VersusSizes are the sizes of the scheduler-against-package-time table.
var VersusSizes = []int{1e3, 1e5, 1e6}

// Versus writes the scheduler against package time on the workloads of
// DESIGN.md: W1 churn, W2 refresh, W4 bytes per timer, with the engine
// alone (no lock, no clock) beside them, at the sizes of VersusSizes the
// run measured. The ratio is timewheel over time: below 1 is better. It
// writes nothing unless the run measured both.
func Versus(w io.Writer, r *Results, sizes []int) {
	if !r.has("timewheel") || !r.has("time") {
		return // nothing to compare
	}
	rows := []struct {
		name string
		kind workload.Kind
	}{
		{"W1 churn", workload.Churn},
		{"W2 refresh", workload.Refresh},
		{"W4 memory", workload.Memory},
	}
	fmt.Fprintln(w, "timewheel vs time: the scheduler (lock, clock, timewheel.New) against package time; engine is queue.Wheel bare")
	fmt.Fprintf(w, "%-11s %-8s %5s %10s %10s %10s %8s\n", "workload", "unit", "n", "timewheel", "time", "engine", "tw/time")
	for _, row := range rows {
		for _, n := range VersusSizes {
			if !contains(sizes, n) {
				continue
			}
			tw, okTW := r.Get("timewheel", row.kind, n)
			tm, okTM := r.Get("time", row.kind, n)
			en, _ := r.Get("wheel", row.kind, n)
			ratio := "-"
			if okTW && okTM && tw.Status == workload.OK && tm.Status == workload.OK && tm.Value > 0 {
				ratio = fmt.Sprintf("%.2fx", tw.Value/tm.Value)
			}
			fmt.Fprintf(w, "%-11s %-8s %5s %10s %10s %10s %8s\n", row.name, row.kind.Unit(), SizeLabel(n),
				value(tw, okTW), value(tm, okTM), value(en, en.Status == workload.OK), ratio)
		}
	}
}

func value(x workload.Result, ok bool) string {
	switch {
	case !ok:
		return "-"
	case x.Status != workload.OK:
		return "over"
	}
	return fmt.Sprintf("%.1f", x.Value)
}

func contains(xs []int, x int) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}
