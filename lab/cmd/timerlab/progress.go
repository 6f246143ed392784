package main

import (
	"fmt"
	"io"
	"math"
	"os"
	"strings"
	"time"

	"golang.org/x/term"

	"github.com/timewheel/timewheel/lab/report"
	"github.com/timewheel/timewheel/lab/workload"
)

// progress tells the run's progress on stderr. On a terminal it is one
// line redrawn in place. Elsewhere (a file, a pipe, CI) it is a line for
// each workload and size when its last cell is in, and nothing in
// between. Both say how much of the run is done. Both estimate the time
// left from the time so far and the work left. Each cell is weighed by
// what cells of its workload and size cost in a default run (see
// weight): cells are not alike, and the largest sizes and the expire
// workload cost most.
type progress struct {
	w      io.Writer
	tty    bool
	prefix string
	now    func() time.Time
	start  time.Time
	runs   int
	total  float64
	done   float64
	want   map[group]int // cells each group has
	got    map[group]int
	drawn  time.Time // when the terminal line was last drawn
	width  int       // of the line drawn last, to clear it
	weigh  func(steps bool, k workload.Kind, n int) float64
}

// group is the cells of one pass, size and workload.
type group struct {
	steps bool
	n     int
	k     workload.Kind
}

// newProgress returns the progress of runs runs of cfg (timed, then
// counted) on w, redrawn in place if w is a terminal.
func newProgress(w io.Writer, cfg workload.Config, runs int) *progress {
	p := &progress{w: w, tty: isTerminal(w), now: time.Now, want: map[group]int{}, got: map[group]int{}, weigh: weight}
	p.start = p.now()
	for _, c := range cfg.Contenders {
		for _, k := range cfg.Kinds {
			for _, n := range cfg.Sizes {
				if c.Supports(k) {
					p.want[group{false, n, k}]++
				}
				if c.Counted(k) {
					p.want[group{true, n, k}]++
				}
			}
		}
	}
	p.runs = runs
	p.weighAll(weight)
	return p
}

// weighAll sets the weight of every cell and totals it.
func (p *progress) weighAll(weigh func(steps bool, k workload.Kind, n int) float64) {
	p.weigh, p.total = weigh, 0
	for g, cells := range p.want {
		p.total += float64(cells) * weigh(g.steps, g.k, g.n)
	}
	p.total *= float64(p.runs)
}

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// configure returns cfg reporting its timed cells to p and the config
// of its counting pass, reporting to p too.
func (p *progress) configure(cfg workload.Config) (timed, counted workload.Config) {
	timed, counted = cfg, cfg
	timed.Progress = func(r workload.Result) { p.cell(false, r) }
	counted.Progress = func(r workload.Result) { p.cell(true, r) }
	return timed, counted
}

// next starts the next of several runs: the groups begin again.
func (p *progress) next(prefix string) {
	p.prefix = prefix
	clear(p.got)
}

// cell records one cell.
func (p *progress) cell(steps bool, r workload.Result) {
	g := group{steps, r.N, r.Workload}
	p.got[g]++
	p.done += p.weigh(steps, r.Workload, r.N)
	now := p.now()
	switch {
	case p.tty && now.Sub(p.drawn) >= 100*time.Millisecond:
		p.drawn = now
		line := fmt.Sprintf("%s%s %s %s %s  %s", p.prefix, p.bar(), passName(steps), report.SizeLabel(r.N), r.Workload, p.eta(now))
		p.draw(line)
	case !p.tty && p.got[g] == p.want[g]:
		fmt.Fprintf(p.w, "timerlab: %s%s %s %s: %d cells; %s\n", p.prefix, passName(steps), report.SizeLabel(r.N), r.Workload, p.want[g], p.eta(now))
	}
}

// passName names the pass a cell is of.
func passName(steps bool) string {
	if steps {
		return "steps"
	}
	return "timed"
}

// draw writes line over the one drawn before.
func (p *progress) draw(line string) {
	pad := max(0, p.width-len([]rune(line)))
	fmt.Fprintf(p.w, "\r%s%s", line, strings.Repeat(" ", pad))
	p.width = len([]rune(line))
}

// finish clears the terminal line.
func (p *progress) finish() {
	if p.tty && p.width > 0 {
		p.draw("")
		fmt.Fprint(p.w, "\r")
		p.width = 0
	}
}

// bar returns the share done as a bar and a percentage.
func (p *progress) bar() string {
	f := p.fraction()
	full := int(f * 20)
	return fmt.Sprintf("[%s%s] %3.0f%%", strings.Repeat("#", full), strings.Repeat(" ", 20-full), 100*f)
}

func (p *progress) fraction() float64 {
	if p.total <= 0 {
		return 1
	}
	return min(1, p.done/p.total)
}

// eta returns how much is done and the time left (see estimate).
func (p *progress) eta(now time.Time) string {
	f, elapsed := p.fraction(), now.Sub(p.start)
	left, ok := p.estimate(now)
	if !ok {
		return fmt.Sprintf("%.0f%% done after %s", 100*f, round(elapsed))
	}
	return fmt.Sprintf("%.0f%% done after %s, about %s left", 100*f, round(elapsed), round(left))
}

// estimate returns the time left, estimated as the time so far times the
// work left over the work done; false before 2 % of the work is done.
func (p *progress) estimate(now time.Time) (time.Duration, bool) {
	f := p.fraction()
	if f < 0.02 {
		return 0, false
	}
	return time.Duration(float64(now.Sub(p.start)) * (1 - f) / f), true
}

// round rounds d to the second.
func round(d time.Duration) time.Duration { return d.Round(time.Second) }

// weight returns what one cell of workload k at size n costs, in seconds
// of a default run on two cores with one other core busy. That is the
// timed rounds of all contenders of a workload and size, plus their share
// of the station's filling, divided by the number of contenders. The
// counting pass's cells are weighed the same way. Sizes between two measured ones are interpolated on log n,
// sizes beyond them extrapolated from the last two.
func weight(steps bool, k workload.Kind, n int) float64 {
	table := timedWeights
	if steps {
		table = countedWeights
	}
	ws, ok := table[k]
	if !ok {
		return 0
	}
	x := math.Log10(float64(max(n, 1)))
	i := min(max(int(x)-2, 0), len(ws)-2) // ws[0] is 1e2
	lo, hi := math.Log(ws[i]), math.Log(ws[i+1])
	return math.Exp(lo + (hi-lo)*(x-float64(i+2)))
}

// timedWeights and countedWeights are seconds per cell at 1e2, 1e3, 1e4,
// 1e5 and 1e6 timers, from a default run (cells' walls, JSON), the
// station's filling counted with memory.
var (
	timedWeights = map[workload.Kind][]float64{
		workload.Memory:   {0.006, 0.014, 0.037, 0.62, 1.45},
		workload.Schedule: {0.14, 0.17, 0.19, 0.70, 0.37},
		workload.Cancel:   {0.73, 0.42, 0.49, 0.88, 0.37},
		workload.Expire:   {0.005, 0.016, 0.10, 0.77, 2.3},
		workload.Churn:    {0.034, 0.035, 0.089, 0.85, 0.12},
		workload.Refresh:  {0.12, 0.033, 0.079, 0.65, 0.10},
		workload.Far:      {0.18, 0.16, 0.49, 0.54, 1.9},
	}
	countedWeights = map[workload.Kind][]float64{
		workload.Schedule: {0.001, 0.002, 0.01, 0.1, 1},
		workload.Cancel:   {0.001, 0.002, 0.01, 0.1, 1},
		workload.Expire:   {0.001, 0.002, 0.01, 0.1, 1},
		workload.Churn:    {0.001, 0.002, 0.01, 0.1, 1},
		workload.Refresh:  {0.001, 0.002, 0.01, 0.1, 1},
		workload.Far:      {0.001, 0.002, 0.01, 0.1, 1},
	}
)
