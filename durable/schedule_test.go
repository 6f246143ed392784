package durable_test

import (
	"context"
	"errors"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/timewheel/timewheel/cron"
	"github.com/timewheel/timewheel/durable"
)

// starts records the starts of a schedule's runs, by instant.
type starts struct {
	mu      sync.Mutex
	at      map[time.Time][]time.Time // instant -> when each start began
	running int
	most    int // runs at once, at the most
}

// handler returns a handler that records each run's start and takes d.
func (s *starts) handler(d time.Duration) durable.Handler {
	s.at = map[time.Time][]time.Time{}
	return func(ctx context.Context, j durable.Job) error {
		now := time.Now()
		_, at, ok := durable.ParseRunID(j.ID)
		if !ok {
			return errors.New("not a run: " + j.ID)
		}
		s.mu.Lock()
		s.at[at] = append(s.at[at], now)
		s.running++
		s.most = max(s.most, s.running)
		s.mu.Unlock()
		time.Sleep(d)
		s.mu.Lock()
		s.running--
		s.mu.Unlock()
		return nil
	}
}

// instants returns the instants run, in order.
func (s *starts) instants() []time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []time.Time
	for t := range s.at {
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Before(out[j]) })
	return out
}

// A schedule on "@every 200ms" runs each instant once, never before it,
// with each run's job made ahead by the claim of the one before; Upsert
// again changes nothing.
func TestPeriodicRunsEachInstant(t *testing.T) {
	srv := startRedis(t)
	rdb := newClient(t, srv.Addr)
	var s starts
	q := newQueue(t, rdb, durable.WithHandler("tick", s.handler(0)))
	ctx := context.Background()
	p := durable.Periodic{Name: "tick:fast", Spec: "@every 200ms", Kind: "tick"}
	if ok, err := q.Schedules().Upsert(ctx, p); !ok || err != nil {
		t.Fatal(ok, err)
	}
	if ok, err := q.Schedules().Upsert(ctx, p); ok || err != nil {
		t.Fatalf("Upsert again: %v, %v; want false, nil", ok, err)
	}
	waitFor(t, 10*time.Second, "8 runs", func() bool { return len(s.instants()) >= 8 })
	got := s.instants()
	for i, at := range got {
		if at.UnixMilli()%200 != 0 {
			t.Errorf("instant %v not on the 200ms grid", at)
		}
		if i > 0 && at.Sub(got[i-1]) != 200*time.Millisecond {
			t.Errorf("instants %v then %v: one missing", got[i-1], at)
		}
		s.mu.Lock()
		runs := s.at[at]
		s.mu.Unlock()
		if len(runs) != 1 || runs[0].Before(at) {
			t.Errorf("instant %v started at %v: want once, never early", at, runs)
		}
	}
	info, ok, err := q.Schedules().Get(ctx, p.Name)
	if !ok || err != nil || info.Spec != p.Spec || info.Kind != "tick" || info.Counts.Runs < 8 || !info.Next.After(got[len(got)-1]) {
		t.Errorf("Get = %+v, %v, %v", info, ok, err)
	}
	if _, err := q.Schedules().Upsert(ctx, durable.Periodic{Name: "x", Spec: "61 * * * *", Kind: "tick"}); !errors.Is(err, cron.ErrSpec) {
		t.Errorf("Upsert of a bad spec: %v, want cron.ErrSpec", err)
	}
}

// missedBy upserts p with no worker up, waits 1.1s (five instants of
// "@every 200ms" pass), then starts a worker, and returns the instants
// it ran within 1.5s of its start, how many of them started later than
// the grace (and 50ms), and the schedule's counts.
func missedBy(t *testing.T, p durable.Periodic) ([]time.Time, int, durable.ScheduleCounts) {
	srv := startRedis(t)
	rdb := newClient(t, srv.Addr)
	ctx := context.Background()
	c := newQueue(t, rdb, durable.WithKinds("tick"))
	if _, err := c.Schedules().Upsert(ctx, p); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1100 * time.Millisecond)
	var s starts
	newQueue(t, rdb, durable.WithHandler("tick", s.handler(0)))
	time.Sleep(1500 * time.Millisecond)
	info, _, err := c.Schedules().Get(ctx, p.Name)
	if err != nil {
		t.Fatal(err)
	}
	got, late := s.instants(), 0
	s.mu.Lock()
	for _, at := range got {
		if s.at[at][0].Sub(at) > p.Grace+50*time.Millisecond {
			late++
		}
	}
	s.mu.Unlock()
	t.Logf("ran %v, %d late; counts %+v", got, late, info.Counts)
	return got, late, info.Counts
}

// Runs whose instants passed with no worker up: the policy decides.
func TestPeriodicMissed(t *testing.T) {
	p := durable.Periodic{Name: "m", Spec: "@every 200ms", Kind: "tick", Grace: 100 * time.Millisecond}
	t.Run("skip", func(t *testing.T) {
		p := p
		p.Missed = durable.MissedSkip
		if _, late, n := missedBy(t, p); late != 0 || n.Missed < 4 {
			t.Errorf("%d late runs, counts %+v: want none, 4 or more missed", late, n)
		}
	})
	t.Run("run-last", func(t *testing.T) {
		if _, late, n := missedBy(t, p); late != 1 || n.Missed < 3 {
			t.Errorf("%d late runs, counts %+v: want one, 3 or more missed", late, n)
		}
	})
	t.Run("run-all", func(t *testing.T) {
		p := p
		p.Missed, p.CatchUp = durable.MissedRunAll, 3
		got, late, n := missedBy(t, p)
		// The runs made up run one after another; an on-time run that
		// comes while the last of them still runs is skipped as
		// overlapping (OverlapSkip), and counted: no other gap.
		gaps := int64(0)
		for i := 2; i < len(got); i++ {
			gaps += int64(got[i].Sub(got[i-1])/(200*time.Millisecond)) - 1
		}
		if gaps > n.Skipped {
			t.Errorf("instants %v: %d missing, %d of them skipped", got, gaps, n.Skipped)
		}
		// The first missed run's job existed; the 3 latest are made up.
		if late < 3 || late > 4 || n.Missed < 1 {
			t.Errorf("%d late runs, counts %+v: want 3 or 4, the others counted", late, n)
		}
	})
}

// Runs of 450ms on "@every 200ms": the overlap policy decides.
func TestPeriodicOverlap(t *testing.T) {
	for _, tc := range []struct {
		o    durable.Overlap
		most int
	}{{durable.OverlapSkip, 1}, {durable.OverlapDelay, 1}, {durable.OverlapAllow, 3}} {
		t.Run(tc.o.String(), func(t *testing.T) {
			srv := startRedis(t)
			rdb := newClient(t, srv.Addr)
			var s starts
			q := newQueue(t, rdb, durable.WithHandler("tick", s.handler(450*time.Millisecond)))
			ctx := context.Background()
			p := durable.Periodic{Name: "o", Spec: "@every 200ms", Kind: "tick", Overlap: tc.o, Grace: time.Hour}
			if _, err := q.Schedules().Upsert(ctx, p); err != nil {
				t.Fatal(err)
			}
			time.Sleep(2 * time.Second)
			info, _, _ := q.Schedules().Get(ctx, "o")
			s.mu.Lock()
			most := s.most
			s.mu.Unlock()
			n := info.Counts
			t.Logf("%d runs, at most %d at once; counts %+v", len(s.instants()), most, n)
			switch {
			case tc.o != durable.OverlapAllow && most != 1, tc.o == durable.OverlapAllow && most < 2:
				t.Errorf("at most %d runs at once", most)
			case tc.o == durable.OverlapSkip && n.Skipped < 3, tc.o == durable.OverlapDelay && n.Delayed < 3:
				t.Errorf("counts %+v", n)
			}
			if tc.o == durable.OverlapDelay {
				got := s.instants()
				for i := 1; i < len(got); i++ {
					if got[i].Sub(got[i-1]) != 200*time.Millisecond {
						t.Errorf("delayed: instants %v then %v, one missing", got[i-1], got[i])
					}
				}
			}
		})
	}
}

// Pause stops the runs; Resume brings them back with the missed ones
// decided by the policy (run last: one); Remove deletes the schedule and
// its next run.
func TestPeriodicPauseResumeRemove(t *testing.T) {
	srv := startRedis(t)
	rdb := newClient(t, srv.Addr)
	var s starts
	q := newQueue(t, rdb, durable.WithHandler("tick", s.handler(0)))
	ctx := context.Background()
	sc := q.Schedules()
	p := durable.Periodic{Name: "p", Spec: "@every 100ms", Kind: "tick", Grace: 50 * time.Millisecond}
	if _, err := sc.Upsert(ctx, p); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 5*time.Second, "a run", func() bool { return len(s.instants()) > 0 })
	if ok, err := sc.Pause(ctx, "p"); !ok || err != nil {
		t.Fatal(ok, err)
	}
	time.Sleep(150 * time.Millisecond) // a run held ahead comes due and is dropped
	paused := len(s.instants())
	time.Sleep(600 * time.Millisecond)
	if got := len(s.instants()); got != paused {
		t.Errorf("%d runs while paused", got-paused)
	}
	if info, _, _ := sc.Get(ctx, "p"); !info.Paused {
		t.Errorf("Get: not paused: %+v", info)
	}
	if ok, err := sc.Resume(ctx, "p"); !ok || err != nil {
		t.Fatal(ok, err)
	}
	waitFor(t, 5*time.Second, "runs after Resume", func() bool { return len(s.instants()) >= paused+3 })
	info, _, _ := sc.Get(ctx, "p")
	if info.Paused || info.Counts.Missed < 4 {
		t.Errorf("after Resume: %+v, want unpaused, 4 or more missed", info)
	}
	list, err := sc.List(ctx)
	if err != nil || len(list) != 1 || list[0].Name != "p" {
		t.Errorf("List = %+v, %v", list, err)
	}
	if ok, err := sc.Remove(ctx, "p"); !ok || err != nil {
		t.Fatal(ok, err)
	}
	removed := time.Now()
	// The runs left are those a worker holds within 100 ms of their
	// instants, which Remove leaves to it: each finds the schedule gone at
	// its instant, and is acked.
	for _, id := range rdb.HKeys(ctx, "{durable}:job").Val() {
		if _, at, ok := durable.ParseRunID(id); !ok || at.After(removed.Add(100*time.Millisecond)) {
			t.Errorf("job %s left after Remove at %v: not a run held within 100 ms of its instant", id, removed)
		}
	}
	waitFor(t, 5*time.Second, "the held runs acked", func() bool { return rdb.HLen(ctx, "{durable}:job").Val() == 0 })
	if list, _ := sc.List(ctx); len(list) != 0 {
		t.Errorf("List after Remove = %+v", list)
	}
}

// Runs of "@every 5ms" whose handler returns at once: under OverlapSkip
// a run is not skipped because the ack of the run before it waits for
// others (10 ms): a run's ack goes at once when its next instant is that
// near. With the ack lingering, 171 of 277 instants were skipped.
func TestPeriodicFastSkipsNone(t *testing.T) {
	srv := startRedis(t)
	rdb := newClient(t, srv.Addr)
	var s starts
	q := newQueue(t, rdb, durable.WithHandler("tick", s.handler(0)))
	ctx := context.Background()
	if _, err := q.Schedules().Upsert(ctx, durable.Periodic{Name: "fast", Spec: "@every 5ms", Kind: "tick"}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 20*time.Second, "100 runs", func() bool { return len(s.instants()) >= 100 })
	info, _, err := q.Schedules().Get(ctx, "fast")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("counts %+v", info.Counts)
	if n := info.Counts; n.Skipped*4 > n.Runs {
		t.Errorf("counts %+v: more than one run in 4 skipped", n)
	}
}
