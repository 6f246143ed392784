package cron_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/timewheel/timewheel/cron"
)

var jan5 = time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)

// TestJitter: each run starts within the jitter after its time, never
// before, with at its scheduled time; the delays differ from run to run.
func TestJitter(t *testing.T) {
	f := newFixture(t, jan5)
	r := f.addLate("j", "@every 1m", cron.WithJitter(30*time.Second))
	f.clk.Advance(100*time.Minute + 30*time.Second)
	at, ran := r.take()
	if len(at) != 100 {
		t.Fatalf("%d runs in 100 minutes, want 100", len(at))
	}
	delays := map[time.Duration]bool{}
	for i := range at {
		if !at[i].Equal(jan5.Add(time.Duration(i+1) * time.Minute)) {
			t.Fatalf("run %d at %v, want on the minute", i, at[i])
		}
		d := ran[i].Sub(at[i])
		if d < 0 || d >= 30*time.Second+time.Millisecond { // the wheel's tick
			t.Fatalf("run for %v ran %v after it, want within [0, 30s]", at[i], d)
		}
		delays[d] = true
	}
	if len(delays) < 10 {
		t.Fatalf("%d distinct delays in 100 runs: not random", len(delays))
	}
}

// TestOneTime: a job at an instant runs once, then has no next run; one
// in the past is ErrNever.
func TestOneTime(t *testing.T) {
	f := newFixture(t, jan5)
	nine := jan5.Add(9 * time.Hour)
	r := f.add("spec", "@at 2026-01-05T10:00:00+01:00") // 9:00 UTC
	s := f.addLate("sched", "@every 1h")                // a neighbour
	if _, err := f.s.AddSchedule("at", cron.At(nine.Add(time.Hour)), (&recorder{clk: f.clk, exact: true}).run); err != nil {
		t.Fatal(err)
	}
	f.clk.Advance(48 * time.Hour)
	wantTimes(t, "@at", r.take(), []time.Time{nine})
	if at, _ := s.take(); len(at) != 48 {
		t.Fatalf("neighbour ran %d times", len(at))
	}
	for _, name := range []string{"spec", "at"} {
		if j, _ := f.s.Job(name); !j.Next().IsZero() || j.Stats().Runs != 1 {
			t.Fatalf("%s after its run: next %v, %d runs", name, j.Next(), j.Stats().Runs)
		}
	}
	if _, err := f.s.Add("past", "@at 2026-01-05T09:00:00Z", nop); !errors.Is(err, cron.ErrNever) {
		t.Fatalf("@at in the past: %v, want ErrNever", err)
	}
	if _, err := f.s.Add("bad", "@at tomorrow", nop); !errors.Is(err, cron.ErrSpec) {
		t.Fatalf("@at tomorrow: %v, want ErrSpec", err)
	}
}

// TestStartStopDates: a job runs only from its start date to its stop
// date, both included.
func TestStartStopDates(t *testing.T) {
	f := newFixture(t, jan5)
	day := func(d int) time.Time { return time.Date(2026, 1, d, 9, 0, 0, 0, time.UTC) }
	r := f.add("window", "0 9 * * *", cron.WithStartAt(day(10)), cron.WithStopAt(day(12)))
	f.clk.AdvanceTo(day(20))
	wantTimes(t, "from the 10th to the 12th", r.take(), []time.Time{day(10), day(11), day(12)})
	_, err := f.s.Add("inverted", "0 9 * * *", nop, cron.WithStartAt(day(25)), cron.WithStopAt(day(22)))
	if !errors.Is(err, cron.ErrOption) || err.Error() != `cron: invalid job options: stop date 2026-01-22 09:00:00 +0000 UTC before start date 2026-01-25 09:00:00 +0000 UTC (job "inverted")` {
		t.Fatalf("stop before start: %v", err)
	}
	if _, err := f.s.Add("over", "0 9 * * *", nop, cron.WithStopAt(day(12))); !errors.Is(err, cron.ErrNever) {
		t.Fatalf("stop date past: %v, want ErrNever", err)
	}
}

// TestLimitRuns: a job ends after its limit of runs; a snapshot keeps
// the count, so a restarted process does not run it again.
func TestLimitRuns(t *testing.T) {
	f := newFixture(t, jan5)
	r := f.add("thrice", "@every 1h", cron.WithLimitRuns(3))
	j, _ := f.s.Job("thrice")
	if got := j.NextRuns(5); len(got) != 3 {
		t.Fatalf("NextRuns(5) of a job limited to 3: %v", got)
	}
	f.clk.Advance(150 * time.Minute)
	var buf bytes.Buffer
	if err := f.s.Snapshot(&buf); err != nil {
		t.Fatal(err)
	}
	f.clk.Advance(10 * time.Hour)
	hours := func(n ...int) (ts []time.Time) {
		for _, h := range n {
			ts = append(ts, jan5.Add(time.Duration(h)*time.Hour))
		}
		return ts
	}
	wantTimes(t, "limited to 3", r.take(), hours(1, 2, 3))
	if !j.Next().IsZero() {
		t.Fatalf("Next after the limit: %v", j.Next())
	}

	g := newFixture(t, jan5.Add(150*time.Minute)) // restarted after two runs
	r = g.add("thrice", "@every 1h", cron.WithLimitRuns(3))
	if err := g.s.Restore(&buf); err != nil {
		t.Fatal(err)
	}
	g.clk.Advance(10 * time.Hour)
	wantTimes(t, "restored after two", r.take(), hours(3))
}

// TestIntervalFromCompletion: the period counts from the end of each run,
// however long the run takes; Add refuses it where it cannot apply.
func TestIntervalFromCompletion(t *testing.T) {
	f := newFixture(t, jan5)
	var at []time.Time
	_, err := f.s.Add("slow", "@every 1m", func(_ context.Context, t time.Time) {
		at = append(at, t)
		f.clk.Advance(20 * time.Second) // the run takes 20s
	}, cron.WithIntervalFromCompletion())
	if err != nil {
		t.Fatal(err)
	}
	f.clk.AdvanceTo(jan5.Add(5 * time.Minute))
	sec := func(n int) time.Time { return jan5.Add(time.Duration(n) * time.Second) }
	wantTimes(t, "every minute from the end of the run", at, []time.Time{sec(60), sec(140), sec(220), sec(300)})
	if _, err := f.s.Add("cal", "0 9 * * *", nop, cron.WithIntervalFromCompletion()); !errors.Is(err, cron.ErrOption) {
		t.Fatalf("from completion on a calendar spec: %v, want ErrOption", err)
	}
	g := newFixture(t, jan5, cron.WithClaimer(newMemClaims()))
	if _, err := g.s.Add("claimed", "@every 1m", nop, cron.WithIntervalFromCompletion()); !errors.Is(err, cron.ErrOption) {
		t.Fatalf("from completion with a claimer: %v, want ErrOption", err)
	}
}

// TestSkippedTime: on the night New York skips from 2:00 to 3:00, a job
// at 2:30 runs at 3:00 by default, and not at all with SkipSkipped.
func TestSkippedTime(t *testing.T) {
	ny := zone(t, "America/New_York")
	from := time.Date(2026, 3, 7, 12, 0, 0, 0, ny)
	f := newFixture(t, from)
	change := f.add("change", "30 2 * * *", cron.InZone("America/New_York"))
	skip := f.add("skip", "30 2 * * *", cron.InZone("America/New_York"), cron.OnSkippedTime(cron.SkipSkipped))
	f.clk.AdvanceTo(time.Date(2026, 3, 10, 0, 0, 0, 0, ny))
	day := func(d, h int) time.Time { return time.Date(2026, 3, d, h, 30-30*(h/3), 0, 0, ny) }
	wantTimes(t, "run at change", change.take(), []time.Time{day(8, 3), day(9, 2)})
	wantTimes(t, "skip skipped", skip.take(), []time.Time{day(9, 2)})
}

// TestConcurrencyLimit: with a limit of one run at a time, a run due
// while another job runs waits for it (LimitWait) or is dropped
// (LimitSkip).
func TestConcurrencyLimit(t *testing.T) {
	for _, mode := range []cron.LimitMode{cron.LimitWait, cron.LimitSkip} {
		t.Run(mode.String(), func(t *testing.T) {
			f := newGoroutineFixture(t, jan5, cron.WithConcurrencyLimit(1, mode))
			a, b := newBlocker(), newBlocker()
			if _, err := f.s.Add("a", "@every 1m", a.run); err != nil {
				t.Fatal(err)
			}
			if _, err := f.s.Add("b", "@every 1m", b.run); err != nil {
				t.Fatal(err)
			}
			f.clk.Advance(time.Minute)
			first, second := a, b
			select {
			case <-a.started:
			case <-b.started:
				first, second = b, a
			}
			if st := f.s.Stats(); st.Running != 1 || st.Limited != map[cron.LimitMode]int{cron.LimitWait: 0, cron.LimitSkip: 1}[mode] {
				t.Fatalf("with one run going: %+v", st)
			}
			close(first.release)
			if mode == cron.LimitWait {
				<-second.started
			}
			close(second.release)
			if err := f.s.Stop(context.Background()); err != nil {
				t.Fatal(err)
			}
			if st := f.s.Stats(); st.Runs != map[cron.LimitMode]int{cron.LimitWait: 2, cron.LimitSkip: 1}[mode] {
				t.Fatalf("after: %+v", st)
			}
		})
	}
}

// TestRunNow: RunNow runs a job at once, beside its schedule, and with a
// Claimer claims it: of two replicas at the same instant, one runs it.
func TestRunNow(t *testing.T) {
	claims := newMemClaims()
	a := newFixture(t, jan5, cron.WithClaimer(claims))
	b := newFixture(t, jan5, cron.WithClaimer(claims))
	ra, rb := a.add("report", "0 9 * * *"), b.add("report", "0 9 * * *")
	a.clk.Advance(time.Hour)
	b.clk.Advance(time.Hour)
	for _, f := range []*fixture{a, b} {
		if err := f.s.RunNow("report"); err != nil {
			t.Fatal(err)
		}
	}
	wantTimes(t, "RunNow on a", ra.take(), []time.Time{jan5.Add(time.Hour)})
	if got := rb.take(); len(got) != 0 {
		t.Fatalf("b ran %v, claimed by a", got)
	}
	if st := b.s.Stats(); st.ClaimsLost != 1 {
		t.Fatalf("b: %+v", st)
	}
	if j, _ := a.s.Job("report"); !j.Next().Equal(jan5.Add(9 * time.Hour)) {
		t.Fatalf("RunNow moved the schedule: next %v", j.Next())
	}
	if err := a.s.RunNow("nope"); !errors.Is(err, cron.ErrNoJob) || err.Error() != `cron: no such job "nope"` {
		t.Fatalf("RunNow of no job: %v", err)
	}
}

// TestNextRuns: the next n runs, in the job's zone, as Next would give
// them one after the other.
func TestNextRuns(t *testing.T) {
	f := newFixture(t, jan5)
	j, err := f.s.Add("daily", "0 9 * * *", nop, cron.InZone("Europe/Berlin"))
	if err != nil {
		t.Fatal(err)
	}
	berlin := zone(t, "Europe/Berlin")
	var want []time.Time
	for d := 5; d < 8; d++ {
		want = append(want, time.Date(2026, 1, d, 9, 0, 0, 0, berlin))
	}
	wantTimes(t, "NextRuns(3)", j.NextRuns(3), want)
	if got := j.NextRuns(0); got != nil {
		t.Fatalf("NextRuns(0) = %v", got)
	}
	once, _ := f.s.AddSchedule("once", cron.At(jan5.Add(time.Hour)), nop)
	if got := once.NextRuns(3); len(got) != 1 {
		t.Fatalf("NextRuns(3) of a one-time job: %v", got)
	}
}

// TestUpdate: Update changes a job's schedule and options in one step,
// keeping its counts; bad input leaves the job as it was.
func TestUpdate(t *testing.T) {
	f := newFixture(t, jan5)
	r := f.add("j", "@every 1h")
	f.clk.Advance(90 * time.Minute)
	j, err := f.s.Update("j", "*/10 * * * *", cron.WithLimitRuns(2))
	if err != nil {
		t.Fatal(err)
	}
	if j2, _ := f.s.Job("j"); j2 != j {
		t.Fatal("Update made another Job")
	}
	f.clk.Advance(time.Hour)
	min := func(m int) time.Time { return jan5.Add(time.Duration(m) * time.Minute) }
	wantTimes(t, "updated", r.take(), []time.Time{min(60), min(100), min(110)})
	if st := j.Stats(); st.Runs != 3 {
		t.Fatalf("counts not kept: %+v", st)
	}
	if _, err := f.s.Update("j", "nonsense"); !errors.Is(err, cron.ErrSpec) {
		t.Fatalf("Update to a bad spec: %v", err)
	}
	if _, err := f.s.Update("nope", "@every 1h"); !errors.Is(err, cron.ErrNoJob) {
		t.Fatalf("Update of no job: %v", err)
	}
	if _, err := f.s.UpdateSchedule("j", cron.At(min(200))); err != nil {
		t.Fatal(err)
	}
	f.clk.Advance(2 * time.Hour)
	wantTimes(t, "updated to one time", r.take(), []time.Time{min(200)})
}

// hookLog records what the hooks are called with.
type hookLog struct {
	mu  sync.Mutex
	log []string
}

func (h *hookLog) add(s string) {
	h.mu.Lock()
	h.log = append(h.log, s)
	h.mu.Unlock()
}

func (h *hookLog) hooks() cron.Hooks {
	return cron.Hooks{
		Before: func(job string, at time.Time) { h.add(fmt.Sprintf("before %s %s", job, at.Format("15:04"))) },
		After: func(job string, at time.Time, took time.Duration) {
			h.add(fmt.Sprintf("after %s %s took %v", job, at.Format("15:04"), took))
		},
		AfterError: func(job string, at time.Time, took time.Duration, err error) {
			h.add(fmt.Sprintf("error %s %s took %v: %v (panic %v)", job, at.Format("15:04"), took, err, errors.Is(err, cron.ErrPanicked)))
		},
	}
}

// TestHooksAndErrors: the hooks see each run, its duration and its error;
// errors and panics are counted.
func TestHooksAndErrors(t *testing.T) {
	var h hookLog
	var panics panicRecorder
	f := newFixture(t, jan5, cron.WithHooks(h.hooks()), panics.option())
	n := 0
	_, err := f.s.Add("j", "@every 1h", cron.Returning(func(context.Context, time.Time) error {
		f.clk.Advance(5 * time.Second)
		n++
		switch n {
		case 2:
			return errors.New("disk full")
		case 3:
			panic("boom")
		}
		return nil
	}))
	if err != nil {
		t.Fatal(err)
	}
	f.clk.Advance(3*time.Hour + time.Minute)
	want := []string{
		"before j 01:00", "after j 01:00 took 5s",
		"before j 02:00", "error j 02:00 took 5s: disk full (panic false)",
		"before j 03:00", "error j 03:00 took 5s: cron: job panicked: boom (panic true)",
	}
	if fmt.Sprint(h.log) != fmt.Sprint(want) {
		t.Fatalf("hooks:\n got %q\nwant %q", h.log, want)
	}
	if st := f.s.Stats(); st.Runs != 3 || st.Errors != 1 || st.Panics != 1 {
		t.Fatalf("stats %+v", st)
	}
	panics.take()
}
