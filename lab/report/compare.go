package report

import (
	"github.com/timewheel/timewheel/lab/workload"
)

// Order is how one cell compares with another.
type Order int

// The orders of two cells. Lower is better for every workload the lab
// measures: time, or bytes.
const (
	Cheaper Order = -1 // below the other, the middle halves of their rounds apart
	Same    Order = 0  // the middle halves overlap: equal, as far as the run can tell
	Dearer  Order = 1  // above the other, the middle halves apart
)

// Compare returns how a compares with b, and the ratio of their medians,
// a over b. Two cells whose middle halves (Lo to Hi) overlap are the Same,
// whatever the ratio of their medians. Both must be OK.
func Compare(a, b workload.Result) (Order, float64) {
	ratio := a.Value / b.Value
	switch {
	case a.Hi < b.Lo:
		return Cheaper, ratio
	case a.Lo > b.Hi:
		return Dearer, ratio
	}
	return Same, ratio
}

// ok returns the cell of contender, k and n if it is OK.
func (r *Results) ok(contender string, k workload.Kind, n int) (workload.Result, bool) {
	x, found := r.Get(contender, k, n)
	return x, found && x.Status == workload.OK && x.Value > 0
}
