package workload

import (
	"runtime"
	"sync"
	"time"

	"github.com/timewheel/timewheel/queue"
)

// Steps counts the elementary steps of a timer queue: every timer (or
// slot, or list of timers) it reads and compares, links, unlinks or
// moves. Steps are exact and the same on any machine and under any load,
// so a growth class fitted to them is the structure's, not the memory's
// (see FitSteps). The lab counts them in a pass of its own, after the
// timed rounds, on queues made to count: in the timed rounds a queue's
// *Steps is nil and counts nothing.
//
// A Steps is not safe for concurrent use.
type Steps struct{ n int64 }

// Add counts k steps; on a nil Steps it does nothing. The complexity is
// O(1).
func (s *Steps) Add(k int) {
	if s != nil {
		s.n += int64(k)
	}
}

// Total returns the number of steps counted.
func (s *Steps) Total() int64 { return s.n }

// stepWatch is the Stopwatch of the counting pass: it adds up the steps
// counted between StartTimer and StopTimer, so that it counts exactly
// what the timed rounds time and not the untimed repairs around it.
type stepWatch struct {
	s            *Steps
	start, total int64
}

func (w *stepWatch) StartTimer() { w.start = w.s.n }
func (w *stepWatch) StopTimer()  { w.total += w.s.n - w.start }

// stop says when a budgeted loop gives up: a deadline on the lab's
// clock for the timed rounds, a number of steps for the counting pass.
type stop interface{ passed() bool }

// stepLimit is passed once s has counted more than max steps.
type stepLimit struct {
	s   *Steps
	max int64
}

func (l stepLimit) passed() bool { return l.s.n > l.max }

// StepBudget bounds the counting pass. A station whose filling counts
// more steps than this is over budget, and so is a cell whose operations
// do. So is one predicted to (a power law through the two sizes before).
// The budget is in steps, not time, so that which cells are counted is
// the same in every run, whatever the machine does. A step is a few
// nanoseconds in the caches and up to a cache miss beyond them. So a
// cell within budget takes at most a second or two.
const StepBudget = 500_000_000

// The counting pass does CountOps operations per cell (CountBursts
// bursts of 1,000 timers for expire). Before that it fills a station of
// its own with the same seed as the timed rounds. That many operations
// keep the average over random picks within well under a percent.
const (
	CountOps    = 8192
	CountBursts = 4
)

// StepUnit returns the unit of the workload's steps: steps per
// operation, per timer fired (expire), per timer over its whole life
// (far). Memory has none.
func (k Kind) StepUnit() string {
	switch k {
	case Expire:
		return "steps/fired"
	case Far:
		return "steps/timer"
	}
	return "steps/op"
}

// Counter makes the queues of one structure that count their steps, with
// handles of their own type: CountedQueue makes one.
type Counter interface {
	// open fills a new station with n timers on a queue that counts its
	// steps into steps, and reports false if fill passed first.
	open(n int, seed uint64, steps *Steps, fill stop) (Station, bool)
	// far runs the far workload on a new queue that counts its steps
	// into steps, and reports false if until passed first.
	far(n int, seed uint64, steps *Steps, until stop, sw Stopwatch) bool
}

// CountedQueue returns the Counter of a structure: newQueue returns an
// empty queue of it that counts its steps into the Steps it is given. Its
// handles need not be those of the structure's timed queue: a queue that
// counts from outside (the engine's) may wrap them.
func CountedQueue[H comparable](newQueue func(*Steps) queue.Queue[H]) Counter {
	return counted[H]{newQueue}
}

// counted is a Counter with handles of type H.
type counted[H comparable] struct {
	newQueue func(*Steps) queue.Queue[H]
}

func (c counted[H]) open(n int, seed uint64, steps *Steps, fill stop) (Station, bool) {
	s := newStation[H](n, seed)
	s.q = c.newQueue(steps)
	s.t = s.q
	if !s.fill(n, fill) {
		return nil, false
	}
	return s, true
}

func (c counted[H]) far(n int, seed uint64, steps *Steps, until stop, sw Stopwatch) bool {
	return farOn(defaultFar, func() queue.Queue[H] { return c.newQueue(steps) }, n, seed, until, sw)
}

// Counts reports whether the contender counts its steps: the lab's
// structures and the engine do, package time and the scheduler do not.
func (c Contender) Counts() bool { return c.counter != nil }

// Counted reports whether the counting pass counts workload k for c.
func (c Contender) Counted(k Kind) bool { return c.Counts() && c.Supports(k) && k != Memory }

// CountCells returns the number of results CountSteps will return for cfg.
func CountCells(cfg Config) int { return cells(cfg, Contender.Counted) }

// CountSteps counts the steps of every cell of cfg that counts them (see
// Counted). At each size, for each contender in turn, it fills a station
// of its own with n timers, on a queue made to count. It runs each
// workload for a fixed number of operations and reports the steps per
// operation (per timer fired, per timer). Then it runs the far workload.
// Everything is the same from run to run: the seeds, the operations, and
// which cells are over StepBudget.
//
// Nothing is timed, so the contenders of a size are counted side by
// side, on as many goroutines as GOMAXPROCS. Each runs on a queue of its
// own: steps do not depend on what else runs. The results come in the
// contenders' order. The results' Wall says how long each
// took, its share of filling its station included. Progress, if set, is
// called with each result, a size's all at once.
func CountSteps(cfg Config) []Result {
	out, emit := collect(cfg, Kind.StepUnit)
	gates := make([]*stepGate, len(cfg.Contenders))
	for i := range gates {
		gates[i] = &stepGate{over: map[Kind]bool{}, ops: map[Kind][]stepPoint{}}
	}
	workers := make(chan struct{}, runtime.GOMAXPROCS(0))
	for _, n := range sortedSizes(cfg.Sizes) {
		found := make([][]Result, len(cfg.Contenders))
		var wg sync.WaitGroup
		for i, c := range cfg.Contenders {
			if !c.Counts() {
				continue
			}
			wg.Go(func() {
				workers <- struct{}{}
				defer func() { <-workers }()
				countContender(cfg, c, n, gates[i], func(r Result) { found[i] = append(found[i], r) })
			})
		}
		wg.Wait()
		for _, rs := range found { // in the contenders' order, whichever finished first
			for _, r := range rs {
				emit(r)
			}
		}
		runtime.GC()
	}
	return *out
}

// stepGate keeps, for one contender, what the counting pass found at the
// sizes before: which workloads went over budget and how many steps
// filling and each workload took.
type stepGate struct {
	over map[Kind]bool
	fill []stepPoint
	ops  map[Kind][]stepPoint
}

// stepPoint is a number of steps at a size.
type stepPoint struct {
	n     int
	steps int64
}

// predictSteps returns the steps expected at size n from the last two
// sizes counted before. That is the power law through them, or the
// straight line through them if that is higher. A fixed cost plus one
// that grows as n bends a power law down; far's on libco and rounds is
// one. It returns 0 if it cannot tell.
func predictSteps(ps []stepPoint, n int) float64 {
	if len(ps) < 2 {
		return 0
	}
	prev, last := ps[len(ps)-2], ps[len(ps)-1]
	x0, y0, x1, y1 := float64(prev.n), float64(prev.steps), float64(last.n), float64(last.steps)
	if x1 <= x0 {
		return 0
	}
	line := y1 + (y1-y0)/(x1-x0)*(float64(n)-x1)
	return max(powerLaw(x0, y0, x1, y1, float64(n)), line)
}

// countContender counts every workload of c at size n.
func countContender(cfg Config, c Contender, n int, g *stepGate, emit func(Result)) {
	var live []Kind
	for _, k := range cfg.Kinds {
		switch {
		case !c.Counted(k) || k == Far:
		case g.over[k]:
			emit(Result{Contender: c.Name, Workload: k, N: n, Status: Skipped})
		case predictSteps(g.ops[k], n) > StepBudget:
			g.over[k] = true
			emit(Result{Contender: c.Name, Workload: k, N: n, Status: Predicted})
		default:
			live = append(live, k)
		}
	}
	if len(live) > 0 {
		countStation(cfg, c, n, g, live, emit)
	}
	if c.Counted(Far) && containsKind(cfg.Kinds, Far) {
		countFar(cfg, c, n, g, emit)
	}
}

// countStation fills a counting station of c and counts workloads ks on it.
func countStation(cfg Config, c Contender, n int, g *stepGate, ks []Kind, emit func(Result)) {
	overAll := func(s Status) {
		for _, k := range ks {
			g.over[k] = true
			emit(Result{Contender: c.Name, Workload: k, N: n, Status: s})
		}
	}
	if predictSteps(g.fill, n) > StepBudget {
		overAll(Predicted)
		return
	}
	steps := new(Steps)
	filling := time.Now()
	st, ok := c.counter.open(n, cfg.Seed, steps, stepLimit{steps, StepBudget})
	if !ok {
		overAll(Over)
		return
	}
	defer st.Close()
	g.fill = append(g.fill, stepPoint{n, steps.n})
	share := time.Since(filling) / time.Duration(len(ks)) // each cell's Wall holds its share of the filling
	for _, k := range ks {
		start := time.Now().Add(-share)
		w := &stepWatch{s: steps}
		limit := stepLimit{steps, steps.n + StepBudget}
		done, want, step := 0, CountOps, chunk
		if k == Expire {
			want, step = CountBursts*burstSize, burstSize
		}
		for done < want && !limit.passed() {
			done += st.Run(k, step, w)
		}
		r := Result{Contender: c.Name, Workload: k, N: n, Wall: time.Since(start), Status: OK,
			Ops: done, Steps: w.total, Rounds: 1}
		if done < want {
			g.over[k] = true
			r.Status, r.Ops, r.Steps = Over, 0, 0
		} else {
			g.ops[k] = append(g.ops[k], stepPoint{n, w.total})
			r.Value = float64(w.total) / float64(done)
			r.Lo, r.Hi = r.Value, r.Value
		}
		emit(r)
	}
}

// countFar counts the far workload of c at size n.
func countFar(cfg Config, c Contender, n int, g *stepGate, emit func(Result)) {
	r := Result{Contender: c.Name, Workload: Far, N: n}
	switch {
	case g.over[Far]:
		r.Status = Skipped
	case predictSteps(g.ops[Far], n) > StepBudget:
		g.over[Far] = true
		r.Status = Predicted
	default:
		start := time.Now()
		steps := new(Steps)
		w := &stepWatch{s: steps}
		ok := c.counter.far(n, cfg.Seed, steps, stepLimit{steps, StepBudget}, w)
		r.Wall = time.Since(start)
		if !ok {
			g.over[Far] = true
			r.Status = Over
			break
		}
		g.ops[Far] = append(g.ops[Far], stepPoint{n, w.total})
		r.Status, r.Ops, r.Steps, r.Rounds = OK, n, w.total, 1
		r.Value = float64(w.total) / float64(n)
		r.Lo, r.Hi = r.Value, r.Value
	}
	emit(r)
}
