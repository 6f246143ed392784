package report

import (
	"fmt"
	"io"
	"slices"

	"github.com/timewheel/timewheel/lab/workload"
)

// VersusSizes are the sizes of the scheduler-against-package-time table.
var VersusSizes = []int{1e3, 1e5, 1e6}

// Versus writes the scheduler against package time on the workloads of
// DESIGN.md: W1 churn, W2 refresh, W4 bytes per timer. The engine alone
// (no lock, no clock) stands beside them. It covers the sizes of
// VersusSizes the run measured. Each value is a median, ± half the width of the middle
// half of its rounds; the ratio is timewheel over time (below 1 is
// better), or ≈ where Compare finds them the same. It writes nothing
// unless the run measured both.
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
	fmt.Fprintf(w, "%-11s %-8s %5s %13s %13s %13s %8s  %s\n", "workload", "unit", "n", "timewheel", "time", "engine", "tw/time", "verdict")
	for _, row := range rows {
		for _, n := range VersusSizes {
			if !slices.Contains(sizes, n) {
				continue
			}
			tw, okTW := r.Get("timewheel", row.kind, n)
			tm, okTM := r.Get("time", row.kind, n)
			en, okEN := r.Get("wheel", row.kind, n)
			ratio, verdict := "-", "-"
			if a, ok := r.ok("timewheel", row.kind, n); ok {
				if b, ok := r.ok("time", row.kind, n); ok {
					ratio, verdict = versus(row.kind, a, b)
				}
			}
			fmt.Fprintf(w, "%-11s %-8s %5s %13s %13s %13s %8s  %s\n", row.name, row.kind.Unit(), SizeLabel(n),
				value(tw, okTW), value(tm, okTM), value(en, okEN), ratio, verdict)
		}
	}
}

// versus returns the ratio column and the verdict of timewheel a against
// time b on workload k.
func versus(k workload.Kind, a, b workload.Result) (ratio, verdict string) {
	o, x := Compare(a, b)
	if o == Same {
		return "≈", "same"
	}
	if o == Cheaper {
		return fmt.Sprintf("%.2fx", x), words(k).better[0]
	}
	return fmt.Sprintf("%.2fx", x), words(k).better[1]
}

// value returns a median and its spread, as "161.7 ±3%".
func value(x workload.Result, ok bool) string {
	switch {
	case !ok:
		return "-"
	case x.Status != workload.OK:
		return "over"
	case x.Rounds <= 1:
		return fmt.Sprintf("%.1f", x.Value)
	}
	return fmt.Sprintf("%.1f ±%.0f%%", x.Value, 100*x.Spread())
}
