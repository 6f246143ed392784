package report

import (
	"encoding/json"
	"io"
	"time"

	"github.com/timewheel/timewheel/lab/workload"
)

// Run is everything one run of the lab found, as JSON.
type Run struct {
	Machine Machine           `json:"machine"`
	Load    Load              `json:"load"`
	Sizes   []int             `json:"sizes"`
	Budget  Budget            `json:"budget"`
	Wall    time.Duration     `json:"wall_ns"`
	Results []workload.Result `json:"results"`
	Growth  []Growth          `json:"growth"`
	// Steps are the counted cells (see workload.CountSteps), Classes the
	// classes fitted to them, Claims the claims held to those classes.
	Steps   []workload.Result `json:"steps,omitempty"`
	Classes []Class           `json:"classes,omitempty"`
	Claims  []Claim           `json:"claims,omitempty"`
	Charts  []string          `json:"charts,omitempty"`
	// PeakRSS is the most memory the process held, in bytes (0 where the
	// system does not say).
	PeakRSS int64 `json:"peak_rss_bytes,omitempty"`
}

// Budget is workload.Budget with its durations in nanoseconds.
type Budget struct {
	Round time.Duration `json:"round_ns"`
	Cell  time.Duration `json:"cell_ns"`
	Fill  time.Duration `json:"fill_ns"`
	Far   time.Duration `json:"far_ns"`
}

// Growth is the slope of one contender's time (or bytes) over n.
type Growth struct {
	Contender string        `json:"contender"`
	Workload  workload.Kind `json:"workload"`
	Slope     float64       `json:"slope"`
	Name      string        `json:"name"`
	Points    int           `json:"points"`
}

// Class is the class fitted to one contender's steps over n.
type Class struct {
	Contender string        `json:"contender"`
	Workload  workload.Kind `json:"workload"`
	Class     string        `json:"class"`
	Formula   string        `json:"formula"`
	Err       float64       `json:"err"`
	Points    int           `json:"points"`
}

// Claim is one claim held to the class of the steps.
type Claim struct {
	Structure string        `json:"structure"`
	Workload  workload.Kind `json:"workload"`
	Cost      string        `json:"cost"`
	Source    string        `json:"source"`
	Claimed   string        `json:"claimed_class"`
	Counted   string        `json:"counted_class"`
	Agrees    bool          `json:"agrees"`
	Reason    string        `json:"reason,omitempty"`
}

// NewRun assembles a run's report.
func NewRun(m Machine, load Load, l Layout, b workload.Budget, wall time.Duration, r *Results, charts []string) Run {
	run := Run{
		Machine: m, Load: load, Sizes: l.Sizes, Wall: wall, Results: r.all, Steps: r.steps, Charts: charts,
		Budget: Budget{Round: b.Round, Cell: b.Cell, Fill: b.Fill, Far: b.Far}, PeakRSS: PeakRSS(),
	}
	for _, c := range l.Contenders {
		for _, k := range l.Kinds {
			if c.Supports(k) {
				g := r.Growth(c.Name, k)
				run.Growth = append(run.Growth, Growth{c.Name, k, g.Slope, g.Name(), g.Points})
			}
			if c.Counted(k) && len(r.steps) > 0 {
				f := r.StepFit(c.Name, k)
				run.Classes = append(run.Classes, Class{c.Name, k, f.Class.String(), f.Formula(), f.Err, f.Points})
			}
		}
	}
	for _, x := range Checks(r, l) {
		c := Claim{Structure: x.Structure, Workload: x.Workload, Cost: x.Claim.Cost, Source: x.Claim.Source,
			Claimed: x.Claim.Class.String(), Counted: x.Fit.Class.String(), Agrees: x.Match == Agrees}
		if x.Match == Disagrees {
			c.Reason = x.Reason()
		}
		run.Claims = append(run.Claims, c)
	}
	return run
}

// WriteJSON writes the run as indented JSON.
func (run Run) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(run)
}
