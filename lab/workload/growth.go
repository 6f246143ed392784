package workload

import (
	"fmt"
	"math"
)

// Growth is how a cost grows with n: the slope of log cost over log n,
// fitted by least squares to the sizes measured.
type Growth struct {
	Slope  float64 // 0 for O(1), 1 for O(n); O(log n) from 1e2 to 1e6 is about 0.12
	Points int     // sizes it was fitted to; fewer than 2 tells nothing
}

// FitGrowth fits the growth of one contender's workload from its results;
// only results with status OK count.
func FitGrowth(rs []Result) Growth {
	var sx, sy, sxx, sxy float64
	k := 0
	for _, r := range rs {
		if r.Status != OK || r.Value <= 0 || r.N <= 0 {
			continue
		}
		x, y := math.Log(float64(r.N)), math.Log(r.Value)
		sx, sy, sxx, sxy = sx+x, sy+y, sxx+x*x, sxy+x*y
		k++
	}
	if k < 2 {
		return Growth{Points: k}
	}
	fk := float64(k)
	d := fk*sxx - sx*sx
	if d == 0 {
		return Growth{Points: k}
	}
	return Growth{Slope: (fk*sxy - sx*sy) / d, Points: k}
}

// Class returns what the slope looks like: ≈O(1), ≈O(log n), ≈O(n), or
// ≈O(n^s) in between and beyond; "?" for fewer than two points. Cache
// misses alone make an O(1) operation look like O(log n) between 1e4 and
// 1e6, so the class is what was observed, not a proof.
func (g Growth) Class() string {
	s := g.Slope
	switch {
	case g.Points < 2:
		return "?"
	case s < 0.08:
		return "≈O(1)"
	case s < 0.45:
		return "≈O(log n)"
	case s >= 0.8 && s < 1.25:
		return "≈O(n)"
	}
	return fmt.Sprintf("≈O(n^%.1f)", s)
}

// String returns the class and the slope, as "≈O(log n) 0.21".
func (g Growth) String() string {
	if g.Points < 2 {
		return "?"
	}
	return fmt.Sprintf("%s %.2f", g.Class(), g.Slope)
}
