package cron_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/timewheel/timewheel/cron"
)

// Every pair of job options, and every pair of scheduler options, tried
// together on the virtual clock through one story: half an hour on time,
// a suspend of 45 minutes, an hour in which every fifth run takes 90
// seconds (so that runs overlap), and another hour. Each pair is held to
// the options' docs: nothing crashes; no run comes before a start date,
// after a stop date or past a limit; every time of the schedule that
// falls due is run, skipped by a policy or counted as missed; and
// NextRuns names the times that then run.

// pairJob is a job option as the pairs test knows it: the option, and
// what it promises.
type pairJob struct {
	name    string
	opt     cron.JobOption
	spec    string // a schedule in place of "@every 1m"
	start   time.Time
	stop    time.Time
	limit   int
	jitter  time.Duration
	fromEnd bool
}

var (
	pairStart = jan5.Add(10 * time.Minute)
	pairStop  = jan5.Add(150 * time.Minute)
	pairOnce  = jan5.Add(20 * time.Minute)
)

var pairJobs = []pairJob{
	{name: "jitter", opt: cron.WithJitter(20 * time.Second), jitter: 20 * time.Second},
	{name: "long jitter", opt: cron.WithJitter(5 * time.Minute), jitter: 5 * time.Minute},
	{name: "start", opt: cron.WithStartAt(pairStart), start: pairStart},
	{name: "stop", opt: cron.WithStopAt(pairStop), stop: pairStop},
	{name: "limit", opt: cron.WithLimitRuns(50), limit: 50},
	{name: "from completion", opt: cron.WithIntervalFromCompletion(), fromEnd: true},
	{name: "run once", opt: cron.OnMissed(cron.RunOnce)},
	{name: "skip missed", opt: cron.OnMissed(cron.SkipMissed)},
	{name: "run all", opt: cron.OnMissed(cron.RunAll)},
	{name: "grace", opt: cron.WithGrace(10 * time.Minute)},
	{name: "queue", opt: cron.WithOverlap(cron.Queue)},
	{name: "allow", opt: cron.WithOverlap(cron.Allow)},
	{name: "zone", opt: cron.InZone("America/New_York")},
	{name: "skip skipped", opt: cron.OnSkippedTime(cron.SkipSkipped)},
	{name: "claim policy", opt: cron.OnClaimFailure(cron.AtLeastOnce)},
	{name: "calendar", spec: "*/2 * * * *"},
	{name: "one time", spec: "@at " + pairOnce.Format(time.RFC3339)},
}

// pairRuns records a job's runs; every fifth run while slow is set takes
// 90 seconds of the clock, which it advances itself (inline runs run on
// the goroutine that advances the clock, which a run may advance).
type pairRuns struct {
	mu   sync.Mutex
	f    *fixture
	at   []time.Time
	n    int
	slow bool
}

func (r *pairRuns) run(_ context.Context, at time.Time) {
	r.mu.Lock()
	r.at = append(r.at, at)
	r.n++
	slow := r.slow && r.n%5 == 0
	r.mu.Unlock()
	if slow {
		r.f.clk.Advance(90 * time.Second)
	}
}

func (r *pairRuns) setSlow(slow bool) {
	r.mu.Lock()
	r.slow = slow
	r.mu.Unlock()
}

func (r *pairRuns) ats() []time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.at)
}

// pairStory runs the story for the jobs of f, recorded by runs; it
// returns each job's NextRuns taken at the start, and the clock's time
// after the half hour on time.
func pairStory(f *fixture, runs map[string]*pairRuns) (onTimeEnd time.Time) {
	f.clk.Advance(30 * time.Minute)
	onTimeEnd = f.clk.Now()
	f.clk.Suspend(45 * time.Minute)
	f.clk.Advance(2 * time.Minute)
	for _, r := range runs {
		r.setSlow(true)
	}
	f.clk.Advance(time.Hour)
	for _, r := range runs {
		r.setSlow(false)
	}
	f.clk.Advance(time.Hour)
	return onTimeEnd
}

// pairDue returns how many times of spec, on its grid from jan5, fall
// in the job's window up to before (or through now if before is zero),
// capped by its limit.
func pairDue(t *testing.T, spec string, start, stop time.Time, limit int, before, now time.Time) int {
	t.Helper()
	sched, err := cron.Parse(spec, time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for at := sched.Next(jan5); !at.IsZero(); at = sched.Next(at) {
		if (!before.IsZero() && !at.Before(before)) || (before.IsZero() && at.After(now)) {
			break
		}
		if !stop.IsZero() && at.After(stop) {
			break
		}
		if start.IsZero() || !at.Before(start) {
			n++
		}
	}
	if limit > 0 {
		n = min(n, limit)
	}
	return n
}

// checkPairRuns holds a job's runs to its options: none before the
// start, after the stop or past the limit, none twice, each a time of
// nr (NextRuns at the start) or, counted from completion, a period
// after the one before.
func checkPairRuns(t *testing.T, p pairJob, at []time.Time, nr []time.Time, onTimeEnd time.Time) {
	t.Helper()
	seen := map[time.Time]bool{}
	for i, a := range at {
		switch {
		case seen[a]:
			t.Fatalf("run at %v twice", a)
		case !p.start.IsZero() && a.Before(p.start):
			t.Fatalf("run at %v, before the start %v", a, p.start)
		case !p.stop.IsZero() && a.After(p.stop):
			t.Fatalf("run at %v, after the stop %v", a, p.stop)
		case p.fromEnd && i > 0 && a.Sub(at[i-1]) < time.Minute:
			t.Fatalf("runs at %v and %v, counted from completion, less than the period apart", at[i-1], a)
		}
		seen[a] = true
	}
	if p.limit > 0 && len(at) > p.limit {
		t.Fatalf("%d runs, past the limit %d", len(at), p.limit)
	}
	// NextRuns, taken at the start, names the runs of the half hour on
	// time, in order; with a jitter no longer than the period, all of
	// those whose delay has passed. Counted from completion, it names
	// the times of runs without a delay.
	if p.fromEnd && p.jitter > 0 {
		return
	}
	var onTime []time.Time
	for _, a := range at {
		if !a.After(onTimeEnd) {
			onTime = append(onTime, a)
		}
	}
	i := 0
	for _, a := range onTime {
		for i < len(nr) && nr[i].Before(a) {
			if p.jitter <= time.Minute && !nr[i].After(onTimeEnd.Add(-p.jitter)) {
				t.Fatalf("NextRuns named %v, before the end of the half hour on time, and it did not run (runs %v)", nr[i], onTime)
			}
			i++
		}
		if i == len(nr) || !nr[i].Equal(a) {
			t.Fatalf("run at %v, which NextRuns did not name (NextRuns %v)", a, nr)
		}
		i++
	}
}

// checkPairJob checks what a job did after the story, beyond its runs:
// its counts and its NextRuns now.
func checkPairJob(t *testing.T, f *fixture, j *cron.Job, spec string, p pairJob, runs []time.Time, atMostOnce bool) {
	t.Helper()
	st := j.Stats()
	if st.Panics != 0 || st.Runs != len(runs) {
		t.Fatalf("Stats %+v for %d runs recorded", st, len(runs))
	}
	next := j.Next()
	if nr := j.NextRuns(3); (len(nr) == 0) != next.IsZero() || (len(nr) > 0 && !nr[0].Equal(next)) {
		t.Fatalf("NextRuns(3) %v, Next %v", nr, next)
	}
	if p.fromEnd {
		return // its times are those of its runs' ends
	}
	due := pairDue(t, spec, p.start, p.stop, p.limit, next, f.clk.Now())
	accounted := st.Runs + st.Missed + st.Skipped + st.Limited + st.ClaimsLost
	if atMostOnce {
		accounted += st.ClaimErrors // claims that failed skip the run
	}
	if accounted != due {
		t.Fatalf("%d times fell due (next %v); accounted for %d: %+v", due, next, accounted, st)
	}
}

// merge returns the promises of two job options together.
func (p pairJob) merge(q pairJob) pairJob {
	m := pairJob{name: p.name + "+" + q.name, spec: p.spec + q.spec}
	m.start, m.stop = later(p.start, q.start), p.stop
	if m.stop.IsZero() {
		m.stop = q.stop
	}
	m.limit = max(p.limit, q.limit)
	m.jitter = max(p.jitter, q.jitter)
	m.fromEnd = p.fromEnd || q.fromEnd
	return m
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func TestJobOptionPairs(t *testing.T) {
	for i, p := range pairJobs {
		for _, q := range pairJobs[i:] {
			m := p.merge(q)
			if p.name == q.name {
				m = p
			}
			t.Run(m.name, func(t *testing.T) {
				if p.spec != "" && q.spec != "" && p.name != q.name {
					t.Skip("two schedules")
				}
				spec := "@every 1m"
				if m.spec != "" {
					spec = m.spec
				}
				f := newFixture(t, jan5)
				r := &pairRuns{f: f}
				j, err := f.s.Add("j", spec, r.run, slices.DeleteFunc([]cron.JobOption{p.opt, q.opt}, func(o cron.JobOption) bool { return o == nil })...)
				if m.fromEnd && m.spec != "" {
					if !errors.Is(err, cron.ErrOption) {
						t.Fatalf("from completion on %q: err %v, want ErrOption", spec, err)
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				nr := j.NextRuns(100)
				onTimeEnd := pairStory(f, map[string]*pairRuns{"j": r})
				runs := r.ats()
				checkPairRuns(t, m, runs, nr, onTimeEnd)
				checkPairJob(t, f, j, spec, m, runs, false)
			})
		}
	}
}

// flakyEvery3 is a Claimer whose every third claim fails.
type flakyEvery3 struct {
	mu sync.Mutex
	n  int
	c  cron.Claimer
}

func (f *flakyEvery3) Claim(ctx context.Context, job string, at time.Time) (bool, error) {
	f.mu.Lock()
	f.n++
	fail := f.n%3 == 0
	f.mu.Unlock()
	if fail {
		return false, errDown
	}
	return f.c.Claim(ctx, job, at)
}

// pairSchedulerOption is a scheduler option as the pairs test knows it.
type pairSchedulerOption struct {
	name       string
	opt        func(hooks *hookCount) cron.Option
	atMostOnce bool // a failed claim skips the run
}

// hookCount counts the hooks' calls.
type hookCount struct {
	mu    sync.Mutex
	calls int
}

func (h *hookCount) count() {
	h.mu.Lock()
	h.calls++
	h.mu.Unlock()
}

var pairSchedulerOptions = []pairSchedulerOption{
	{name: "no check", opt: func(*hookCount) cron.Option { return cron.WithWallClockCheck(0) }},
	{name: "check 10s", opt: func(*hookCount) cron.Option { return cron.WithWallClockCheck(10 * time.Second) }},
	{name: "limit wait", opt: func(*hookCount) cron.Option { return cron.WithConcurrencyLimit(1, cron.LimitWait) }},
	{name: "limit skip", opt: func(*hookCount) cron.Option { return cron.WithConcurrencyLimit(1, cron.LimitSkip) }},
	{name: "hooks", opt: func(h *hookCount) cron.Option {
		return cron.WithHooks(cron.Hooks{
			After:      func(string, time.Time, time.Duration) { h.count() },
			AfterError: func(string, time.Time, time.Duration, error) { h.count() },
		})
	}},
	{name: "location", opt: func(*hookCount) cron.Option { return cron.WithLocation(time.FixedZone("UTC+3", 3*3600)) }},
	{name: "logger", opt: func(*hookCount) cron.Option { return cron.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))) }},
	{name: "panic handler", opt: func(*hookCount) cron.Option { return cron.WithPanicHandler(func(string, any) {}) }},
	{name: "claimer", opt: func(*hookCount) cron.Option { return cron.WithClaimer(newMemClaims()) }},
	{name: "flaky claimer", opt: func(*hookCount) cron.Option { return cron.WithClaimer(&flakyEvery3{c: newMemClaims()}) }, atMostOnce: true},
	{name: "claim timeout", opt: func(*hookCount) cron.Option { return cron.WithClaimTimeout(time.Second) }},
	{name: "at least once", opt: func(*hookCount) cron.Option { return cron.WithClaimPolicy(cron.AtLeastOnce) }},
	{name: "claim errors", opt: func(*hookCount) cron.Option {
		return cron.WithClaimErrorHandler(func(string, time.Time, error) {})
	}},
}

// The jobs every scheduler of the pairs runs.
var pairSchedulerJobs = []struct {
	name, spec string
	p          pairJob
	opts       []cron.JobOption
}{
	{"every minute", "@every 1m", pairJob{}, nil},
	{"calendar run all", "*/2 * * * *", pairJob{}, []cron.JobOption{cron.OnMissed(cron.RunAll), cron.WithOverlap(cron.Queue)}},
	{"limited", "@every 1m", pairJob{limit: 20, stop: pairStop}, []cron.JobOption{cron.WithLimitRuns(20), cron.WithStopAt(pairStop)}},
	{"one time", "@at " + pairOnce.Format(time.RFC3339), pairJob{}, nil},
}

func TestSchedulerOptionPairs(t *testing.T) {
	for i, a := range pairSchedulerOptions {
		for _, b := range pairSchedulerOptions[i:] {
			name := a.name + "+" + b.name
			if a.name == b.name {
				name = a.name
			}
			t.Run(name, func(t *testing.T) {
				hooks := new(hookCount)
				f := newFixture(t, jan5, a.opt(hooks), b.opt(hooks))
				atMostOnce := a.atMostOnce || b.atMostOnce
				if atMostOnce && (a.name == "at least once" || b.name == "at least once") {
					atMostOnce = false
				}
				runs := map[string]*pairRuns{}
				jobs := map[string]*cron.Job{}
				nrs := map[string][]time.Time{}
				for _, sj := range pairSchedulerJobs {
					r := &pairRuns{f: f}
					j, err := f.s.Add(sj.name, sj.spec, r.run, sj.opts...)
					if err != nil {
						t.Fatal(err)
					}
					runs[sj.name], jobs[sj.name], nrs[sj.name] = r, j, j.NextRuns(100)
				}
				onTimeEnd := pairStory(f, runs)
				total := 0
				for _, sj := range pairSchedulerJobs {
					t.Run(sj.name, func(t *testing.T) {
						at := runs[sj.name].ats()
						total += len(at)
						if !atMostOnce { // a failed claim skips a run NextRuns named
							checkPairRuns(t, sj.p, at, nrs[sj.name], onTimeEnd)
						}
						checkPairJob(t, f, jobs[sj.name], sj.spec, sj.p, at, atMostOnce)
					})
				}
				if (a.name == "hooks" || b.name == "hooks") && hooks.calls != total {
					t.Fatalf("hooks called %d times for %d runs", hooks.calls, total)
				}
			})
		}
	}
}
