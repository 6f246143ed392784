package cron_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	rcron "github.com/robfig/cron/v3"

	"github.com/timewheel/timewheel/cron"
	"github.com/timewheel/timewheel/cron/claimtest"
)

// memClaims is a Claimer for schedulers in one process: the set of runs
// claimed so far, under a lock. It never forgets a claim.
type memClaims struct {
	mu      sync.Mutex
	claimed map[string]bool // guarded by mu
}

func newMemClaims() *memClaims { return &memClaims{claimed: map[string]bool{}} }

func (m *memClaims) Claim(_ context.Context, job string, at time.Time) (bool, error) {
	key := job + " " + at.UTC().Format(time.RFC3339Nano)
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.claimed[key] {
		return false, nil
	}
	m.claimed[key] = true
	return true, nil
}

// flaky wraps a Claimer with a switch that makes every claim fail, as a
// store that is down does.
type flaky struct {
	cron.Claimer
	mu   sync.Mutex
	down bool // guarded by mu
}

var errDown = errors.New("store down")

func (f *flaky) Claim(ctx context.Context, job string, at time.Time) (bool, error) {
	f.mu.Lock()
	down := f.down
	f.mu.Unlock()
	if down {
		return false, errDown
	}
	return f.Claimer.Claim(ctx, job, at)
}

func (f *flaky) set(down bool) {
	f.mu.Lock()
	f.down = down
	f.mu.Unlock()
}

func TestClaimSuite(t *testing.T) {
	claimtest.Run(t, func(*testing.T) cron.Claimer { return newMemClaims() })
}

// claimErrors records what a claim error handler is given.
type claimErrors struct {
	mu   sync.Mutex
	errs []string // guarded by mu
}

func (c *claimErrors) handle(job string, at time.Time, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.errs = append(c.errs, fmt.Sprintf("%s %s: %v", job, at.Format("15:04"), err))
}

func (c *claimErrors) take() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.errs
	c.errs = nil
	return e
}

// While the store is down, a job under AtMostOnce (the scheduler's
// default) skips its runs and one under AtLeastOnce (its own option) runs
// them; each failed claim reaches the handler and the stats; once the
// store is back, runs are claimed again, and a second scheduler finds
// them taken.
func TestClaimPolicy(t *testing.T) {
	from := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	store := &flaky{Claimer: newMemClaims()}
	var handled claimErrors
	f := newFixture(t, from, cron.WithClaimer(store), cron.WithClaimErrorHandler(handled.handle))
	other := newFixture(t, from, cron.WithClaimer(store)) // a replica on its own clock
	skip := f.add("skip", "* * * * *")
	run := f.add("run", "* * * * *", cron.OnClaimFailure(cron.AtLeastOnce))
	other.add("skip", "* * * * *")
	other.add("run", "* * * * *")

	f.clk.Advance(time.Minute) // 0:01, claimed here
	store.set(true)
	f.clk.Advance(2 * time.Minute) // 0:02 and 0:03, store down
	store.set(false)
	f.clk.Advance(time.Minute) // 0:04
	other.clk.Advance(4 * time.Minute)

	minute := func(n int) time.Time { return from.Add(time.Duration(n) * time.Minute) }
	wantTimes(t, "skip", skip.take(), []time.Time{minute(1), minute(4)})
	wantTimes(t, "run", run.take(), []time.Time{minute(1), minute(2), minute(3), minute(4)})
	if got, want := strings.Join(handled.take(), "; "), "skip 00:02: store down; run 00:02: store down; skip 00:03: store down; run 00:03: store down"; got != want {
		t.Errorf("handler got %q, want %q", got, want)
	}
	j, _ := f.s.Job("skip")
	if st := j.Stats(); st != (cron.Stats{Runs: 2, ClaimErrors: 2}) {
		t.Errorf("skip: stats %+v", st)
	}
	j, _ = f.s.Job("run")
	if st := j.Stats(); st != (cron.Stats{Runs: 4, ClaimErrors: 2}) {
		t.Errorf("run: stats %+v", st)
	}
	if st := f.s.Stats().Stats; st != (cron.Stats{Runs: 6, ClaimErrors: 4}) {
		t.Errorf("scheduler: stats %+v", st)
	}
	// The other replica lost 0:01 and 0:04 of each job, and claimed and ran
	// 0:02 and 0:03, which no claim had named: under AtLeastOnce, "run"
	// ran those twice in all.
	if st := other.s.Stats().Stats; st != (cron.Stats{Runs: 4, ClaimsLost: 4}) {
		t.Errorf("other replica: stats %+v", st)
	}
}

// blockingClaims is a store that does not answer: each claim waits for
// its context.
type blockingClaims struct{ started chan string }

func (b blockingClaims) Claim(ctx context.Context, job string, at time.Time) (bool, error) {
	b.started <- job
	<-ctx.Done()
	return false, ctx.Err()
}

// A claim is made on the run's goroutine: a store that does not answer
// holds up neither the wheel's driver nor the other jobs, and after the
// claim timeout (real time, here the bubble's) the run's policy decides.
// Stop waits for a run waiting on its claim.
func TestClaimTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		from := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		store := blockingClaims{started: make(chan string, 10)}
		var handled claimErrors
		f := newGoroutineFixture(t, from, cron.WithClaimer(store), cron.WithClaimErrorHandler(handled.handle),
			cron.WithClaimTimeout(5*time.Second))
		ran := make(chan time.Time, 10)
		record := func(_ context.Context, at time.Time) { ran <- at }
		f.s.Add("skip", "@every 1m", record)
		f.s.Add("run", "@every 1m", record, cron.OnClaimFailure(cron.AtLeastOnce))
		f.clk.Advance(time.Minute) // returns with both claims pending
		<-store.started
		<-store.started
		start := time.Now()
		synctest.Wait()
		if len(ran) != 0 || len(handled.take()) != 0 {
			t.Fatal("a run went on before its claim returned")
		}
		if err := f.s.Stop(context.Background()); err != nil {
			t.Fatal(err)
		}
		if waited := time.Since(start); waited != 5*time.Second {
			t.Errorf("claims gave up after %v, want the 5s timeout", waited)
		}
		if at := <-ran; !at.Equal(from.Add(time.Minute)) || len(ran) != 0 {
			t.Errorf("ran %v and %d more, want the AtLeastOnce job's run at 0:01 only", at, len(ran))
		}
		errs := handled.take()
		if len(errs) != 2 || !strings.HasSuffix(errs[0], "context deadline exceeded") {
			t.Errorf("handler got %q", errs)
		}
		if st := f.s.Stats().Stats; st != (cron.Stats{Runs: 1, ClaimErrors: 2}) {
			t.Errorf("stats %+v", st)
		}
	})
}

// A claim cut short because Stop gave up waiting starts no run, even
// under AtLeastOnce (here the scheduler's policy).
func TestClaimCutShortByStop(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := blockingClaims{started: make(chan string, 10)}
		var handled claimErrors
		f := newGoroutineFixture(t, time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), cron.WithClaimer(store),
			cron.WithClaimPolicy(cron.AtLeastOnce), cron.WithClaimErrorHandler(handled.handle))
		ran := make(chan time.Time, 1)
		f.s.Add("job", "@every 1m", func(_ context.Context, at time.Time) { ran <- at })
		f.clk.Advance(time.Minute)
		<-store.started
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if err := f.s.Stop(ctx); !errors.Is(err, context.Canceled) {
			t.Fatalf("Stop with a claim pending and a done context: %v", err)
		}
		if err := f.s.Stop(context.Background()); err != nil {
			t.Fatal(err)
		}
		if len(ran) != 0 {
			t.Error("the run started after Stop gave up")
		}
		if st := f.s.Stats().Stats; st != (cron.Stats{ClaimErrors: 1}) || len(handled.take()) != 1 {
			t.Errorf("stats %+v", st)
		}
	})
}

// With a claimer, "@every d" runs on the grid of multiples of d since the
// Unix epoch, whenever the job was added; without one, every d from when
// it was added.
func TestEveryOnGrid(t *testing.T) {
	from := time.Date(2026, 1, 1, 0, 3, 27, 0, time.UTC)
	hm := func(h, m int) time.Time { return time.Date(2026, 1, 1, h, m, 0, 0, time.UTC) }
	for _, tc := range []struct {
		name  string
		opts  []cron.Option
		every []time.Time // "@every 10m"
		sched []time.Time // AddSchedule(rcron.Every(25 * time.Minute))
	}{
		{"claimer", []cron.Option{cron.WithClaimer(newMemClaims())},
			[]time.Time{hm(0, 10), hm(0, 20), hm(0, 30), hm(0, 40), hm(0, 50)},
			[]time.Time{hm(0, 15), hm(0, 40)}}, // midnight is 1767225600 s, 10 min past a multiple of 25 min
		{"none", nil,
			[]time.Time{from.Add(10 * time.Minute), from.Add(20 * time.Minute), from.Add(30 * time.Minute), from.Add(40 * time.Minute), from.Add(50 * time.Minute)},
			[]time.Time{from.Add(25 * time.Minute), from.Add(50 * time.Minute)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, from, tc.opts...)
			every := f.add("every", "@every 10m")
			r := &recorder{clk: f.clk, exact: true}
			if _, err := f.s.AddSchedule("sched", rcron.Every(25*time.Minute), r.run); err != nil {
				t.Fatal(err)
			}
			f.clk.AdvanceTo(hm(0, 55))
			wantTimes(t, "@every 10m", every.take(), tc.every)
			wantTimes(t, "Every(25m)", r.take(), tc.sched)
		})
	}
}

// With a claimer, a sub-second "@every d" runs on the multiples of d since
// the Unix epoch too, whenever the job was added, to the nanosecond.
func TestEverySubSecondOnGrid(t *testing.T) {
	from := time.Date(2026, 1, 1, 0, 3, 27, 123456789, time.UTC)
	for _, ms := range []int64{1500, 1300, 700} {
		spec := fmt.Sprintf("@every %dms", ms)
		t.Run(spec, func(t *testing.T) {
			f := newFixture(t, from, cron.WithClaimer(newMemClaims()))
			r := &recorder{clk: f.clk} // runs fire at the wheel's ticks, up to 1ms after at
			if _, err := f.s.Add("every", spec, r.run); err != nil {
				t.Fatal(err)
			}
			f.clk.Advance(10 * time.Second)
			var want []time.Time
			for k := from.UnixMilli()/ms + 1; k*ms <= from.Add(10*time.Second).UnixMilli(); k++ {
				want = append(want, time.UnixMilli(k*ms).UTC())
			}
			wantTimes(t, spec, r.take(), want)
		})
	}
}

// A scheduler's stats add up its jobs', removed ones included.
func TestSchedulerStatsCountClaims(t *testing.T) {
	from := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	claims := newMemClaims()
	f := newFixture(t, from, cron.WithClaimer(claims))
	f.add("a", "* * * * *")
	f.add("b", "*/2 * * * *")
	claims.Claim(context.Background(), "a", from.Add(2*time.Minute)) // another replica's
	f.clk.Advance(4 * time.Minute)
	f.s.Remove("a")
	f.clk.Advance(4 * time.Minute)
	if st := f.s.Stats().Stats; st != (cron.Stats{Runs: 3 + 4, ClaimsLost: 1}) {
		t.Errorf("stats %+v, want a's 3 runs and 1 lost, b's 4 runs", st)
	}
}
