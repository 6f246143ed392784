package report

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/timewheel/timewheel/lab/workload"
)

// Verdict writes what the run found, computed from its results. For
// every workload, it says which structure is the cheapest at each size
// and by how much over the next one, or which are equal (see Compare).
// Then it says where the scheduler stands against package time, size by
// size.
// Package time and the scheduler are not structures: they pay a lock and
// a clock read, and are compared with each other only.
func Verdict(w io.Writer, r *Results, l Layout) {
	fs := findings(r, l)
	if len(fs) == 0 {
		return
	}
	fmt.Fprintf(w, "verdict, computed from this run (medians of the laps' ratios; ≈: %s, the resolution of back-to-back runs):\n", bandWords())
	for _, f := range fs {
		prefix := fmt.Sprintf("%-9s ", f.Kind)
		if f.Cheapest != "" {
			fmt.Fprintln(w, prefix+f.Word+": "+f.Cheapest)
			prefix = strings.Repeat(" ", len(prefix))
		}
		if f.Versus != "" {
			fmt.Fprintln(w, prefix+"timewheel vs time: "+f.Versus)
		}
	}
}

// finding is the verdict on one workload: the cheapest structure size by
// size, and the scheduler against package time; either "" if the run
// did not measure it.
type finding struct {
	Kind     workload.Kind
	Word     string // "cheapest", or "smallest" for memory
	Cheapest string
	Versus   string
}

// findings returns the verdict on every workload the run measured.
func findings(r *Results, l Layout) []finding {
	var structures []string
	for _, c := range l.Contenders {
		if c.Claims != nil {
			structures = append(structures, c.Name)
		}
	}
	var fs []finding
	for _, k := range l.Kinds {
		f := finding{Kind: k, Word: words(k).cheapest, Cheapest: cheapest(r, structures, k, l.Sizes), Versus: schedulerVsTime(r, k, l.Sizes)}
		if f.Cheapest != "" || f.Versus != "" {
			fs = append(fs, f)
		}
	}
	return fs
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
// k. With it come those the run cannot tell from it, or by how much it is
// ahead of the next one. It returns "" if no size has a result.
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
		st := rank(cells)
		unit := k.Unit()
		switch {
		case len(st.same) > 1:
			key := strings.Join(st.same, " ≈ ")
			spans = addSpan(spans, key, n, st.best.Value, func(lo, hi float64) string {
				return fmt.Sprintf("%s (%s %s)", key, between(lo, hi), unit)
			})
		case len(st.next) == 0:
			spans = addSpan(spans, st.best.Contender+" alone", n, st.best.Value, func(lo, hi float64) string {
				return fmt.Sprintf("%s, the only one measured (%s %s)", st.best.Contender, between(lo, hi), unit)
			})
		default:
			best, others := st.best.Contender, strings.Join(st.next, " ≈ ")
			spans = addSpan(spans, best+" ahead of "+others, n, st.ahead, func(lo, hi float64) string {
				return fmt.Sprintf("%s, %s %s %s", best, times(lo, hi), words(k).ahead, others)
			})
		}
	}
	return join(spans, measured)
}

// standing is how the cells of one workload and size rank: the cheapest,
// those the run cannot tell from it, and the next ones.
type standing struct {
	best  workload.Result
	same  []string // the cheapest and those Same as it, sorted
	next  []string // the cheapest of the others and those Same as it, sorted; nil if none
	ahead float64  // how far the cheapest is ahead of the next: their paired ratio, above SameRatios' hi
}

// rank ranks cells by Compare. The cheapest is the cell no other is
// Cheaper than: the lowest median, unless the laps' paired ratios put
// another ahead of it. Then come those the same as it, then the others
// by their medians.
func rank(cells []workload.Result) standing {
	cells = slices.Clone(cells)
	slices.SortStableFunc(cells, func(a, b workload.Result) int { return cmp.Compare(a.Value, b.Value) })
	best := cells[0]
	for _, x := range cells[1:] {
		if o, _ := Compare(x, best); o == Cheaper {
			best = x
		}
	}
	st := standing{best: best, same: []string{best.Contender}}
	var rest []workload.Result
	for _, x := range cells {
		switch o, _ := Compare(x, best); {
		case x.Contender == best.Contender:
		case o == Dearer:
			rest = append(rest, x)
		default:
			st.same = append(st.same, x.Contender)
		}
	}
	slices.Sort(st.same)
	if len(rest) > 0 {
		next := rest[0]
		st.next = []string{next.Contender}
		for _, x := range rest[1:] {
			if o, _ := Compare(x, next); o == Same {
				st.next = append(st.next, x.Contender)
			}
		}
		slices.Sort(st.next)
		st.ahead = Ratio(next, best)
	}
	return st
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
