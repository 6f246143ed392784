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

// Class returns what the slope looks like: ≲O(log n) below 0.6, ≈O(√n)
// below 0.8, ≈O(n) below 1.25, ≈O(n^1.5) below 1.75, ≈O(n²) from there;
// "?" for fewer than two points. O(1) and O(log n) share a class because
// the lab cannot tell them apart from one run to the next: from 1e2 to
// 1e6, O(log n) alone gives a slope of 0.12 (a heap's expire, whose
// queue holds a burst of 1000 beside the n, 0.07), and cache misses add
// up to 0.35 more at a million timers to O(1) and O(log n) operations
// alike (the engine's cancel reads 0.31, a binary heap's 0.38); the
// contenders' slopes fill 0 to 0.47 without a gap, and back-to-back runs
// move a slope by up to 0.05 to 0.1, so any line between 0 and 0.47
// moves some label from run to run. The slope itself, printed beside
// the class, tells a flat cost (near 0) from a growing one. The classes
// name no exponent of their own, so that slopes a little apart read the
// same; the class is what was observed, not a proof.
func (g Growth) Class() string {
	s := g.Slope
	switch {
	case g.Points < 2:
		return "?"
	case s < 0.6:
		return "≲O(log n)"
	case s < 0.8:
		return "≈O(√n)"
	case s < 1.25:
		return "≈O(n)"
	case s < 1.75:
		return "≈O(n^1.5)"
	}
	return "≈O(n²)"
}

// String returns the class and the slope, as "≲O(log n) 0.21".
func (g Growth) String() string {
	if g.Points < 2 {
		return "?"
	}
	return fmt.Sprintf("%s %.2f", g.Class(), g.Slope)
}
