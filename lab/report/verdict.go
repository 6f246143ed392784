package report

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/timewheel/timewheel/lab/workload"
)

// Verdict writes what the run found, computed from its results: for every
// workload, which structure is the cheapest at each size and by how much
// over the next one, or which are equal (see Compare);
// then where the scheduler stands against package time, size by size.
// Package time and the scheduler are not structures: they pay a lock and
// a clock read, and are compared with each other only.
func Verdict(w io.Writer, r *Results, l Layout) {
	var structures []string
	for _, c := range l.Contenders {
		if c.Claims != nil {
			structures = append(structures, c.Name)
		}
	}
	var lines []string
	for _, k := range l.Kinds {
		best := cheapest(r, structures, k, l.Sizes)
		vs := schedulerVsTime(r, k, l.Sizes)
		if best == "" && vs == "" {
			continue
		}
		prefix := fmt.Sprintf("%-9s ", k)
		if best != "" {
			lines = append(lines, prefix+words(k).cheapest+": "+best)
			prefix = strings.Repeat(" ", len(prefix))
		}
		if vs != "" {
			lines = append(lines, prefix+"timewheel vs time: "+vs)
		}
	}
	if len(lines) == 0 {
		return
	}
	fmt.Fprintf(w, "verdict, computed from this run (medians of the laps' ratios; ≈: within ±%.1f%% of each other, the resolution of back-to-back runs):\n", 100*Band)
	for _, line := range lines {
		fmt.Fprintln(w, line)
	}
}

// wording is how a verdict speaks of one workload's unit.
type wording struct {
	cheapest string
	better   [2]string // [0] for cheaper, [1] for dearer
	ahead    string
}

func words(k workload.Kind) wording {
	if k == workload.Memory {
		return wording{"smallest", [2]string{"smaller", "larger"}, "below"}
	}
	return wording{"cheapest", [2]string{"faster", "slower"}, "ahead of"}
}

// span is a run of consecutive sizes with the same finding.
type span struct {
	key    string // the finding, for grouping
	sizes  []int
	values []float64 // the winner's medians, or the ratios
	what   func(lo, hi float64) string
}

// addSpan appends a finding at size n, extending the last span if it has
// the same key.
func addSpan(spans []span, key string, n int, v float64, what func(lo, hi float64) string) []span {
	if len(spans) > 0 && spans[len(spans)-1].key == key {
		s := &spans[len(spans)-1]
		s.sizes, s.values = append(s.sizes, n), append(s.values, v)
		return spans
	}
	return append(spans, span{key: key, sizes: []int{n}, values: []float64{v}, what: what})
}

// join writes spans as "what at sizes; what at sizes".
func join(spans []span, all []int) string {
	var parts []string
	for _, s := range spans {
		lo, hi := slices.Min(s.values), slices.Max(s.values)
		parts = append(parts, s.what(lo, hi)+" "+sizeRange(s.sizes, all))
	}
	return strings.Join(parts, "; ")
}

// sizeRange returns "at every size", "at 1e3" or "at 1e2–1e4".
func sizeRange(sizes, all []int) string {
	switch {
	case slices.Equal(sizes, all) && len(all) > 1:
		return "at every size"
	case len(sizes) == 1:
		return "at " + SizeLabel(sizes[0])
	}
	return "at " + SizeLabel(sizes[0]) + "–" + SizeLabel(sizes[len(sizes)-1])
}

// between returns "45" or "45–60", compact.
func between(lo, hi float64) string {
	if Compact(lo) == Compact(hi) {
		return Compact(lo)
	}
	return Compact(lo) + "–" + Compact(hi)
}

// times returns "1.4×" or "1.2–1.6×".
func times(lo, hi float64) string {
	if fmt.Sprintf("%.1f", lo) == fmt.Sprintf("%.1f", hi) {
		return fmt.Sprintf("%.1f×", lo)
	}
	return fmt.Sprintf("%.1f–%.1f×", lo, hi)
}

// cheapest returns, size by size, the structure with the lowest median on
// k, and those the run cannot tell from it, or by how much it is ahead of
// the next one; "" if no size has a result.
func cheapest(r *Results, structures []string, k workload.Kind, sizes []int) string {
	var spans []span
	var measured []int
	for _, n := range sizes {
		var cells []workload.Result
		for _, name := range structures {
			if x, ok := r.ok(name, k, n); ok {
				cells = append(cells, x)
			}
		}
		if len(cells) == 0 {
			continue
		}
		measured = append(measured, n)
		slices.SortStableFunc(cells, func(a, b workload.Result) int {
			switch {
			case a.Value < b.Value:
				return -1
			case a.Value > b.Value:
				return 1
			}
			return 0
		})
		best := cells[0]
		names := []string{best.Contender}
		for _, x := range cells[1:] {
			if o, _ := Compare(best, x); o == Same {
				names = append(names, x.Contender)
			}
		}
		unit := k.Unit()
		switch {
		case len(names) > 1:
			slices.Sort(names)
			key := strings.Join(names, " ≈ ")
			spans = addSpan(spans, key, n, best.Value, func(lo, hi float64) string {
				return fmt.Sprintf("%s (%s %s)", key, between(lo, hi), unit)
			})
		case len(cells) == 1:
			spans = addSpan(spans, best.Contender+" alone", n, best.Value, func(lo, hi float64) string {
				return fmt.Sprintf("%s, the only one measured (%s %s)", best.Contender, between(lo, hi), unit)
			})
		default:
			next := cells[1]
			group := []string{next.Contender}
			for _, x := range cells[2:] {
				if o, _ := Compare(next, x); o == Same {
					group = append(group, x.Contender)
				}
			}
			slices.Sort(group)
			others := strings.Join(group, " ≈ ")
			key := best.Contender + " ahead of " + others
			_, ratio := Compare(next, best)
			spans = addSpan(spans, key, n, ratio, func(lo, hi float64) string {
				return fmt.Sprintf("%s, %s %s %s", best.Contender, times(lo, hi), words(k).ahead, others)
			})
		}
	}
	return join(spans, measured)
}

// schedulerVsTime returns, size by size, whether the scheduler is faster
// than package time on k, the same, or slower, and by how much; "" if the
// run did not measure both.
func schedulerVsTime(r *Results, k workload.Kind, sizes []int) string {
	var spans []span
	var measured []int
	for _, n := range sizes {
		tw, ok1 := r.ok("timewheel", k, n)
		tm, ok2 := r.ok("time", k, n)
		if !ok1 || !ok2 {
			continue
		}
		measured = append(measured, n)
		o, ratio := Compare(tw, tm)
		switch o {
		case Same:
			spans = addSpan(spans, "same", n, 1, func(float64, float64) string { return "≈" })
		case Cheaper:
			spans = addSpan(spans, "better", n, 1/ratio, func(lo, hi float64) string { return times(lo, hi) + " " + words(k).better[0] })
		case Dearer:
			spans = addSpan(spans, "worse", n, ratio, func(lo, hi float64) string { return times(lo, hi) + " " + words(k).better[1] })
		}
	}
	return join(spans, measured)
}
