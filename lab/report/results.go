package report

import "github.com/timewheel/timewheel/lab/workload"

// Results indexes a run's results by contender, workload and size: the
// timed cells (workload.Run) and the counted ones (workload.CountSteps).
type Results struct {
	all     []workload.Result
	cells   map[key]workload.Result
	steps   []workload.Result
	counted map[key]workload.Result
}

type key struct {
	contender string
	kind      workload.Kind
	n         int
}

// Index returns the timed results indexed, with no steps.
func Index(rs []workload.Result) *Results {
	r := &Results{all: rs, cells: map[key]workload.Result{}, counted: map[key]workload.Result{}}
	for _, x := range rs {
		r.cells[key{x.Contender, x.Workload, x.N}] = x
	}
	return r
}

// WithSteps adds the counted results of the same run to r and returns r.
func (r *Results) WithSteps(steps []workload.Result) *Results {
	r.steps = steps
	for _, x := range steps {
		r.counted[key{x.Contender, x.Workload, x.N}] = x
	}
	return r
}

// Get returns the timed cell of a contender, workload and size, and false
// if there is none.
func (r *Results) Get(contender string, k workload.Kind, n int) (workload.Result, bool) {
	x, ok := r.cells[key{contender, k, n}]
	return x, ok
}

// Steps returns the counted cell of a contender, workload and size, and
// false if there is none.
func (r *Results) Steps(contender string, k workload.Kind, n int) (workload.Result, bool) {
	x, ok := r.counted[key{contender, k, n}]
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

// Growth returns the slope of a contender's time (or bytes) over the sizes.
func (r *Results) Growth(contender string, k workload.Kind) workload.Growth {
	return workload.FitGrowth(pick(r.all, contender, k))
}

// StepFit returns the class of a contender's steps over the sizes; far's
// fit has a term shared by the n timers (the day's clock steps).
func (r *Results) StepFit(contender string, k workload.Kind) workload.Fit {
	return workload.FitSteps(pick(r.steps, contender, k), k == workload.Far)
}

// pick returns the results of one contender's workload.
func pick(rs []workload.Result, contender string, k workload.Kind) []workload.Result {
	var out []workload.Result
	for _, x := range rs {
		if x.Contender == contender && x.Workload == k {
			out = append(out, x)
		}
	}
	return out
}
