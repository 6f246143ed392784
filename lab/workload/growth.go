package workload

import (
	"fmt"
	"math"
)

// Growth is how a cost grows with n: the slope of log cost over log n,
// fitted to the sizes measured by the median of the slopes between every
// two of them (Theil and Sen's estimator). One size spoiled by a burst of
// load moves a few of those slopes, not their median, where it would tilt
// a least-squares line.
type Growth struct {
	Slope  float64 // 0 for O(1), 1 for O(n); O(log n) from 1e2 to 1e6 is about 0.12
	Points int     // sizes it was fitted to; fewer than 2 tells nothing
}

// FitGrowth fits the growth of one contender's workload from its results;
// only results with status OK count.
func FitGrowth(rs []Result) Growth {
	type point struct{ x, y float64 }
	var ps []point
	for _, r := range rs {
		if r.Status != OK || r.Value <= 0 || r.N <= 0 {
			continue
		}
		ps = append(ps, point{math.Log(float64(r.N)), math.Log(r.Value)})
	}
	var slopes []float64
	for i, p := range ps {
		for _, q := range ps[i+1:] {
			if q.x != p.x {
				slopes = append(slopes, (q.y-p.y)/(q.x-p.x))
			}
		}
	}
	if len(slopes) == 0 {
		return Growth{Points: len(ps)}
	}
	med, _, _ := quartiles(slopes)
	return Growth{Slope: med, Points: len(ps)}
}

// Class returns what the slope looks like: ≈O(1) below 0.08, ≈O(log n)
// below 0.6, ≈O(√n) below 0.8, ≈O(n) below 1.25, ≈O(n^1.5) below 1.75,
// ≈O(n²) from there; "?" for fewer than two points. From 1e2 to 1e6,
// O(log n) alone gives 0.12, and cache misses add up to about 0.35 more
// at a million timers (a skip list's cancel, a miss per level, reads
// 0.45), so ≈O(log n) runs to 0.6; the classes name no exponent of their
// own, so that slopes a little apart read the same. Cache misses alone
// make an O(1) operation look like O(log n) between 1e4 and 1e6, so the
// class is what was observed, not a proof.
func (g Growth) Class() string {
	s := g.Slope
	switch {
	case g.Points < 2:
		return "?"
	case s < 0.08:
		return "≈O(1)"
	case s < 0.6:
		return "≈O(log n)"
	case s < 0.8:
		return "≈O(√n)"
	case s < 1.25:
		return "≈O(n)"
	case s < 1.75:
		return "≈O(n^1.5)"
	}
	return "≈O(n²)"
}

// String returns the class and the slope, as "≈O(log n) 0.21".
func (g Growth) String() string {
	if g.Points < 2 {
		return "?"
	}
	return fmt.Sprintf("%s %.2f", g.Class(), g.Slope)
}
