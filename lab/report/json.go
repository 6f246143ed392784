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
	Charts  []string          `json:"charts,omitempty"`
}

// Budget is workload.Budget with its durations in nanoseconds.
type Budget struct {
	Round time.Duration `json:"round_ns"`
	Cell  time.Duration `json:"cell_ns"`
	Fill  time.Duration `json:"fill_ns"`
	Far   time.Duration `json:"far_ns"`
}

// Growth is the growth of one contender's workload.
type Growth struct {
	Contender string        `json:"contender"`
	Workload  workload.Kind `json:"workload"`
	Slope     float64       `json:"slope"`
	Class     string        `json:"class"`
	Points    int           `json:"points"`
}

// NewRun assembles a run's report.
func NewRun(m Machine, load Load, l Layout, b workload.Budget, wall time.Duration, r *Results, charts []string) Run {
	run := Run{
		Machine: m, Load: load, Sizes: l.Sizes, Wall: wall, Results: r.all, Charts: charts,
		Budget: Budget{Round: b.Round, Cell: b.Cell, Fill: b.Fill, Far: b.Far},
	}
	for _, c := range l.Contenders {
		for _, k := range l.Kinds {
			if !c.Supports(k) {
				continue
			}
			g := r.Growth(c.Name, k)
			run.Growth = append(run.Growth, Growth{c.Name, k, g.Slope, g.Class(), g.Points})
		}
	}
	return run
}

// WriteJSON writes the run as indented JSON.
func (run Run) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(run)
}
