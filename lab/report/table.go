package report

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/timewheel/timewheel/lab/workload"
)

// Results indexes a run's results by contender, workload and size.
type Results struct {
	all   []workload.Result
	cells map[key]workload.Result
}

type key struct {
	contender string
	kind      workload.Kind
	n         int
}

// Index returns the results indexed.
func Index(rs []workload.Result) *Results {
	r := &Results{all: rs, cells: map[key]workload.Result{}}
	for _, x := range rs {
		r.cells[key{x.Contender, x.Workload, x.N}] = x
	}
	return r
}

// Get returns the cell of a contender, workload and size, and false if
// there is none.
func (r *Results) Get(contender string, k workload.Kind, n int) (workload.Result, bool) {
	x, ok := r.cells[key{contender, k, n}]
	return x, ok
}

// has reports whether any result is the contender's.
func (r *Results) has(contender string) bool {
	for _, x := range r.all {
		if x.Contender == contender {
			return true
		}
	}
	return false
}

// Growth returns the growth of a contender's workload over the sizes.
func (r *Results) Growth(contender string, k workload.Kind) workload.Growth {
	var rs []workload.Result
	for _, x := range r.all {
		if x.Contender == contender && x.Workload == k {
			rs = append(rs, x)
		}
	}
	return workload.FitGrowth(rs)
}

// Layout says what the tables show: the rows, the columns' sizes and the
// workloads measured.
type Layout struct {
	Contenders []workload.Contender
	Sizes      []int
	Kinds      []workload.Kind
}

func (l Layout) has(k workload.Kind) bool {
	for _, x := range l.Kinds {
		if x == k {
			return true
		}
	}
	return false
}

// Tables writes the lab's tables: schedule, cancel and expire side by side
// for every contender (the reference documents' table, measured), then
// churn, refresh and far, then memory, each value at each size with the
// growth observed beside it.
func Tables(w io.Writer, r *Results, l Layout) {
	groups := [][]workload.Kind{
		{workload.Schedule, workload.Cancel, workload.Expire},
		{workload.Churn, workload.Refresh, workload.Far},
		{workload.Memory},
	}
	first := true
	for _, g := range groups {
		var ks []workload.Kind
		for _, k := range g {
			if l.has(k) {
				ks = append(ks, k)
			}
		}
		if len(ks) == 0 {
			continue
		}
		if !first {
			fmt.Fprintln(w)
		}
		first = false
		block(w, r, l, ks)
	}
	fmt.Fprintln(w)
	if half, most, ok := spreads(r); ok {
		fmt.Fprintf(w, "cells: the median of %d–%d rounds (far %d–%d), each contender's round in turn with the others', the collector off; the middle half of\n", workload.MinRounds, workload.MaxRounds, workload.MinFarRounds, workload.MaxFarRounds)
		fmt.Fprintf(w, "       a cell's rounds lies within ±%.0f%% of its median in half the cells, ±%.0f%% in nine in ten (-json: every cell's quartiles).\n", 100*half, 100*most)
	}
	fmt.Fprintln(w, "over: over budget (stopped by its time budget, or skipped after a smaller size was);  -: not measured for this row")
	fmt.Fprintln(w, "growth: slope s of log(cost) over log(n), the median of the slopes between every two sizes measured (Theil–Sen: one spoiled")
	fmt.Fprintln(w, "        size does not tilt it), printed after its class: s<0.6 ≲O(log n), s<0.8 ≈O(√n), s<1.25 ≈O(n), s<1.75 ≈O(n^1.5),")
	fmt.Fprintln(w, "        beyond ≈O(n²). From 1e2 to 1e6, O(log n) alone gives s≈0.12 and cache misses alone give an O(1) operation")
	fmt.Fprintln(w, "        s≈0.1–0.35, so no run tells O(1) from O(log n): near 0 is flat, 0.2–0.45 a cache miss per operation.")
	if l.has(workload.Far) {
		fmt.Fprintln(w, "far: ns per timer over its whole life (10 min to 1 day out, clock driven in 1 s steps until all fired); the 86,400")
		fmt.Fprintln(w, "     steps cost the same whatever n, so at small n they dominate and the cost falls as n grows.")
	}
	if l.has(workload.Memory) {
		fmt.Fprintln(w, "memory: HeapAlloc delta / n, the structure's fixed part included (libco's 60,000 slots are 960 KB).")
	}
}

// spreads returns the median and the 90th percentile of the cells'
// spreads, over the cells of more than one round.
func spreads(r *Results) (half, most float64, ok bool) {
	var xs []float64
	for _, x := range r.all {
		if x.Status == workload.OK && x.Rounds > 1 {
			xs = append(xs, x.Spread())
		}
	}
	if len(xs) == 0 {
		return 0, 0, false
	}
	slices.Sort(xs)
	return xs[len(xs)/2], xs[len(xs)*9/10], true
}

// cellWidth is the width of one value.
const cellWidth = 6

func block(w io.Writer, r *Results, l Layout, ks []workload.Kind) {
	nameW := len("structure")
	for _, c := range l.Contenders {
		nameW = max(nameW, len(c.Name))
	}
	groupW := cellWidth*len(l.Sizes) + 1 + growthWidth
	var b strings.Builder
	fmt.Fprintf(&b, "%-*s", nameW, "")
	for _, k := range ks {
		fmt.Fprintf(&b, " │ %-*s", groupW, fmt.Sprintf("%s, %s", k, k.Unit()))
	}
	fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
	b.Reset()
	fmt.Fprintf(&b, "%-*s", nameW, "structure")
	for range ks {
		b.WriteString(" │ ")
		for _, n := range l.Sizes {
			fmt.Fprintf(&b, "%*s", cellWidth, SizeLabel(n))
		}
		fmt.Fprintf(&b, " %-*s", growthWidth, "growth")
	}
	fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
	fmt.Fprintln(w, rule(nameW, groupW, len(ks)))
	for _, c := range l.Contenders {
		b.Reset()
		fmt.Fprintf(&b, "%-*s", nameW, c.Name)
		for _, k := range ks {
			b.WriteString(" │ ")
			if !c.Supports(k) {
				fmt.Fprintf(&b, "%*s %-*s", cellWidth*len(l.Sizes), "-", growthWidth, "")
				continue
			}
			for _, n := range l.Sizes {
				fmt.Fprintf(&b, "%*s", cellWidth, cell(r, c.Name, k, n))
			}
			fmt.Fprintf(&b, " %s", padRight(r.Growth(c.Name, k).String(), growthWidth))
		}
		fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
	}
}

// growthWidth fits "≲O(log n) -0.93" and "≈O(n^1.5) 1.42".
const growthWidth = 16

func rule(nameW, groupW, groups int) string {
	s := strings.Repeat("─", nameW)
	for range groups {
		s += "─┼─" + strings.Repeat("─", groupW)
	}
	return s
}

// cell returns one value as the tables show it.
func cell(r *Results, contender string, k workload.Kind, n int) string {
	x, ok := r.Get(contender, k, n)
	switch {
	case !ok:
		return "-"
	case x.Status != workload.OK:
		return "over"
	}
	return Compact(x.Value)
}

// Compact returns v in at most five characters: 45, 999, 1.2k, 45k, 1.2M.
func Compact(v float64) string {
	switch {
	case v < 9.95:
		return fmt.Sprintf("%.1f", v)
	case v < 999.5:
		return fmt.Sprintf("%.0f", v)
	case v < 9950:
		return fmt.Sprintf("%.1fk", v/1e3)
	case v < 999.5e3:
		return fmt.Sprintf("%.0fk", v/1e3)
	case v < 9.95e6:
		return fmt.Sprintf("%.1fM", v/1e6)
	case v < 999.5e6:
		return fmt.Sprintf("%.0fM", v/1e6)
	}
	return fmt.Sprintf("%.0fG", v/1e9)
}

// SizeLabel returns n as 1e3 when it is a power of ten, as is otherwise.
func SizeLabel(n int) string {
	p, m := 0, n
	for m >= 10 && m%10 == 0 {
		m /= 10
		p++
	}
	if m == 1 && p > 0 {
		return fmt.Sprintf("1e%d", p)
	}
	return fmt.Sprint(n)
}

// Claims writes, for every structure, the costs the reference documents
// claim beside the growth measured: schedule, cancel and expire, those of
// them the run measured. It writes nothing if it measured none.
func Claims(w io.Writer, r *Results, l Layout) {
	var ks []workload.Kind
	for _, k := range []workload.Kind{workload.Schedule, workload.Cancel, workload.Expire} {
		if l.has(k) {
			ks = append(ks, k)
		}
	}
	if len(ks) == 0 {
		return
	}
	const colW = 33
	var b strings.Builder
	fmt.Fprintf(&b, "%-10s", "structure")
	for _, k := range ks {
		fmt.Fprintf(&b, " │ %-*s", colW, string(k)+": claimed, observed")
	}
	fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
	fmt.Fprintln(w, strings.Repeat("─", 10)+strings.Repeat("─┼─"+strings.Repeat("─", colW), len(ks)))
	for _, c := range l.Contenders {
		s := c.Claims
		if s == nil {
			continue
		}
		claims := map[workload.Kind]string{workload.Schedule: s.Schedule, workload.Cancel: s.Cancel, workload.Expire: s.Expire}
		b.Reset()
		fmt.Fprintf(&b, "%-10s", c.Name)
		for _, k := range ks {
			fmt.Fprintf(&b, " │ %s", padRight(padRight(claims[k], 17)+" "+r.Growth(c.Name, k).String(), colW))
		}
		fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
	}
}

// padRight pads s with spaces to n runes (fmt pads to n bytes).
func padRight(s string, n int) string {
	return s + strings.Repeat(" ", max(0, n-utf8.RuneCountInString(s)))
}
