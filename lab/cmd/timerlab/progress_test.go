package main

import (
	"bytes"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/timewheel/timewheel/lab"
	"github.com/timewheel/timewheel/lab/workload"
)

// fakeClock is a clock the test moves.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time { return c.t }

// recorded is the wall time of the cells of one default run (the
// 2026-11-25 run of the README, -json), per pass, workload and size, in
// seconds for all the contenders of a group together: a run the weights
// were not taken from.
var recorded = map[bool]map[workload.Kind][]float64{
	false: {
		workload.Memory:   {0.05, 0.1, 0.3, 4.4, 10.2},
		workload.Schedule: {1.7, 2.1, 2.4, 8.1, 4.9},
		workload.Cancel:   {8.8, 5.2, 6.1, 10.9, 5.0},
		workload.Expire:   {0.06, 0.2, 1.2, 8.0, 24.1},
		workload.Churn:    {0.5, 0.5, 1.2, 10.1, 1.6},
		workload.Refresh:  {1.5, 0.5, 1.0, 8.2, 1.4},
		workload.Far:      {2.1, 1.8, 5.6, 6.3, 20.3},
	},
	true: {
		workload.Schedule: {0.02, 0.03, 0.1, 0.4, 1.3},
		workload.Cancel:   {0.02, 0.03, 0.1, 0.4, 1.3},
		workload.Expire:   {0.02, 0.03, 0.1, 0.4, 1.3},
		workload.Churn:    {0.02, 0.03, 0.1, 0.4, 1.3},
		workload.Refresh:  {0.02, 0.03, 0.1, 0.4, 1.3},
		workload.Far:      {0.5, 0.7, 1.1, 1.2, 11},
	},
}

// replay feeds p the cells of a default run in the order the lab runs
// them, each group's cells taking their share of the recorded time, and
// returns the estimate of the time left that p gave when it first said a
// quarter was done, and the time really left then.
func replay(t *testing.T, cfg workload.Config, p *progress, clock *fakeClock) (estimated, left time.Duration) {
	t.Helper()
	type cells struct {
		steps bool
		k     workload.Kind
		n     int
		count int
	}
	var groups []cells
	var total float64
	at := map[int]int{1e2: 0, 1e3: 1, 1e4: 2, 1e5: 3, 1e6: 4}
	for _, steps := range []bool{false, true} {
		for _, n := range cfg.Sizes {
			for _, k := range cfg.Kinds {
				g := cells{steps: steps, k: k, n: n}
				for _, c := range cfg.Contenders {
					if !steps && c.Supports(k) || steps && c.Counted(k) {
						g.count++
					}
				}
				if g.count > 0 {
					groups = append(groups, g)
					total += recorded[steps][k][at[n]]
				}
			}
		}
	}
	start, elapsed := clock.t, 0.0
	for _, g := range groups {
		per := recorded[g.steps][g.k][at[g.n]] / float64(g.count)
		for range g.count {
			if estimated == 0 && p.fraction() >= 0.25 {
				var ok bool
				if estimated, ok = p.estimate(clock.t); !ok {
					t.Fatal("no estimate at 25 %")
				}
				left = time.Duration((total - elapsed) * float64(time.Second))
			}
			elapsed += per
			clock.t = start.Add(time.Duration(elapsed * float64(time.Second)))
			p.cell(g.steps, workload.Result{Workload: g.k, N: g.n})
		}
	}
	return estimated, left
}

// TestETAWithinTwiceAtAQuarter replays a default run recorded on its own
// (not the one the weights come from) and checks the estimate of the time
// left when the progress first says 25 %: within a factor of two of the
// truth.
func TestETAWithinTwiceAtAQuarter(t *testing.T) {
	cfg := workload.Config{Contenders: lab.Contenders(), Kinds: workload.Kinds(), Sizes: defaultSizes}
	clock := &fakeClock{t: time.Unix(0, 0)}
	p := newProgress(new(bytes.Buffer), cfg, 1)
	p.now, p.start = clock.now, clock.t
	estimated, left := replay(t, cfg, p, clock)
	if r := float64(estimated) / float64(left); r < 0.5 || r > 2 || math.IsNaN(r) {
		t.Errorf("at 25 %%, %v estimated left, %v really left (%.2f×)", estimated, left, r)
	}
	t.Logf("at 25 %%: %v estimated, %v left", estimated, left)
}

// TestProgressOnATerminal: on a terminal one line is redrawn in place, at
// most ten times a second, and cleared at the end.
func TestProgressOnATerminal(t *testing.T) {
	cfg := workload.Config{Contenders: lab.Contenders()[:2], Kinds: []workload.Kind{workload.Churn}, Sizes: []int{100, 1000}}
	var b bytes.Buffer
	clock := &fakeClock{t: time.Unix(0, 0)}
	p := newProgress(&b, cfg, 1)
	p.tty, p.now, p.start = true, clock.now, clock.t
	for _, c := range []struct {
		n  int
		at time.Duration
	}{{100, 0}, {100, 50 * time.Millisecond}, {1000, 150 * time.Millisecond}, {1000, 160 * time.Millisecond}} {
		clock.t = time.Unix(0, 0).Add(c.at)
		p.cell(false, workload.Result{Workload: workload.Churn, N: c.n})
	}
	p.finish()
	out := b.String()
	// drawn at 0 and 150 ms (not 50 or 160: within 100 ms of a drawing),
	// then cleared: a carriage return before each, and one to end
	if strings.Count(out, "\r") != 4 || strings.Contains(out, "\n") || !strings.HasSuffix(out, "\r") {
		t.Errorf("terminal progress %q: want two lines drawn, each over the last, then cleared", out)
	}
	if !strings.Contains(out, "timed 1e3 churn") || !strings.Contains(out, "%") {
		t.Errorf("terminal progress %q lacks the cell or the share done", out)
	}
}
