package workload

import (
	"fmt"
	"math"
	"strings"
)

// Growth is how a cost grows with n: the slope of log cost over log n.
// It is fitted to the sizes measured by the median of the slopes between
// every two of them (Theil and Sen's estimator). One size spoiled by a burst of
// load moves a few of those slopes, not their median, where it would tilt
// a least-squares line.
type Growth struct {
	Slope  float64 // 0 for a flat cost, 1 for one that grows as n; O(log n) from 1e2 to 1e6 is about 0.12
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

// Name says what a slope of time over n shows. The steps tell the
// algorithm (see FitSteps). The names are:
//   - "falls" below −0.05: a fixed cost shared by more timers (far's
//     86,400 clock steps, memory's fixed part);
//   - "flat" within ±0.05;
//   - "memory" below 0.6: cache and TLB misses as the timers outgrow the
//     caches. From 1e2 to 1e6 they add up to 0.45 to a step whose count
//     does not grow, and a true O(log n) alone gives 0.12;
//   - "n^s" from 0.6, where the algorithm's own growth shows through;
//   - "?" for fewer than two points.
//
// Two close slopes may get different names from run to run; the steps'
// class may not (see FitSteps).
func (g Growth) Name() string {
	s := g.Slope
	switch {
	case g.Points < 2:
		return "?"
	case s <= -0.05:
		return "falls"
	case s < 0.05:
		return "flat"
	case s < 0.6:
		return "memory"
	}
	return fmt.Sprintf("n^%.2f", s)
}

// String returns the name and the slope, as "memory 0.32" or "n^0.91"
// (whose name holds it).
func (g Growth) String() string {
	switch name := g.Name(); {
	case g.Points < 2:
		return "?"
	case strings.HasPrefix(name, "n^"):
		return name
	default:
		return fmt.Sprintf("%s %.2f", name, g.Slope)
	}
}
