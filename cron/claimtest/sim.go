// Package claimtest checks a [cron.Claimer] the way it is used: several
// schedulers, one per simulated replica of a service, each on a virtual
// clock of its own that is off from the true time by up to a few seconds,
// share the claimer and run the same jobs over simulated days and
// months; every instant the jobs' specs name must run exactly once in
// total. [Run] is the suite every Claimer should pass; [Sim] is the
// simulation it is made of, for tests of one's own, such as a store that
// goes down in the middle.
//
//	func TestClaimer(t *testing.T) {
//		claimtest.Run(t, func(t *testing.T) cron.Claimer { return newClaimer(t) })
//	}
package claimtest

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/timewheel/timewheel"
	"github.com/timewheel/timewheel/clock"
	"github.com/timewheel/timewheel/cron"
)

// Config describes a simulation. The zero value is valid: every zero field
// takes its default. New panics on a negative field.
type Config struct {
	// Replicas is the number of schedulers (default 3).
	Replicas int
	// MaxSkew bounds each replica's clock error: a replica's clock reads
	// the true time plus a skew drawn from [-MaxSkew, +MaxSkew] (default
	// 4s, so that two clocks differ by up to 8s). It is at most
	// MaxInt64/2, so that the range fits a time.Duration.
	MaxSkew time.Duration
	// SkewPeriod is how often, in true time, the skews are drawn anew, as
	// NTP corrects clocks (default 10m). A clock whose skew drops stands
	// still until the true time catches up; one whose skew grows jumps,
	// stopping at every timer on the way.
	SkewPeriod time.Duration
	// Seed seeds the skews and the order in which replicas due at the
	// same true time move (default 1).
	Seed uint64
	// Options are given to every scheduler, after the wheel, WithInline,
	// WithLocation(time.UTC), WithClaimer and a WithPanicHandler that
	// panics again, so that a panic of OnRun ends RunUntil with it.
	Options []cron.Option
	// OnRun, if not nil, is called after each run is recorded, on the
	// goroutine that advances the replica's clock, inside the replica's
	// run: it may call the Sim's Now, Runs, Tally, Scheduler and Wheel,
	// and a Stop of a scheduler returns at once (see cron.Scheduler.Stop);
	// Add, RunUntil and Restart panic. A panic of OnRun reaches the caller
	// of RunUntil.
	OnRun func(replica int, job string, at time.Time)
}

// check panics on a field that is not valid.
func (c *Config) check() {
	const maxSkew = (math.MaxInt64 - 1) / 2 // the range 2·MaxSkew+1 fits
	switch {
	case c.Replicas < 0:
		panic(fmt.Sprintf("claimtest: New called with Config.Replicas %d; want 1 or more, or 0 for 3", c.Replicas))
	case c.MaxSkew < 0:
		panic(fmt.Sprintf("claimtest: New called with Config.MaxSkew %v; want 0 or more (0 for 4s)", c.MaxSkew))
	case c.MaxSkew > maxSkew:
		panic(fmt.Sprintf("claimtest: New called with Config.MaxSkew %v; want at most %v", c.MaxSkew, time.Duration(maxSkew)))
	case c.SkewPeriod < 0:
		panic(fmt.Sprintf("claimtest: New called with Config.SkewPeriod %v; want more than 0 (0 for 10m)", c.SkewPeriod))
	}
}

func (c *Config) defaults() {
	if c.Replicas == 0 {
		c.Replicas = 3
	}
	if c.MaxSkew == 0 {
		c.MaxSkew = 4 * time.Second
	}
	if c.SkewPeriod == 0 {
		c.SkewPeriod = 10 * time.Minute
	}
	if c.Seed == 0 {
		c.Seed = 1
	}
}

// Sim is a simulation of replicas that share a Claimer. It moves the true
// time forward event by event: at each step, every replica whose clock
// has a timer due by then moves its clock to the true time plus its skew,
// in an order drawn at random, so the replica whose clock is ahead fires
// an instant first. Schedulers run jobs inline (WithInline on a wheel
// with an Inline executor), so each run's claim and call have returned
// before the next replica moves, and a run takes no virtual time: the
// harder case for lock-and-release, which a run that takes a millisecond
// does not ease.
//
// The zero Sim has no replicas: its Now is the zero time and it has no
// runs; Add, RunUntil and Restart panic on it. Make one with New. Every
// method panics on a nil *Sim, naming itself: "claimtest: Now called on a
// nil *Sim".
//
// A Sim is not safe for concurrent use.
type Sim struct {
	t       testing.TB
	cfg     Config
	claimer cron.Claimer
	rng     *rand.Rand
	now     time.Time // true time
	period  time.Time // start of the current skew period
	skew    []time.Duration
	reps    []*replica
	order   []int // the order replicas move in, shuffled each step
	jobs    []simJob
	moving  bool // in RunUntil or Restart: OnRun may be running

	mu   sync.Mutex
	runs map[string][]Record // guarded by mu
}

type replica struct {
	clk *clock.Virtual
	w   *timewheel.Wheel
	s   *cron.Scheduler
}

type simJob struct {
	name, spec string
	opts       []cron.JobOption
}

// Record is one run of a job: its instant, the replica that ran it, and
// that replica's clock when it did.
type Record struct {
	At      time.Time
	Replica int
	Clock   time.Time
}

// New returns a simulation of cfg.Replicas schedulers sharing c, at true
// time start. The schedulers are stopped when the test ends. New panics
// if t or c is nil, or on a Config field that is negative.
func New(t testing.TB, c cron.Claimer, start time.Time, cfg Config) *Sim {
	switch {
	case t == nil:
		panic("claimtest: New called with a nil testing.TB")
	case c == nil:
		panic("claimtest: New called with a nil cron.Claimer")
	}
	cfg.check()
	cfg.defaults()
	s := &Sim{
		t: t, cfg: cfg, claimer: c,
		rng:  rand.New(rand.NewPCG(cfg.Seed, cfg.Seed^0x9e3779b97f4a7c15)),
		now:  start,
		runs: map[string][]Record{},
	}
	s.period = start
	s.drawSkews()
	for i := range cfg.Replicas {
		s.reps = append(s.reps, s.newReplica(i))
		s.order = append(s.order, i)
	}
	t.Cleanup(s.stop)
	return s
}

func (s *Sim) drawSkews() {
	s.skew = s.skew[:0]
	for range s.cfg.Replicas {
		s.skew = append(s.skew, time.Duration(s.rng.Int64N(int64(2*s.cfg.MaxSkew)+1))-s.cfg.MaxSkew)
	}
}

func (s *Sim) newReplica(i int) *replica {
	r := &replica{clk: clock.NewVirtual(s.now.Add(s.skew[i]))}
	r.w = timewheel.New(timewheel.WithClock(r.clk), timewheel.WithExecutor(timewheel.Inline()))
	opts := append([]cron.Option{cron.WithWheel(r.w), cron.WithInline(), cron.WithLocation(time.UTC), cron.WithClaimer(s.claimer),
		cron.WithPanicHandler(func(_ string, v any) { panic(v) })}, s.cfg.Options...)
	r.s = cron.New(opts...)
	return r
}

func (s *Sim) stop() {
	for _, r := range s.reps {
		r.s.Stop(context.Background())
		r.w.Close()
	}
}

// notNil panics if s is nil, naming fn, the method called.
func (s *Sim) notNil(fn string) {
	if s == nil {
		panic("claimtest: " + fn + " called on a nil *Sim")
	}
}

// enter panics if s is nil or a zero Sim, or if a run of it is going on: its
// OnRun called fn.
func (s *Sim) enter(fn string) {
	s.notNil(fn)
	switch {
	case s.t == nil:
		panic(fmt.Sprintf("claimtest: %s called on a zero Sim; make one with New", fn))
	case s.moving:
		panic(fmt.Sprintf("claimtest: %s called from OnRun; call it after RunUntil returns", fn))
	}
}

// Add adds the job name on spec to every replica; each run is recorded.
// Add panics on a zero Sim and when called from OnRun.
func (s *Sim) Add(name, spec string, opts ...cron.JobOption) {
	s.enter("Add")
	s.t.Helper()
	s.jobs = append(s.jobs, simJob{name, spec, opts})
	for i, r := range s.reps {
		s.addTo(i, r, s.jobs[len(s.jobs)-1])
	}
}

func (s *Sim) addTo(i int, r *replica, j simJob) {
	s.t.Helper()
	clk := r.clk
	_, err := r.s.Add(j.name, j.spec, func(_ context.Context, at time.Time) {
		s.mu.Lock()
		s.runs[j.name] = append(s.runs[j.name], Record{At: at, Replica: i, Clock: clk.Now()})
		s.mu.Unlock()
		if s.cfg.OnRun != nil {
			s.cfg.OnRun(i, j.name, at)
		}
	}, j.opts...)
	if err != nil {
		s.t.Fatalf("claimtest: replica %d: %v", i, err)
	}
}

// Now returns the true time.
func (s *Sim) Now() time.Time {
	s.notNil("Now")
	return s.now
}

// Scheduler returns replica i's scheduler. It panics unless 0 <= i <
// Config.Replicas.
func (s *Sim) Scheduler(i int) *cron.Scheduler { return s.replica("Scheduler", i).s }

// Wheel returns replica i's wheel, on its virtual clock. It panics unless
// 0 <= i < Config.Replicas.
func (s *Sim) Wheel(i int) *timewheel.Wheel { return s.replica("Wheel", i).w }

func (s *Sim) replica(fn string, i int) *replica {
	s.notNil(fn)
	if i < 0 || i >= len(s.reps) {
		panic(fmt.Sprintf("claimtest: %s(%d) of a Sim of %d replicas", fn, i, len(s.reps)))
	}
	return s.reps[i]
}

// RunUntil moves the true time forward to end, and every replica's clock
// with it, running what falls due in the order of the true time. An end
// before Now moves nothing. RunUntil panics on a zero Sim and when called
// from OnRun.
func (s *Sim) RunUntil(end time.Time) {
	s.enter("RunUntil")
	s.moving = true
	defer func() { s.moving = false }()
	for {
		s.advanceDue()
		t := end
		if b := s.period.Add(s.cfg.SkewPeriod); b.Before(t) {
			t = b
		}
		for i, r := range s.reps {
			if d, ok := r.clk.Next(); ok {
				if due := d.Add(-s.skew[i]); due.Before(t) {
					t = due
				}
			}
		}
		if !t.After(s.now) {
			break
		}
		s.now = t
		if t.Equal(s.period.Add(s.cfg.SkewPeriod)) {
			s.period = t
			s.drawSkews()
		}
	}
	for i, r := range s.reps {
		if c := s.now.Add(s.skew[i]); c.After(r.clk.Now()) {
			r.clk.AdvanceTo(c)
		}
	}
}

// advanceDue moves the clock of every replica that has a timer due by the
// true time, in random order.
func (s *Sim) advanceDue() {
	s.rng.Shuffle(len(s.order), func(a, b int) { s.order[a], s.order[b] = s.order[b], s.order[a] })
	for _, i := range s.order {
		r := s.reps[i]
		c := s.now.Add(s.skew[i])
		if d, ok := r.clk.Next(); ok && !d.After(c) {
			r.clk.AdvanceTo(c) // d > the clock's now: it has not passed c
		}
	}
}

// Restart takes a snapshot of every replica, stops it, lets down pass in
// true time with no replica running, and starts every replica anew, on a
// new clock and with a new scheduler and the same jobs, restored from
// its snapshot: the run that fell due first while they were down is
// caught up, once in total if the claimer holds. Restart panics if down is
// negative, on a zero Sim and when called from OnRun.
func (s *Sim) Restart(down time.Duration) {
	s.enter("Restart")
	if down < 0 {
		panic(fmt.Sprintf("claimtest: Restart called with negative down time %v", down))
	}
	s.t.Helper()
	snaps := make([]bytes.Buffer, len(s.reps))
	for i, r := range s.reps {
		if err := r.s.Snapshot(&snaps[i]); err != nil {
			s.t.Fatalf("claimtest: replica %d: %v", i, err)
		}
	}
	s.stop()
	s.now = s.now.Add(down)
	s.period = s.now
	s.drawSkews()
	for i := range s.reps {
		r := s.newReplica(i)
		s.reps[i] = r
		for _, j := range s.jobs {
			s.addTo(i, r, j)
		}
		if err := r.s.Restore(&snaps[i]); err != nil {
			s.t.Fatalf("claimtest: replica %d: %v", i, err)
		}
	}
}

// Runs returns the runs of job so far, in the order they happened.
func (s *Sim) Runs(job string) []Record {
	s.notNil("Runs")
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Record(nil), s.runs[job]...)
}

// Tally counts how the runs of a job fell on the instants it should have
// run at.
type Tally struct {
	Instants   int   // instants it should have run at
	Once       int   // of those, instants that ran exactly once
	More       int   // instants that ran more than once
	Never      int   // instants that did not run
	Stray      int   // runs at instants not among them
	PerReplica []int // runs per replica, stray ones too
}

// Tally counts the runs of job against want, the instants at which it
// should have run once each.
func (s *Sim) Tally(job string, want []time.Time) Tally {
	s.notNil("Tally")
	tl := Tally{Instants: len(want), PerReplica: make([]int, len(s.reps))}
	n := map[int64]int{}
	for _, at := range want {
		n[at.UnixNano()] = 0
	}
	for _, r := range s.Runs(job) {
		tl.PerReplica[r.Replica]++
		k := r.At.UnixNano()
		if _, ok := n[k]; !ok {
			tl.Stray++
			continue
		}
		n[k]++
	}
	for _, c := range n {
		switch {
		case c == 0:
			tl.Never++
		case c == 1:
			tl.Once++
		default:
			tl.More++
		}
	}
	return tl
}

// Exact reports whether every instant ran exactly once and nothing else
// ran.
func (tl Tally) Exact() bool {
	return tl.Once == tl.Instants && tl.More == 0 && tl.Never == 0 && tl.Stray == 0
}

// String returns the tally in one line, as tests log it.
func (tl Tally) String() string {
	return fmt.Sprintf("%d instants: %d ran exactly once, %d more than once, %d never; %d runs at other instants; runs per replica %v",
		tl.Instants, tl.Once, tl.More, tl.Never, tl.Stray, tl.PerReplica)
}
