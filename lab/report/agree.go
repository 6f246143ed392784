package report

import (
	"fmt"
	"io"
	"strings"
)

// Agreement writes how far several runs of the same lab agree. That is
// the measure of what one run can be trusted with. It writes:
//   - for every workload and size, the scheduler's verdict against
//     package time in each run, with the ratio it weighed (see Ratio).
//     F is faster or smaller, = the same, S slower or larger, as Compare
//     decides;
//   - the class of every counted structure's steps per workload in each
//     run. Steps are exact, so these must not differ.
//
// A row whose verdicts or classes differ is marked with !. It returns
// how many verdicts and how many step classes differ between the runs.
// Cells missing or over budget in some run are left out.
func Agreement(w io.Writer, runs []*Results, l Layout) (verdicts, classes int) {
	if len(runs) == 0 {
		return 0, 0
	}
	fmt.Fprintf(w, "timewheel vs time over %d runs (F faster, = same: %s; S slower; tw/time per run, the median of the laps' ratios):\n", len(runs), bandWords())
	rows := 0
	for _, k := range l.Kinds {
		for _, n := range l.Sizes {
			marks, ratios, ok := make([]string, len(runs)), make([]string, len(runs)), true
			for i, r := range runs {
				tw, ok1 := r.ok("timewheel", k, n)
				tm, ok2 := r.ok("time", k, n)
				if !ok1 || !ok2 {
					ok = false
					break
				}
				o, x := Compare(tw, tm)
				marks[i], ratios[i] = [...]string{"F", "=", "S"}[o+1], fmt.Sprintf("%.2f", x)
			}
			if !ok {
				continue
			}
			rows++
			flag := " "
			if differ(marks) {
				flag = "!"
				verdicts++
			}
			fmt.Fprintf(w, "%s %-9s %5s  %s  %s\n", flag, k, SizeLabel(n), strings.Join(marks, ""), strings.Join(ratios, " "))
		}
	}
	if rows == 0 {
		fmt.Fprintln(w, "  (no workload measured both)")
	}
	fmt.Fprintf(w, "\nclasses of the steps over %d runs (and the slope of the time, which may move):\n", len(runs))
	fitted := 0
	for _, c := range l.Contenders {
		for _, k := range l.Kinds {
			if !c.Counted(k) {
				continue
			}
			names, shown := make([]string, len(runs)), make([]string, len(runs))
			for i, r := range runs {
				f := r.StepFit(c.Name, k)
				names[i], shown[i] = f.Class.String(), padRight(f.String(), 15)+" "+padRight(r.Growth(c.Name, k).String(), 12)
			}
			fitted++
			flag := " "
			if differ(names) {
				flag = "!"
				classes++
			}
			fmt.Fprintf(w, "%s %-10s %-9s %s\n", flag, c.Name, k, strings.TrimRight(strings.Join(shown, "  "), " "))
		}
	}
	fmt.Fprintf(w, "\nagreement: verdicts differ in %d of %d cells; classes of the steps differ in %d of %d\n", verdicts, rows, classes, fitted)
	return verdicts, classes
}

// differ reports whether xs holds two different strings.
func differ(xs []string) bool {
	for _, x := range xs[1:] {
		if x != xs[0] {
			return true
		}
	}
	return false
}
