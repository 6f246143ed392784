package workload

import (
	"math"
	"runtime/debug"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/timewheel/timewheel/queue"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// contenders are the contenders these tests run: two queues of package
// queue (the lab's structures, which import this package, are run by its
// own tests), package time and the scheduler.
func contenders() []Contender {
	return []Contender{
		Queue("reference", "queue.Reference", Claims{}, func() queue.Queue[*queue.RefTimer] { return queue.NewReference() }, nil),
		Queue("wheel", "queue.Wheel", Claims{}, func() queue.Queue[*queue.Entry] { return queue.NewWheel() }, nil),
		Time(),
		Scheduler(),
	}
}

type nopWatch struct{}

func (nopWatch) StartTimer() {}
func (nopWatch) StopTimer()  {}

// TestStationsKeepTheirTimers runs every workload a little on every
// contender and checks that the structures still hold their n timers.
func TestStationsKeepTheirTimers(t *testing.T) {
	const n = 64
	for _, c := range contenders() {
		t.Run("engine="+c.Name, func(t *testing.T) {
			st, _ := c.Open(n, 1)
			defer st.Close()
			for _, k := range []Kind{Schedule, Cancel, Churn, Refresh, Expire} {
				if !c.Supports(k) {
					continue
				}
				ops := 100
				if k == Expire {
					ops = 2500 // three bursts
				}
				if got := st.Run(k, ops, nopWatch{}); got < ops {
					t.Fatalf("Run(%s, %d) did %d", k, ops, got)
				}
				if c.clockless {
					continue
				}
				q := st.(interface{ pending() int })
				if got := q.pending(); got < n || got > n && k != Expire {
					t.Fatalf("after %s, %d timers pending, want %d", k, got, n)
				}
			}
		})
	}
}

// TestFarFiresEveryTimer runs a short far workload on every structure.
func TestFarFiresEveryTimer(t *testing.T) {
	plan := farPlan{from: 100, to: 5000, step: 10}
	for _, c := range contenders() {
		if !c.Supports(Far) {
			continue
		}
		t.Run("engine="+c.Name, func(t *testing.T) {
			if !c.ops.farWith(plan, 200, 1, never, nopWatch{}) {
				t.Fatal("far reported over budget without a deadline")
			}
		})
	}
}

// TestRunCoversEveryCell runs two contenders on tiny sizes.
func TestRunCoversEveryCell(t *testing.T) {
	cfg := Config{Contenders: pick(t, "reference", "time"), Kinds: []Kind{Schedule, Cancel, Expire, Churn, Refresh, Memory},
		Sizes: []int{16, 8}, Budget: Budget{Round: time.Microsecond, Cell: time.Minute, Fill: time.Minute, Far: time.Minute}, Seed: 3}
	var seen int
	cfg.Progress = func(Result) { seen++ }
	rs := Run(cfg)
	if len(rs) != Cells(cfg) || seen != len(rs) {
		t.Fatalf("%d results, %d progress calls, want %d", len(rs), seen, Cells(cfg))
	}
	for _, r := range rs {
		if r.Status != OK || r.Ops <= 0 || r.Unit != r.Workload.Unit() {
			t.Errorf("%+v", r)
		}
		if r.Contender == "time" && r.Workload == Expire {
			t.Errorf("package time ran the expire workload")
		}
	}
	if rs[0].N != 8 {
		t.Errorf("first size run is %d, want the smallest, 8", rs[0].N)
	}
}

// TestRunStopsAtTheBudget gives filling no time at all: the first size
// is over budget, the next skipped, and nothing hangs.
func TestRunStopsAtTheBudget(t *testing.T) {
	cfg := Config{Contenders: pick(t, "reference"), Kinds: []Kind{Churn, Memory, Far},
		Sizes: []int{2 * deadlineCheck, 4 * deadlineCheck}, Budget: Budget{Round: time.Millisecond}}
	want := map[int]Status{2 * deadlineCheck: Over, 4 * deadlineCheck: Skipped}
	for _, r := range Run(cfg) {
		if r.Status != want[r.N] {
			t.Errorf("%s at %d: %s, want %s", r.Workload, r.N, r.Status, want[r.N])
		}
	}
}

func TestPredict(t *testing.T) {
	ms := time.Millisecond
	cases := []struct {
		ps   []point
		n    int
		want time.Duration
	}{
		{nil, 10, 0},
		{[]point{{100, 50 * ms}}, 1000, 0}, // one point tells nothing
		{[]point{{100, 20 * ms}, {1000, 20 * ms}}, 1e4, 20 * ms},    // flat
		{[]point{{100, 2 * ms}, {1000, 20 * ms}}, 1e4, 200 * ms},    // linear
		{[]point{{100, 2 * ms}, {1000, 200 * ms}}, 1e4, 20000 * ms}, // quadratic
		{[]point{{100, ms / 10}, {1000, 5 * ms}}, 1e4, 0},           // too short to tell
	}
	for _, c := range cases {
		got := predict(c.ps, c.n)
		if math.Abs(float64(got-c.want)) > float64(c.want)/100 {
			t.Errorf("predict(%v, %d) = %v, want %v", c.ps, c.n, got, c.want)
		}
	}
}

func TestGrowth(t *testing.T) {
	cases := []struct {
		cost     func(n float64) float64
		name     string
		min, max float64 // the slope
	}{
		{func(float64) float64 { return 40 }, "flat 0.00", 0, 0},
		{func(n float64) float64 { return 40 * (1 + 1e-4*math.Log(n)) }, "flat 0.00", 0, 0.01},
		{func(n float64) float64 { return 5000 / math.Sqrt(n) }, "falls -0.50", -0.5, -0.5},
		{func(n float64) float64 { return 10 * math.Log2(n) }, "memory 0.12", 0.11, 0.13},
		{func(n float64) float64 { return math.Pow(n, 0.3) }, "memory 0.30", 0.3, 0.3},
		{func(n float64) float64 { return 3 * n }, "n^1.00", 1, 1},
		{func(n float64) float64 { return math.Pow(n, 0.7) }, "n^0.70", 0.7, 0.7},
		{func(n float64) float64 { return n * n }, "n^2.00", 2, 2},
	}
	for _, c := range cases {
		var rs []Result
		for _, n := range []int{1e2, 1e3, 1e4, 1e5, 1e6} {
			rs = append(rs, Result{N: n, Value: c.cost(float64(n)), Status: OK})
		}
		rs = append(rs, Result{N: 1e7, Status: Over}) // does not count
		if g := FitGrowth(rs); g.String() != c.name || g.Points != 5 || g.Slope < c.min-1e-9 || g.Slope > c.max+1e-9 {
			t.Errorf("growth %v (%d points), want %s with a slope from %.2f to %.2f", g, g.Points, c.name, c.min, c.max)
		}
	}
	// one size spoiled tenfold by a burst of load: the slope stays flat
	var rs []Result
	for _, n := range []int{1e2, 1e3, 1e4, 1e5, 1e6} {
		v := 20.0
		if n == 1e5 {
			v = 200
		}
		rs = append(rs, Result{N: n, Value: v, Status: OK})
	}
	if g := FitGrowth(rs); g.Slope != 0 || g.Name() != "flat" {
		t.Errorf("a flat cost with one size ten times over: growth %v, want flat, a slope of 0", g)
	}
	if g := FitGrowth([]Result{{N: 10, Value: 5, Status: OK}}); g.String() != "?" {
		t.Errorf("one point: %v, want ?", g)
	}
}

// TestFitSteps fits every class to steps that follow it exactly, or
// nearly, and checks the class, the fitted terms and the refusals.
func TestFitSteps(t *testing.T) {
	sizes := []int{1e2, 1e3, 1e4, 1e5, 1e6}
	cases := []struct {
		name   string
		steps  func(n float64) float64
		shared bool
		want   Class
		a, b   float64 // the fitted A and B, within 1 %; b < 0: not checked
	}{
		{"flat", func(float64) float64 { return 2.6 }, false, O1, 2.6, 0},
		{"flat, 1% noise", func(n float64) float64 { return 2.6 * (1 + 0.01*math.Sin(n)) }, false, O1, 2.6, -1},
		{"log", func(n float64) float64 { return 10 + 0.5*math.Log(n) }, false, OLogN, 10, 0.5},
		{"log, shifted", func(n float64) float64 { return 3.4*math.Log(n) - 5.6 }, false, OLogN, -5.6, 3.4},
		{"a log that adds a sixth over four decades", func(n float64) float64 { return 10 + 0.15*math.Log(n) }, false, O1, -1, 0},
		{"log of n and a burst", func(n float64) float64 { return 1 + 3*math.Log2(n+1000) }, false, OLogN, -1, -1},
		{"sqrt", func(n float64) float64 { return 5 + 0.3*math.Sqrt(n) }, false, OSqrtN, 5, 0.3},
		{"linear behind a constant", func(n float64) float64 { return 2.1 + n/5120 }, false, ON, 2.1, 1.0 / 5120},
		{"n log n", func(n float64) float64 { return 1 + 0.01*n*math.Log(n) }, false, ONLogN, 1, 0.01},
		{"square", func(n float64) float64 { return 1 + 1e-9*n*n }, false, ON2, 1, 1e-9},
		{"flat, shared by n", func(n float64) float64 { return 730 + 8.64e7/n }, true, O1, 730, 0},
		{"log, shared by n", func(n float64) float64 { return 5 + 3*math.Log(n) + 86400/n }, true, OLogN, 5, 3},
	}
	for _, c := range cases {
		var rs []Result
		for _, n := range sizes {
			rs = append(rs, Result{N: n, Value: c.steps(float64(n)), Status: OK})
		}
		rs = append(rs, Result{N: 1e7, Status: Over}) // does not count
		f := FitSteps(rs, c.shared)
		near := func(got, want float64) bool { return want < 0 || math.Abs(got-want) <= 0.01*want+1e-12 }
		if f.Class != c.want || f.Points != 5 || !near(f.A, c.a) || !near(f.B, c.b) {
			t.Errorf("%s: %v, %s (A %g, B %g), want %s, A %g, B %g", c.name, f, f.Formula(), f.A, f.B, c.want, c.a, c.b)
		}
	}
	// Steps that settle (a heap of 100 is shallower than the sifts of a
	// larger one) and steps with one size apart (deadlines that repeat at
	// a million timers) are flat.
	for _, c := range []struct {
		name  string
		steps []float64
		apart int
	}{
		{"settling", []float64{4.6, 4.9, 5.0, 5.0, 5.0}, 0},
		{"one size apart", []float64{4.4, 4.6, 4.4, 4.3, 6.2}, 1e6},
	} {
		var rs []Result
		for i, n := range sizes {
			rs = append(rs, Result{N: n, Value: c.steps[i], Status: OK})
		}
		if f := FitSteps(rs, false); f.Class != O1 || f.Apart != c.apart || f.Points != 5 {
			t.Errorf("%s %v: %v (apart %d), want O(1) apart %d", c.name, c.steps, f, f.Apart, c.apart)
		}
	}
	// Too few sizes: a line through two points, or three with the shared
	// term, fits anything.
	two := []Result{{N: 100, Value: 3, Status: OK}, {N: 1000, Value: 9, Status: OK}}
	if f := FitSteps(two, false); f.Class != Unknown || f.String() != "? 2 sizes" {
		t.Errorf("two sizes: %v, want ? 2 sizes", f)
	}
	three := append(two, Result{N: 10000, Value: 30, Status: OK})
	if f := FitSteps(three, true); f.Class != Unknown {
		t.Errorf("three sizes with a shared term: %v, want ?", f)
	}
}

func TestParseKind(t *testing.T) {
	for _, k := range Kinds() {
		if got, err := ParseKind(string(k)); got != k || err != nil {
			t.Errorf("ParseKind(%q) = %q, %v", k, got, err)
		}
	}
	if _, err := ParseKind("nap"); err == nil {
		t.Error("ParseKind(nap) succeeded")
	}
}

func pick(t *testing.T, names ...string) []Contender {
	var cs []Contender
	for _, name := range names {
		for _, c := range contenders() {
			if c.Name == name {
				cs = append(cs, c)
			}
		}
	}
	if len(cs) != len(names) {
		t.Fatalf("no contenders %v", names)
	}
	return cs
}

// logStation is a Station that records every Run in a shared log.
type logStation struct {
	name string
	log  *[]string
}

func (s logStation) Run(k Kind, ops int, sw Stopwatch) int {
	sw.StartTimer()
	*s.log = append(*s.log, s.name)
	sw.StopTimer()
	return ops
}

func (logStation) Close() {}

// TestRoundsInterleave: the rounds of a workload and size go to every
// contender in turn, not all of one contender's and then the next one's.
func TestRoundsInterleave(t *testing.T) {
	var log []string
	var cells []*cell
	for _, name := range []string{"a", "b"} {
		cells = append(cells, &cell{contender: name, st: logStation{name, &log}, gate: &gate{over: map[Kind]bool{}}})
	}
	var rs []Result
	measure(cells, Churn, 8, Budget{Round: time.Nanosecond, Cell: time.Minute}, func(r Result) { rs = append(rs, r) })
	if len(rs) != 2 || rs[0].Contender != "a" || rs[1].Contender != "b" {
		t.Fatalf("results %+v, want a's and b's", rs)
	}
	for _, r := range rs {
		if r.Status != OK || r.Rounds < MinRounds || r.Rounds > MaxRounds {
			t.Errorf("%s: %s after %d rounds, want OK after %d to %d", r.Contender, r.Status, r.Rounds, MinRounds, MaxRounds)
		}
	}
	// runs of the same contender: a's calibration, b's, then the laps,
	// a b, b a, a b ... (every other one backwards). One contender's
	// rounds after the other's would make one run of all of a's rounds.
	var runs []int
	for i := range log {
		if i == 0 || log[i] != log[i-1] {
			runs = append(runs, 0)
		}
		runs[len(runs)-1]++
	}
	if len(runs) < 2+MinRounds {
		t.Fatalf("%d runs of one contender, want at least %d: %v", len(runs), 2+MinRounds, log)
	}
	for _, n := range runs[2:] {
		if n > 2 {
			t.Fatalf("%d rounds of one contender in a row: %v", n, log)
		}
	}
}

// spinStation is a Station whose operations take the CPU time its
// cost function says for round i.
type spinStation struct {
	round int
	cost  func(round int) time.Duration
}

func (s *spinStation) Run(k Kind, ops int, sw Stopwatch) int {
	sw.StartTimer()
	for range ops {
		for until := clock() + s.cost(s.round); clock() < until; {
		}
	}
	sw.StopTimer()
	s.round++
	return ops
}

func (*spinStation) Close() {}

// TestCellsStopTogether: a cell that settles at once goes on with a
// noisy one until the noisy one settles or runs MaxRounds, so that
// round i of every cell ran in the same lap; and the collector, held off
// during the laps, is back as it was once they are done.
func TestCellsStopTogether(t *testing.T) {
	steady := &spinStation{cost: func(int) time.Duration { return 50 * time.Microsecond }}
	noisy := &spinStation{cost: func(i int) time.Duration { return time.Duration(1+3*(i%2)) * 25 * time.Microsecond }}
	cells := []*cell{
		{contender: "steady", st: steady, gate: &gate{over: map[Kind]bool{}}},
		{contender: "noisy", st: noisy, gate: &gate{over: map[Kind]bool{}}},
	}
	gcBefore := debug.SetGCPercent(100)
	debug.SetGCPercent(gcBefore)
	limitBefore := debug.SetMemoryLimit(-1)
	var rs []Result
	measure(cells, Churn, 8, Budget{Round: time.Nanosecond, Cell: time.Minute}, func(r Result) { rs = append(rs, r) })
	if gc, limit := debug.SetGCPercent(gcBefore), debug.SetMemoryLimit(-1); gc != gcBefore || limit != limitBefore {
		t.Errorf("after the laps: GC percent %d, memory limit %d; want %d and %d as before", gc, limit, gcBefore, limitBefore)
	}
	if len(rs) != 2 {
		t.Fatalf("%d results, want 2", len(rs))
	}
	for _, r := range rs {
		if r.Status != OK || r.Rounds != MaxRounds || len(r.Costs) != MaxRounds {
			t.Errorf("%s: %s after %d rounds (%d costs), want OK after %d, the noisy cell's", r.Contender, r.Status, r.Rounds, len(r.Costs), MaxRounds)
		}
	}
}

func TestQuartiles(t *testing.T) {
	cases := []struct {
		xs          []float64
		med, lo, hi float64
	}{
		{[]float64{5}, 5, 5, 5},
		{[]float64{9, 1, 5, 3, 7}, 5, 3, 7},
		{[]float64{4, 1, 3, 2}, 2.5, 1.75, 3.25},
	}
	for _, c := range cases {
		if med, lo, hi := quartiles(c.xs); med != c.med || lo != c.lo || hi != c.hi {
			t.Errorf("quartiles(%v) = %v, %v, %v; want %v, %v, %v", c.xs, med, lo, hi, c.med, c.lo, c.hi)
		}
	}
}

func TestFinished(t *testing.T) {
	rounds := func(n int, pattern ...float64) []float64 {
		var xs []float64
		for i := range n {
			xs = append(xs, pattern[i%len(pattern)])
		}
		return xs
	}
	steady := rounds(MinRounds, 100, 101, 99, 100, 100, 102, 98)
	noisy := rounds(MinRounds, 100, 150, 60, 120, 80, 140, 70)
	switch {
	case finished(steady[:MinRounds-1], MinRounds, MaxRounds):
		t.Error("finished before MinRounds")
	case !finished(steady, MinRounds, MaxRounds):
		t.Errorf("steady rounds %v not finished", steady)
	case finished(noisy, MinRounds, MaxRounds):
		t.Errorf("noisy rounds %v finished before MaxRounds", noisy)
	case !finished(rounds(MaxRounds, 100, 150, 60, 120, 80, 140, 70), MinRounds, MaxRounds):
		t.Error("not finished after MaxRounds")
	}
}
