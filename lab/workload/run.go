package workload

import (
	"math"
	"runtime"
	"slices"
	"time"
)

// Budget bounds the wall time the lab spends on each cell, so that a
// structure whose cost explodes is reported over budget instead of hanging
// the run.
type Budget struct {
	// Measure is the timed work a cell aims for; it stops there.
	Measure time.Duration
	// Cell is the wall time a cell may take, untimed repairs included; a
	// cell that has not done MinOps operations by then is over budget.
	Cell time.Duration
	// Fill is the wall time for filling a station with n timers; a
	// station not full by then puts all its cells over budget.
	Fill time.Duration
	// Far is the wall time for one far cell, its own fill included.
	Far time.Duration
}

// DefaultBudget returns the budget cmd/timerlab uses by default: a run of
// every contender at sizes 1e2 to 1e6 takes about a minute on two cores.
func DefaultBudget() Budget {
	return Budget{Measure: 30 * time.Millisecond, Cell: time.Second, Fill: 3 * time.Second, Far: 3 * time.Second}
}

// MinOps is the number of operations a cell must complete within its
// budget (for expire, one burst).
const MinOps = 32

// Status says how a cell ended.
type Status string

// The statuses of a cell.
const (
	OK        Status = "ok"
	Over      Status = "over budget"             // stopped by its budget
	Predicted Status = "over budget (predicted)" // not run: the smaller size's wall time, scaled, is far over
	Skipped   Status = "over budget (skipped)"   // not run: a smaller size was over budget
)

// Result is one cell: a contender, a workload, a size.
type Result struct {
	Contender string        `json:"contender"`
	Workload  Kind          `json:"workload"`
	N         int           `json:"n"`
	Value     float64       `json:"value"` // in Unit; 0 unless Status is OK
	Unit      string        `json:"unit"`
	Ops       int           `json:"ops"` // operations measured
	Status    Status        `json:"status"`
	Wall      time.Duration `json:"wall_ns"` // wall time the cell took
}

// Config says what Run runs.
type Config struct {
	Contenders []Contender
	Kinds      []Kind
	Sizes      []int
	Budget     Budget
	Seed       uint64
	// Progress, if not nil, is called with every result as it comes.
	Progress func(Result)
}

// Cells returns the number of results Run will return for cfg.
func Cells(cfg Config) int {
	n := 0
	for _, c := range cfg.Contenders {
		for _, k := range cfg.Kinds {
			if c.Supports(k) {
				n += len(cfg.Sizes)
			}
		}
	}
	return n
}

// Run measures every cell of cfg, sizes in ascending order, and returns
// the results. Once a contender's cell is over budget at some size, its
// cells of that workload at larger sizes are not run.
func Run(cfg Config) []Result {
	sizes := slices.Clone(cfg.Sizes)
	slices.Sort(sizes)
	var out []Result
	emit := func(r Result) {
		r.Unit = r.Workload.Unit()
		out = append(out, r)
		if cfg.Progress != nil {
			cfg.Progress(r)
		}
	}
	for _, c := range cfg.Contenders {
		g := &gate{over: map[Kind]bool{}}
		for _, n := range sizes {
			runStation(c, n, cfg, g, emit)
			if slices.Contains(cfg.Kinds, Far) && c.Supports(Far) {
				emit(runFar(c, n, cfg, g))
			}
			runtime.GC() // leave nothing of this size to the next one's measures
		}
	}
	return out
}

// gate keeps, for one contender, which workloads went over budget and how
// long filling and far took at the sizes before.
type gate struct {
	over      map[Kind]bool
	fill, far []point
}

// point is a wall time at a size.
type point struct {
	n    int
	wall time.Duration
}

// predict returns the wall time expected at size n from the last two
// points measured before: the power law through them, wall ∝ n^p, which
// tells a cost that grows with n from one that does not; 0 if it cannot
// tell (fewer than two points, or walls too short to mean anything).
func predict(ps []point, n int) time.Duration {
	if len(ps) < 2 {
		return 0
	}
	prev, last := ps[len(ps)-2], ps[len(ps)-1]
	if last.wall < 10*time.Millisecond || prev.wall < time.Millisecond || last.n <= prev.n {
		return 0
	}
	p := math.Log(float64(last.wall)/float64(prev.wall)) / math.Log(float64(last.n)/float64(prev.n))
	return time.Duration(float64(last.wall) * math.Pow(float64(n)/float64(last.n), max(p, 0)))
}

// runStation fills a station of n timers and measures the resident
// workloads on it.
func runStation(c Contender, n int, cfg Config, g *gate, emit func(Result)) {
	var live []Kind
	for _, k := range cfg.Kinds {
		switch {
		case !k.resident() || !c.Supports(k):
		case g.over[k]:
			emit(Result{Contender: c.Name, Workload: k, N: n, Status: Skipped})
		default:
			live = append(live, k)
		}
	}
	if len(live) == 0 {
		return
	}
	overAll := func(s Status, wall time.Duration) {
		for _, k := range live {
			g.over[k] = true
			emit(Result{Contender: c.Name, Workload: k, N: n, Status: s, Wall: wall})
		}
	}
	if predict(g.fill, n) > cfg.Budget.Fill*3/2 {
		overAll(Predicted, 0)
		return
	}
	start := time.Now()
	st, mem, ok := c.ops.open(n, cfg.Seed, start.Add(cfg.Budget.Fill), slices.Contains(live, Memory))
	wall := time.Since(start)
	if !ok {
		overAll(Over, wall)
		return
	}
	defer st.Close()
	g.fill = append(g.fill, point{n, wall})
	for _, k := range live {
		if k == Memory {
			emit(Result{Contender: c.Name, Workload: k, N: n, Value: mem, Ops: n, Status: OK, Wall: wall})
			continue
		}
		runtime.GC() // a collection left running by the cell before would bill this one
		r := measure(st, k, cfg.Budget)
		r.Contender, r.N = c.Name, n
		if r.Status != OK {
			g.over[k] = true
		}
		emit(r)
	}
}

// rounds is how many times measure repeats a cell's timing; it reports
// the cheapest, since what other processes do to a run only adds time.
const rounds = 3

// measure runs workload k on st in rounds of chunks that double, each
// round until its timed work reaches a third of the budget's Measure,
// all of them until the cell's wall time reaches its Cell. It reports the
// cheapest round.
func measure(st Station, k Kind, b Budget) Result {
	start := time.Now()
	deadline := start.Add(b.Cell)
	ops, most, minOps := 0, 1<<62, MinOps
	first := 1
	if k == Expire {
		first, most, minOps = burstSize, burstsPerFill*burstSize, burstSize
	}
	best, timed := math.Inf(1), time.Duration(0)
	for range rounds {
		w := &watch{}
		n, c := 0, first
		for c > 0 {
			n += st.Run(k, c, w)
			if w.total >= b.Measure/rounds || ops+n >= most || time.Now().After(deadline) {
				break
			}
			c = min(2*c, 1<<16, most-ops-n)
		}
		ops, timed = ops+n, timed+w.total
		if n >= minOps || w.total >= b.Measure/rounds {
			best = min(best, float64(w.total.Nanoseconds())/float64(n))
		}
		if ops >= most || time.Now().After(deadline) {
			break
		}
	}
	r := Result{Workload: k, Ops: ops, Status: OK, Wall: time.Since(start)}
	if math.IsInf(best, 1) {
		if ops < minOps && timed < b.Measure {
			r.Status = Over
			return r
		}
		best = float64(timed.Nanoseconds()) / float64(ops)
	}
	r.Value = best
	return r
}

// runFar measures the far workload at size n.
func runFar(c Contender, n int, cfg Config, g *gate) Result {
	r := Result{Contender: c.Name, Workload: Far, N: n}
	switch {
	case g.over[Far]:
		r.Status = Skipped
		return r
	case predict(g.far, n) > cfg.Budget.Far*3/2:
		g.over[Far] = true
		r.Status = Predicted
		return r
	}
	start := time.Now()
	w := &watch{}
	ok := c.ops.far(n, cfg.Seed, start.Add(cfg.Budget.Far), w)
	r.Wall = time.Since(start)
	if !ok {
		g.over[Far] = true
		r.Status = Over
		return r
	}
	g.far = append(g.far, point{n, r.Wall})
	r.Status, r.Ops, r.Value = OK, n, float64(w.total.Nanoseconds())/float64(n)
	return r
}

// watch is the lab's Stopwatch: it adds up the time between StartTimer
// and StopTimer.
type watch struct {
	start time.Time
	total time.Duration
}

func (w *watch) StartTimer() { w.start = time.Now() }
func (w *watch) StopTimer()  { w.total += time.Since(w.start) }
