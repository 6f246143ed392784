package workload

import (
	"math"
	"runtime"
	"runtime/debug"
	"slices"
	"time"
)

// Budget bounds the time the lab spends on each cell. A structure whose
// cost explodes is then reported over budget instead of hanging the run.
// Budget also says how much timed work a round of a cell is. Every duration is on
// the lab's clock, the CPU time of its thread where there is one (see
// CPUClock): a busy machine makes a run longer, not a cell over budget.
type Budget struct {
	// Round is the timed work of one round of a cell (expire: one burst).
	Round time.Duration
	// Cell is the time a cell may take over all its rounds, untimed
	// repairs included; a cell that has not done MinOps operations by then
	// is over budget.
	Cell time.Duration
	// Fill is the time for filling a station with n timers; a station not
	// full by then puts all its cells over budget.
	Fill time.Duration
	// Far is the time for one far cell, over all its rounds; its first
	// round, its own fill included, must end within it.
	Far time.Duration
}

// DefaultBudget returns the budget cmd/timerlab uses by default: a run of
// every contender at sizes 1e2 to 1e6 takes about 105 seconds on two
// cores.
func DefaultBudget() Budget {
	return Budget{Round: 2 * time.Millisecond, Cell: time.Second, Fill: 3 * time.Second, Far: 3 * time.Second}
}

// MinOps is the number of operations a cell must complete within its
// budget (for expire, one burst).
const MinOps = 32

// The rounds of a cell: at least MinRounds (far: MinFarRounds) once
// calibrated, at most MaxRounds (MaxFarRounds). No more are run once the
// middle half of the rounds of every cell of its workload and size lies
// within Settled of their medians, or once the cell's budget is spent.
const (
	MinRounds    = 15
	MaxRounds    = 41
	MinFarRounds = 3
	MaxFarRounds = 3
	Settled      = 0.05 // (Hi−Lo)/2 over the median
)

// Status says how a cell ended.
type Status string

// The statuses of a cell.
const (
	OK        Status = "ok"
	Over      Status = "over budget"             // stopped by its budget
	Predicted Status = "over budget (predicted)" // not run: the smaller size's wall time, scaled, is far over
	Skipped   Status = "over budget (skipped)"   // not run: a smaller size was over budget
)

// Result is one cell: a contender, a workload, a size. Its value is the
// median of its rounds, and Lo and Hi are the quartiles: the middle half
// of the rounds lies between them. Memory has one round.
type Result struct {
	Contender string        `json:"contender"`
	Workload  Kind          `json:"workload"`
	N         int           `json:"n"`
	Value     float64       `json:"value"` // in Unit; 0 unless Status is OK
	Lo        float64       `json:"lo"`
	Hi        float64       `json:"hi"`
	Rounds    int           `json:"rounds"`
	Unit      string        `json:"unit"`
	Ops       int           `json:"ops"` // operations measured, over every round
	Status    Status        `json:"status"`
	Wall      time.Duration `json:"wall_ns"` // wall time the cell took
	// Steps is the number of steps counted over Ops, in the counting
	// pass (see CountSteps); its Value is Steps/Ops.
	Steps int64 `json:"steps,omitempty"`
	// Costs holds the cost of each round, in Unit, in the order run: round
	// i of every cell of a workload and size ran in the same lap.
	Costs []float64 `json:"costs,omitempty"`
}

// Spread returns half the width of the middle half of the rounds, over
// the median: 0.05 is ±5 %.
func (r Result) Spread() float64 {
	if r.Value <= 0 {
		return 0
	}
	return (r.Hi - r.Lo) / 2 / r.Value
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
func Cells(cfg Config) int { return cells(cfg, Contender.Supports) }

// cells returns the number of cells of cfg whose contender has the
// workload.
func cells(cfg Config, has func(Contender, Kind) bool) int {
	n := 0
	for _, c := range cfg.Contenders {
		for _, k := range cfg.Kinds {
			if has(c, k) {
				n += len(cfg.Sizes)
			}
		}
	}
	return n
}

// collect returns the results of a pass and the function that adds one,
// with its unit, and tells cfg.Progress.
func collect(cfg Config, unit func(Kind) string) (*[]Result, func(Result)) {
	out := new([]Result)
	return out, func(r Result) {
		r.Unit = unit(r.Workload)
		*out = append(*out, r)
		if cfg.Progress != nil {
			cfg.Progress(r)
		}
	}
}

// Run measures every cell of cfg and returns the results, sizes in
// ascending order. At each size it fills a station of n timers for every
// contender. It measures each workload on all of them together, in laps:
// one round of every contender, then the next lap, until every cell has
// settled. The cells of one workload and size stop together. So round i
// of each ran in the same lap, within milliseconds of the others, and
// their rounds can be compared in pairs. Whatever else the machine does
// at some moment falls on every contender alike, not on the one measured
// then, and the median of a cell's rounds leaves out the rounds it
// spoiled. Rounds are timed on the CPU clock of the thread Run locks
// itself to, where there is one (see CPUClock), so that the time another
// process has the core is not billed. The collector is held off during a
// workload's laps and run after them, at the same point in every run.
// When a collection fell among the rounds, its write barriers, assists
// and the memory it handed back moved a cell's median by a tenth or
// more from one run to the next. The collector's cost is the memory
// workload's bytes, not the operations'. Memory is measured first,
// while a station is filled alone. Once a contender's cell is over
// budget at some size, its cells of that workload at larger sizes are not
// run.
func Run(cfg Config) []Result {
	runtime.LockOSThread() // one thread, for its CPU clock
	defer runtime.UnlockOSThread()
	out, emit := collect(cfg, Kind.Unit)
	gates := make([]*gate, len(cfg.Contenders))
	for i := range gates {
		gates[i] = &gate{over: map[Kind]bool{}}
	}
	for _, n := range sortedSizes(cfg.Sizes) {
		runSize(cfg, n, gates, emit)
		runtime.GC() // leave nothing of this size to the next one's measures
	}
	return *out
}

// runSize measures every cell of size n.
func runSize(cfg Config, n int, gates []*gate, emit func(Result)) {
	var resident []Kind
	for _, k := range cfg.Kinds {
		if k.resident() && k != Memory {
			resident = append(resident, k)
		}
	}
	if containsKind(cfg.Kinds, Memory) {
		for i, c := range cfg.Contenders {
			if open(cfg, c, n, gates[i], []Kind{Memory}, emit) != nil {
				panic("workload: a memory station is closed once measured")
			}
		}
	}
	stations := make([]Station, len(cfg.Contenders))
	for i, c := range cfg.Contenders {
		stations[i] = open(cfg, c, n, gates[i], resident, emit)
	}
	runtime.GC() // the fills' garbage would bill the first cells
	for _, k := range resident {
		var cells []*cell
		for i, c := range cfg.Contenders {
			if stations[i] != nil && c.Supports(k) && !gates[i].over[k] {
				cells = append(cells, &cell{contender: c.Name, st: stations[i], gate: gates[i]})
			}
		}
		measure(cells, k, n, cfg.Budget, emit)
		runtime.GC() // at the same point in every run: the next workload finds the same heap
	}
	for i, st := range stations {
		if st != nil {
			st.Close()
			stations[i] = nil // for the far cells' collections
		}
	}
	if containsKind(cfg.Kinds, Far) {
		runFar(cfg, n, gates, emit)
	}
}

// sortedSizes returns the sizes in ascending order.
func sortedSizes(sizes []int) []int {
	s := slices.Clone(sizes)
	slices.Sort(s)
	return s
}

func containsKind(ks []Kind, k Kind) bool { return slices.Contains(ks, k) }

// gate keeps, for one contender, which workloads went over budget and how
// long (on the lab's clock) filling and far took at the sizes before.
type gate struct {
	over      map[Kind]bool
	fill, far []point
}

// point is a time at a size.
type point struct {
	n    int
	wall time.Duration
}

// predict returns the time expected at size n from the last two points
// measured before: the power law through them, time ∝ n^p. That tells a
// cost that grows with n from one that does not. It returns 0 if it
// cannot tell (fewer than two points, or walls too short to mean
// anything).
func predict(ps []point, n int) time.Duration {
	if len(ps) < 2 {
		return 0
	}
	prev, last := ps[len(ps)-2], ps[len(ps)-1]
	if last.wall < 10*time.Millisecond || prev.wall < time.Millisecond {
		return 0
	}
	return time.Duration(powerLaw(float64(prev.n), float64(prev.wall), float64(last.n), float64(last.wall), float64(n)))
}

// powerLaw returns the value at n of the power law y ∝ x^p through
// (x0, y0) and (x1, y1), p at least 0. A cost that falls with n is
// expected to stay where it is. It returns 0 if it cannot tell (x1 not
// beyond x0, or a value not positive).
func powerLaw(x0, y0, x1, y1, n float64) float64 {
	if x1 <= x0 || y0 <= 0 || y1 <= 0 {
		return 0
	}
	p := math.Log(y1/y0) / math.Log(x1/x0)
	return y1 * math.Pow(n/x1, max(p, 0))
}

// open fills a station of c with n timers for the workloads ks it
// supports and returns it. It returns nil if there is nothing to measure
// on it or if it went over budget. It also returns nil if ks is just
// memory, which it measures and emits.
func open(cfg Config, c Contender, n int, g *gate, ks []Kind, emit func(Result)) Station {
	var live []Kind
	for _, k := range ks {
		switch {
		case !c.Supports(k):
		case g.over[k]:
			emit(Result{Contender: c.Name, Workload: k, N: n, Status: Skipped})
		default:
			live = append(live, k)
		}
	}
	if len(live) == 0 {
		return nil
	}
	overAll := func(s Status, wall time.Duration) Station {
		for _, k := range live {
			g.over[k] = true
			emit(Result{Contender: c.Name, Workload: k, N: n, Status: s, Wall: wall})
		}
		return nil
	}
	if predict(g.fill, n) > cfg.Budget.Fill*3/2 {
		return overAll(Predicted, 0)
	}
	mem := slices.Equal(live, []Kind{Memory})
	start, cpu := time.Now(), clock()
	st, perTimer, ok := c.ops.open(n, cfg.Seed, after(cfg.Budget.Fill), mem)
	wall := time.Since(start)
	if !ok {
		return overAll(Over, wall)
	}
	if len(g.fill) == 0 || g.fill[len(g.fill)-1].n != n {
		g.fill = append(g.fill, point{n, clock() - cpu})
	}
	if mem {
		st.Close()
		emit(Result{Contender: c.Name, Workload: Memory, N: n, Value: perTimer, Lo: perTimer, Hi: perTimer,
			Rounds: 1, Ops: n, Status: OK, Wall: wall})
		return nil
	}
	return st
}

// cell is one contender's cell of a workload and size, in the making.
type cell struct {
	contender string
	st        Station
	gate      *gate
	per       int           // operations per round, from the calibration round
	ops       int           // operations done, calibration included
	wall      time.Duration // wall time spent on it, untimed repairs included
	spent     time.Duration // the same on the lab's clock
	costs     []float64     // cost per operation of each round after calibration
	done      bool
	over      bool
}

// lapsGarbage is how much garbage the laps of one workload and size may
// leave before the collector runs among them.
const lapsGarbage = 4 << 30

// measure runs workload k on the cells at size n and emits their results
// in order. Each cell gets a calibration round, which also warms it up
// and is not counted. Then come laps of one round each, every other lap
// in reverse order, until every cell has settled or MaxRounds laps are
// done.
// A cell that settles early goes on running with the others, so that
// all of them cover the same laps; only one over its budget stops. The
// collector is off meanwhile (see Run).
func measure(cells []*cell, k Kind, n int, b Budget, emit func(Result)) {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	// a backstop: a workload that makes more than lapsGarbage of garbage
	// gets a collection among its laps rather than the machine's memory
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(int64(ms.HeapSys) + lapsGarbage))
	for _, c := range cells {
		calibrate(c, k, b)
	}
	for lap := 0; ; lap++ {
		busy, settled := false, true
		for i := range cells {
			c := cells[i]
			if lap%2 == 1 { // every other lap backwards: no contender always follows the same one
				c = cells[len(cells)-1-i]
			}
			if c.done {
				continue
			}
			busy = true
			w := &watch{}
			start, cpu := time.Now(), clock()
			ops := c.st.Run(k, c.per, w)
			c.wall, c.spent = c.wall+time.Since(start), c.spent+clock()-cpu
			c.ops += ops
			c.costs = append(c.costs, float64(w.total.Nanoseconds())/float64(ops))
			c.done = c.spent >= b.Cell
			settled = settled && (c.done || finished(c.costs, MinRounds, MaxRounds))
		}
		if !busy || settled {
			break
		}
	}
	for _, c := range cells {
		r := Result{Contender: c.contender, Workload: k, N: n, Ops: c.ops, Wall: c.wall, Status: OK}
		if c.over {
			r.Status = Over
			c.gate.over[k] = true
		} else {
			r.Value, r.Lo, r.Hi = quartiles(c.costs)
			r.Rounds = len(c.costs)
			r.Costs = c.costs
		}
		emit(r)
	}
}

// calibrate runs the first round of c: chunks that double until the
// timed work reaches the budget's Round, which sets how many operations
// the next rounds do. A cell that cannot do MinOps operations within its
// budget is over budget and done; one that can, but not in a Round, has
// its only round counted. An expire round is one burst: no more than 40
// bursts fit before the station moves its pending timers (see expire).
func calibrate(c *cell, k Kind, b Budget) {
	start, cpu := time.Now(), clock()
	until := after(b.Cell)
	w := &watch{}
	n, chunk := 0, 1
	if k == Expire {
		n = c.st.Run(k, burstSize, w)
		c.wall, c.spent, c.ops, c.per = time.Since(start), clock()-cpu, n, burstSize
		if c.spent >= b.Cell {
			c.over, c.done = true, true
		}
		return
	}
	for {
		n += c.st.Run(k, chunk, w)
		if w.total >= b.Round || until.passed() {
			break
		}
		chunk = min(2*chunk, 1<<16)
	}
	c.wall, c.spent, c.ops = time.Since(start), clock()-cpu, n
	switch {
	case n < MinOps && w.total < b.Round:
		c.over, c.done = true, true
	case c.spent >= b.Cell:
		c.costs, c.done = []float64{float64(w.total.Nanoseconds()) / float64(n)}, true
	default:
		c.per = max(1, int(math.Round(float64(n)*float64(b.Round)/float64(max(w.total, 1)))))
	}
}

// finished reports whether a cell with these rounds is done: it has
// max rounds, or min rounds whose middle half lies within Settled of the
// median.
func finished(costs []float64, min, max int) bool {
	if len(costs) >= max {
		return true
	}
	if len(costs) < min {
		return false
	}
	med, lo, hi := quartiles(costs)
	return (hi-lo)/2 <= Settled*med
}

// quartiles returns the median and the first and third quartiles of xs,
// interpolated between the values on either side.
func quartiles(xs []float64) (med, lo, hi float64) {
	s := slices.Clone(xs)
	slices.Sort(s)
	at := func(q float64) float64 {
		if len(s) == 0 {
			return 0
		}
		pos := q * float64(len(s)-1)
		i := int(pos)
		if i+1 >= len(s) {
			return s[len(s)-1]
		}
		return s[i] + (pos-float64(i))*(s[i+1]-s[i])
	}
	return at(0.5), at(0.25), at(0.75)
}

// farCell is one contender's far cell in the making.
type farCell struct {
	c     Contender
	gate  *gate
	wall  time.Duration // over every round
	spent time.Duration // the same on the lab's clock
	last  time.Duration // the last round's, on the lab's clock
	costs []float64
	done  bool
}

// runFar measures the far workload at size n, in laps like measure: one
// run of every contender whose cell is not done, then the next lap.
func runFar(cfg Config, n int, gates []*gate, emit func(Result)) {
	var cells []*farCell
	for i, c := range cfg.Contenders {
		if !c.Supports(Far) {
			continue
		}
		g := gates[i]
		switch {
		case g.over[Far]:
			emit(Result{Contender: c.Name, Workload: Far, N: n, Status: Skipped})
			continue
		case predict(g.far, n) > cfg.Budget.Far*3/2:
			g.over[Far] = true
			emit(Result{Contender: c.Name, Workload: Far, N: n, Status: Predicted})
			continue
		}
		cells = append(cells, &farCell{c: c, gate: g})
	}
	for lap := 0; ; lap++ {
		busy := false
		for _, fc := range cells {
			if fc.done {
				continue
			}
			busy = true
			runtime.GC() // the garbage of the run before would bill this one
			start, cpu := time.Now(), clock()
			var until stop = never
			if lap == 0 {
				until = after(cfg.Budget.Far)
			}
			w := &watch{}
			ok := fc.c.ops.far(n, cfg.Seed+uint64(lap), until, w)
			fc.last = clock() - cpu
			fc.wall, fc.spent = fc.wall+time.Since(start), fc.spent+fc.last
			if !ok {
				fc.done = true
				continue
			}
			if lap == 0 {
				fc.gate.far = append(fc.gate.far, point{n, fc.last})
			}
			fc.costs = append(fc.costs, float64(w.total.Nanoseconds())/float64(n))
			fc.done = finished(fc.costs, MinFarRounds, MaxFarRounds) || fc.spent+fc.last > cfg.Budget.Far
		}
		if !busy {
			break
		}
	}
	for _, fc := range cells {
		r := Result{Contender: fc.c.Name, Workload: Far, N: n, Wall: fc.wall, Status: OK}
		if len(fc.costs) == 0 {
			fc.gate.over[Far] = true
			r.Status = Over
		} else {
			r.Value, r.Lo, r.Hi = quartiles(fc.costs)
			r.Rounds, r.Ops = len(fc.costs), n*len(fc.costs)
		}
		emit(r)
	}
}

// watch is the lab's Stopwatch: it adds up the time between StartTimer
// and StopTimer, on the thread's CPU clock where there is one (see
// threadCPU and Run), on the wall clock elsewhere.
type watch struct {
	start time.Duration
	total time.Duration
}

func (w *watch) StartTimer() { w.start = clock() }
func (w *watch) StopTimer()  { w.total += clock() - w.start }

// epoch is the wall clock's zero for clock.
var epoch = time.Now()

// clock returns the thread's CPU time if it can be read, the wall time
// since epoch otherwise.
func clock() time.Duration {
	if d, ok := threadCPU(); ok {
		return d
	}
	return time.Since(epoch)
}

// deadline is a time on the lab's clock; the zero deadline, never,
// never passes.
type deadline time.Duration

const never deadline = 0

// after returns the deadline d from now on the lab's clock.
func after(d time.Duration) deadline { return deadline(clock() + d) }

// passed reports whether the deadline has passed.
func (d deadline) passed() bool { return d != 0 && clock() > time.Duration(d) }

// CPUClock reports whether the lab times its rounds on the thread's CPU
// clock: on Linux. Elsewhere it uses the wall clock, and a round during
// which another process had the lab's core is billed for the wait.
func CPUClock() bool {
	_, ok := threadCPU()
	return ok
}
