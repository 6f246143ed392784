package durable

import (
	"testing"
	"time"

	"github.com/timewheel/timewheel"
	"github.com/timewheel/timewheel/clock"
)

// planWorker returns a worker with nothing running, for decideLocked
// alone: its wheel on a virtual clock, Redis's clock mapped one hour
// ahead of the wheel's (server µs = local µs + 1h), nothing held, no
// claim failed, the poll an hour away.
func planWorker(t *testing.T) (*worker, *clock.Virtual) {
	t.Helper()
	vc := clock.NewVirtual(time.Unix(1_700_000_000, 0))
	wheel := timewheel.New(timewheel.WithClock(vc))
	t.Cleanup(func() { wheel.Close() })
	q := &Queue{cfg: defaults()}
	w := &worker{q: q, wheel: wheel, conc: 8, hz: 2 * time.Second, urgent: 20 * time.Millisecond,
		held: map[string]*attempt{}, running: map[string]*attempt{}, next: -1, note: -1, later: -1}
	w.clk.measure(vc.Now().Add(time.Hour).UnixMicro(), vc.Now())
	w.pollAt = vc.Now().Add(time.Hour)
	return w, vc
}

// server returns the server's µs at d from the wheel's now.
func server(vc *clock.Virtual, d time.Duration) int64 { return vc.Now().Add(time.Hour + d).UnixMicro() }

// decideLocked, case by case: when to claim next from what the worker
// knows, with no Redis and no wall clock.
func TestDecideLocked(t *testing.T) {
	for _, c := range []struct {
		name string
		set  func(w *worker, vc *clock.Virtual)
		now  bool          // claim now
		at   time.Duration // else when, from now; -1 for never (until a handler frees)
	}{
		{"stopping", func(w *worker, _ *clock.Virtual) { w.stopping = true }, false, -1},
		{"every handler busy", func(w *worker, _ *clock.Virtual) { w.inHandler = 8 }, false, -1},
		{"a claim failed: its retry's wake stands", func(w *worker, _ *clock.Virtual) {
			w.fails = 1
			w.wake = w.wheel.AfterFunc(time.Second, func() {})
		}, false, -1},
		// The retry's wake fired while every handler was busy, so its round
		// claimed nothing; once a handler frees up, the worker claims again
		// (it claimed never more: 316 due jobs of a shard were left after a
		// Redis Cluster failover, TestClusterFailoverCoverage).
		{"a claim failed, its retry's wake spent", func(w *worker, _ *clock.Virtual) { w.fails = 1 }, true, 0},
		{"no clock yet", func(w *worker, _ *clock.Virtual) { w.clk = clockMap{} }, true, 0},
		{"nothing known: the poll", func(*worker, *clock.Virtual) {}, false, time.Hour},
		{"the poll is due", func(w *worker, vc *clock.Virtual) { w.pollAt = vc.Now() }, true, 0},
		{"a lease ends later", func(w *worker, vc *clock.Virtual) { w.later = server(vc, 3*time.Second) }, false, 3 * time.Second},
		{"a job within the horizon, room for half a batch", func(w *worker, vc *clock.Virtual) {
			w.more, w.next = true, server(vc, time.Second)
		}, true, 0},
		{"a job within the horizon, little room", func(w *worker, vc *clock.Virtual) {
			w.more, w.next = true, server(vc, time.Second)
			for i := range 7 {
				w.held[string(rune('a'+i))] = &attempt{}
			}
		}, false, time.Second - 20*time.Millisecond},
		{"a job within urgent, little room", func(w *worker, vc *clock.Virtual) {
			w.more, w.next = true, server(vc, 10*time.Millisecond)
			for i := range 7 {
				w.held[string(rune('a'+i))] = &attempt{}
			}
		}, true, 0},
		{"a job past the horizon: half a horizon before it", func(w *worker, vc *clock.Virtual) {
			w.more, w.next = true, server(vc, 10*time.Second)
		}, false, 9 * time.Second},
	} {
		t.Run(c.name, func(t *testing.T) {
			w, vc := planWorker(t)
			c.set(w, vc)
			w.mu.Lock()
			now, at := w.decideLocked(vc.Now())
			w.mu.Unlock()
			switch {
			case now != c.now:
				t.Errorf("claim now = %v; want %v", now, c.now)
			case c.now:
			case c.at < 0 && !at.IsZero():
				t.Errorf("claim at %v; want never", at.Sub(vc.Now()))
			case c.at >= 0 && at.Sub(vc.Now()) != c.at:
				t.Errorf("claim in %v; want %v", at.Sub(vc.Now()), c.at)
			}
		})
	}
}

// capLocked: conc before the first handler has run; then as many as the
// handlers start within half the horizon, at least conc, at most twice
// the batch.
func TestCapLocked(t *testing.T) {
	w, _ := planWorker(t)
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, c := range []struct {
		dur  time.Duration
		want int
	}{{0, 8}, {time.Second, 8}, {100 * time.Millisecond, 80}, {time.Microsecond, 512}} {
		w.dur = c.dur
		if got := w.capLocked(); got != c.want {
			t.Errorf("capLocked at a mean run of %v = %d; want %d", c.dur, got, c.want)
		}
	}
}

// A clockMap keeps the largest offset measured, aged by maxDrift since,
// so a server time it maps onto the wheel's clock is never early: a
// later, larger measure replaces the best; a smaller one does not.
func TestClockMap(t *testing.T) {
	base := time.Unix(1_700_000_000, 0)
	var c clockMap
	c.measure(1_000_000, base) // offset 1 s at 0
	if c.offset(0) != 1_000_000 {
		t.Fatalf("offset at 0 = %d", c.offset(0))
	}
	// A second on, 1 ms of drift has aged it.
	if got := c.offset(1_000_000); got != 1_000_000-maxDrift {
		t.Errorf("offset a second on = %d; want %d", got, 1_000_000-maxDrift)
	}
	c.measure(1_999_500, base.Add(time.Second)) // offset 999_500, over the aged 999_000
	if c.off != 999_500 || c.at != 1_000_000 {
		t.Errorf("after a larger measure: off %d at %d", c.off, c.at)
	}
	c.measure(2_000_000, base.Add(1500*time.Millisecond)) // offset 500_000, under the best aged
	if c.at != 1_000_000 {
		t.Errorf("a smaller measure replaced the best: at %d", c.at)
	}
}
