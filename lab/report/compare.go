package report

import (
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

// Band is how far a cell's median may move between back-to-back runs of
// the lab on a shared machine, relative to the other cells of its
// workload and size, and still be the same cell: ±7 %. Runs of the
// default lab on a 2-core machine other engineers were benchmarking on
// moved the ratio of two contenders' medians by 9 % at the median, more
// than the middle halves of the rounds within one run could tell; the
// spread of a run's rounds says how steady that run was, not where the
// next run lands.
const Band = 0.07

// Compare returns how a compares with b, and the ratio of their medians,
// a over b. A cell's range is its median ± Band; two cells whose ranges
// overlap (medians less than 15 % apart) are the Same, whatever their
// order. Both must be OK.
func Compare(a, b workload.Result) (Order, float64) {
	ratio := a.Value / b.Value
	switch {
	case a.Value*(1+Band) < b.Value*(1-Band):
		return Cheaper, ratio
	case a.Value*(1-Band) > b.Value*(1+Band):
		return Dearer, ratio
	}
	return Same, ratio
}

// ok returns the cell of contender, k and n if it is OK.
func (r *Results) ok(contender string, k workload.Kind, n int) (workload.Result, bool) {
	x, found := r.Get(contender, k, n)
	return x, found && x.Status == workload.OK && x.Value > 0
}
