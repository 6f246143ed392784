package report

import (
	"fmt"
	"slices"

	"github.com/timewheel/timewheel/lab/workload"
)

// Order is how one cell compares with another.
type Order int

// The orders of two cells. Lower is better for every workload the lab
// measures: time, or bytes.
const (
	Cheaper Order = -1 // below the other, their ranges apart
	Same    Order = 0  // their ranges overlap: equal, as far as runs can tell
	Dearer  Order = 1  // above the other, their ranges apart
)

// Band is how far apart two cells may be and still be the same cell:
// each side's value ± 2.5 %, so a ratio from 0.951 to 1.051 reads equal.
// It is the lab's resolution, measured. Rounds were paired lap by lap
// (see Compare), and the collector was held off during the laps (see
// workload.Run). So measured, the scheduler's ratio to package time
// moved by 2–5 % between back-to-back default runs on a 2-core machine
// in most cells. Four runs gave the same verdict in all 25 cells at bands of ±2
// to ±3 %. At ±5 % and ±7 %, cells whose ratio sits near 0.87 changed
// their verdict. A band is a line, and a wider one only moves the line
// into the ratios that are common.
const Band = 0.025

// Compare returns how a compares with b, and the ratio of a to b.
//
// Both cells may have run the same laps: their Costs are then as long,
// as the lab's cells of one workload and size are. The ratio is then the
// median of the laps' ratios, round i of a over round i of b. Round i of
// a and round i of b ran within milliseconds of each other. So a slow
// moment of the machine falls on both sides of each ratio and cancels.
// So does a change in what the other rounds left in the caches.
// Otherwise (memory, a cell cut short by its budget) it is the ratio of
// the medians. Each side's range is its value ± Band; two cells whose
// ranges overlap (ratio within 1−Band over 1+Band and its inverse) are
// the Same, whatever their order. Both must be OK.
func Compare(a, b workload.Result) (Order, float64) {
	ratio := Ratio(a, b)
	lo, hi := SameRatios()
	switch {
	case ratio < lo:
		return Cheaper, ratio
	case ratio > hi:
		return Dearer, ratio
	}
	return Same, ratio
}

// SameRatios returns the ratios between which Compare finds two cells
// the Same: (1−Band)/(1+Band) and its inverse, 0.951 and 1.051.
func SameRatios() (lo, hi float64) { return (1 - Band) / (1 + Band), (1 + Band) / (1 - Band) }

// bandWords says what Same means, in the numbers Compare uses.
func bandWords() string {
	lo, hi := SameRatios()
	return fmt.Sprintf("the ratio %.3f–%.3f, each side ±%.1f%%", lo, hi, 100*Band)
}

// Ratio returns a over b as Compare weighs them: the median of the
// paired rounds' ratios where both ran the same laps, the ratio of the
// medians otherwise.
func Ratio(a, b workload.Result) float64 {
	if len(a.Costs) < 2 || len(a.Costs) != len(b.Costs) {
		return a.Value / b.Value
	}
	rs := make([]float64, len(a.Costs))
	for i := range rs {
		rs[i] = a.Costs[i] / b.Costs[i]
	}
	slices.Sort(rs)
	m := len(rs) / 2
	if len(rs)%2 == 1 {
		return rs[m]
	}
	return (rs[m-1] + rs[m]) / 2
}

// ok returns the cell of contender, k and n if it is OK.
func (r *Results) ok(contender string, k workload.Kind, n int) (workload.Result, bool) {
	x, found := r.Get(contender, k, n)
	return x, found && x.Status == workload.OK && x.Value > 0
}
