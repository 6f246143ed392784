package report

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/timewheel/timewheel/lab/workload"
)

// Layout says what the tables show: the rows, the columns' sizes and the
// workloads measured.
type Layout struct {
	Contenders []workload.Contender
	Sizes      []int
	Kinds      []workload.Kind
}

func (l Layout) has(k workload.Kind) bool { return slices.Contains(l.Kinds, k) }

// groups are the workloads the tables put side by side: the reference
// documents' three, then churn, refresh and far, then memory.
var groups = [][]workload.Kind{
	{workload.Schedule, workload.Cancel, workload.Expire},
	{workload.Churn, workload.Refresh, workload.Far},
	{workload.Memory},
}

// view is one kind of table: time (or bytes) per operation, measured, or
// steps per operation, counted.
type view struct {
	steps bool
}

var (
	timed   = view{}
	counted = view{steps: true}
)

// unit returns the unit of workload k's values in this view.
func (v view) unit(k workload.Kind) string {
	if v.steps {
		return k.StepUnit()
	}
	return k.Unit()
}

// shows reports whether the view has a value of contender c on k.
func (v view) shows(c workload.Contender, k workload.Kind) bool {
	if v.steps {
		return c.Counted(k)
	}
	return c.Supports(k)
}

// rows returns the contenders of the view: every one for time, those that
// count their steps for steps.
func (v view) rows(l Layout) []workload.Contender {
	if !v.steps {
		return l.Contenders
	}
	var cs []workload.Contender
	for _, c := range l.Contenders {
		if c.Counts() {
			cs = append(cs, c)
		}
	}
	return cs
}

// get returns the view's cell.
func (v view) get(r *Results, contender string, k workload.Kind, n int) (workload.Result, bool) {
	if v.steps {
		return r.Steps(contender, k, n)
	}
	return r.Get(contender, k, n)
}

// cell returns one value as the tables show it: "-" for none, "over" for
// a cell over budget.
func (v view) cell(r *Results, contender string, k workload.Kind, n int) string {
	x, ok := v.get(r, contender, k, n)
	switch {
	case !ok:
		return "-"
	case x.Status != workload.OK:
		return "over"
	}
	return Compact(x.Value)
}

// growthHeader is the heading of the view's last column.
func (v view) growthHeader() string {
	if v.steps {
		return "class"
	}
	return "time slope"
}

// growth returns the view's last column for a contender's workload: the
// class fitted to the steps, or the named slope of the time.
func (v view) growth(r *Results, contender string, k workload.Kind) string {
	if v.steps {
		return r.StepFit(contender, k).String()
	}
	return r.Growth(contender, k).String()
}

// Tables writes the lab's tables, in this order:
//   - schedule, cancel and expire side by side for every contender (the
//     reference documents' table, measured);
//   - churn, refresh and far;
//   - memory;
//   - a legend.
//
// Under each table come the steps of the same workloads, counted. Each
// value is given at each size, with the slope of the time and the class
// of the steps beside them.
func Tables(w io.Writer, r *Results, l Layout) {
	first := true
	for _, g := range groups {
		ks := l.kinds(g)
		if len(ks) == 0 {
			continue
		}
		for _, v := range []view{timed, counted} {
			if v.steps && !r.countedAny(ks) {
				continue
			}
			if !first {
				fmt.Fprintln(w)
			}
			first = false
			block(w, r, l, ks, v)
		}
	}
	fmt.Fprintln(w)
	legend(w, r, l)
}

// kinds returns the workloads of g the layout runs.
func (l Layout) kinds(g []workload.Kind) []workload.Kind {
	var ks []workload.Kind
	for _, k := range g {
		if l.has(k) {
			ks = append(ks, k)
		}
	}
	return ks
}

// countedAny reports whether r holds steps for any of ks.
func (r *Results) countedAny(ks []workload.Kind) bool {
	for _, x := range r.steps {
		if slices.Contains(ks, x.Workload) {
			return true
		}
	}
	return false
}

// legend writes what the tables' words and columns mean, with the
// numbers the code uses.
func legend(w io.Writer, r *Results, l Layout) {
	if half, most, ok := spreads(r); ok {
		fmt.Fprintf(w, "cells: the median of %s rounds (far %s), each contender's round in turn with the others', the collector off; the middle half of\n", rounds(workload.MinRounds, workload.MaxRounds), rounds(workload.MinFarRounds, workload.MaxFarRounds))
		fmt.Fprintf(w, "       a cell's rounds lies within ±%.0f%% of its median in half the cells, ±%.0f%% in nine in ten (-json: every cell's quartiles).\n", 100*half, 100*most)
	}
	fmt.Fprintln(w, "over: over budget (stopped by its budget, predicted over it, or skipped after a smaller size was);  -: not measured for this row")
	fmt.Fprintln(w, "time slope: s of log(time) over log(n), the median of the slopes between every two sizes (Theil–Sen), named: falls s≤−0.05 (a fixed")
	fmt.Fprintln(w, "        cost shared by more timers), flat |s|<0.05, memory 0.05≤s<0.6 (cache and TLB misses as n outgrows the caches: up to 0.45")
	fmt.Fprintln(w, "        for an operation whose steps do not grow), n^s from 0.6 (the algorithm shows through). The steps say which.")
	if len(r.steps) > 0 {
		fmt.Fprintf(w, "steps: timers (or slots, or lists) read and compared, linked, unlinked or moved per operation, counted in a pass of their own after\n")
		fmt.Fprintf(w, "       the timed rounds, on queues of the same seed made to count (%d operations a cell, %d bursts for expire; the same in every run,\n", workload.CountOps, workload.CountBursts)
		fmt.Fprintf(w, "       at most %s steps a cell); the timed queues count nothing. class: of O(1), O(log n), O(√n), O(n), O(n log n), O(n²), the\n", Compact(workload.StepBudget))
		fmt.Fprintf(w, "       first whose least-squares fit a + b·term(n) is within ±%.0f%% of the steps (or within %.1f× the best fit's error), with\n", 100*workload.Tolerance, workload.PreferWithin)
		fmt.Fprintln(w, "       its error; far's fit adds c/n, the day's clock steps shared by the n timers. -json has every fit's formula.")
	}
	if l.has(workload.Far) {
		fmt.Fprintln(w, "far: per timer over its whole life (10 min to 1 day out, clock driven in 1 s steps until all fired); the 86,400 clock steps")
		fmt.Fprintln(w, "     cost the same whatever n, so at small n they dominate and the cost per timer falls as n grows.")
	}
	if l.has(workload.Memory) {
		fmt.Fprintln(w, "memory: HeapAlloc delta / n, the structure's fixed part included (libco's 60,000 slots are 960 KB).")
	}
}

// rounds returns "15–41", or "3" when the bounds are one.
func rounds(lo, hi int) string {
	if lo == hi {
		return fmt.Sprint(lo)
	}
	return fmt.Sprintf("%d–%d", lo, hi)
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

// growthWidth fits "memory -0.93", "n^1.42" and "O(log n) ±12% (1e6)".
const growthWidth = 19

func block(w io.Writer, r *Results, l Layout, ks []workload.Kind, v view) {
	rows := v.rows(l)
	nameW := len("structure")
	for _, c := range rows {
		nameW = max(nameW, len(c.Name))
	}
	groupW := cellWidth*len(l.Sizes) + 1 + growthWidth
	var b strings.Builder
	fmt.Fprintf(&b, "%-*s", nameW, "")
	for _, k := range ks {
		fmt.Fprintf(&b, " │ %-*s", groupW, fmt.Sprintf("%s, %s", k, v.unit(k)))
	}
	fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
	b.Reset()
	fmt.Fprintf(&b, "%-*s", nameW, "structure")
	for range ks {
		b.WriteString(" │ ")
		for _, n := range l.Sizes {
			fmt.Fprintf(&b, "%*s", cellWidth, SizeLabel(n))
		}
		fmt.Fprintf(&b, " %-*s", growthWidth, v.growthHeader())
	}
	fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
	fmt.Fprintln(w, rule(nameW, groupW, len(ks)))
	for _, c := range rows {
		b.Reset()
		fmt.Fprintf(&b, "%-*s", nameW, c.Name)
		for _, k := range ks {
			b.WriteString(" │ ")
			if !v.shows(c, k) {
				fmt.Fprintf(&b, "%*s %-*s", cellWidth*len(l.Sizes), "-", growthWidth, "")
				continue
			}
			for _, n := range l.Sizes {
				fmt.Fprintf(&b, "%*s", cellWidth, v.cell(r, c.Name, k, n))
			}
			fmt.Fprintf(&b, " %s", padRight(v.growth(r, c.Name, k), growthWidth))
		}
		fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
	}
}

func rule(nameW, groupW, groups int) string {
	s := strings.Repeat("─", nameW)
	for range groups {
		s += "─┼─" + strings.Repeat("─", groupW)
	}
	return s
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
func SizeLabel(n int) string { return workload.SizeLabel(n) }

// padRight pads s with spaces to n runes (fmt pads to n bytes).
func padRight(s string, n int) string {
	return s + strings.Repeat(" ", max(0, n-utf8.RuneCountInString(s)))
}
