package timewheel_test

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/timewheel/timewheel"
	"github.com/timewheel/timewheel/clock"
)

var statsEpoch = time.Date(2026, 11, 24, 0, 0, 0, 0, time.UTC)

// TestStatsCounts: every counter after a known sequence of operations on a
// virtual clock, checked after each step.
func TestStatsCounts(t *testing.T) {
	clk := clock.NewVirtual(statsEpoch)
	w := timewheel.New(timewheel.WithClock(clk), timewheel.WithExecutor(timewheel.Inline()))
	defer w.Close()
	check := func(step string, want timewheel.Stats) {
		t.Helper()
		got := w.Stats()
		want.Shards, want.Lateness.Tick = 1, time.Millisecond
		want.Lateness.Counts[0] = want.Fired // a virtual clock fires on the tick
		if got != want {
			t.Fatalf("after %s:\n got %+v\nwant %+v", step, got, want)
		}
	}
	check("New", timewheel.Stats{})

	var timers []*timewheel.Timer
	for i := range 5 {
		timers = append(timers, w.AfterFunc(time.Duration(i+1)*time.Second, func() {}))
	}
	check("5 AfterFunc", timewheel.Stats{Pending: 5, Started: 5})

	timers[3].Stop()
	timers[4].Stop()
	timers[4].Stop() // not pending: not counted
	check("2 Stop", timewheel.Stats{Pending: 3, Started: 5, Stopped: 2})

	timers[0].Reset(2 * time.Second)        // later: lazy
	timers[2].Reset(500 * time.Millisecond) // earlier: under the lock
	check("2 Reset", timewheel.Stats{Pending: 3, Started: 5, Stopped: 2, Reset: 2, LazyResets: 1})

	clk.Advance(500 * time.Millisecond)
	check("the reset timer fired", timewheel.Stats{Pending: 2, Started: 5, Stopped: 2, Reset: 2, LazyResets: 1,
		Fired: 1, Wakeups: 1})

	clk.Advance(time.Second) // past the old deadline of the lazily reset timer, where the driver files it again
	check("a wake for nothing", timewheel.Stats{Pending: 2, Started: 5, Stopped: 2, Reset: 2, LazyResets: 1,
		Fired: 1, Wakeups: 2, EmptyWakeups: 1})

	clk.Advance(time.Hour)
	check("the rest fired", timewheel.Stats{Started: 5, Stopped: 2, Reset: 2, LazyResets: 1,
		Fired: 3, Wakeups: 3, EmptyWakeups: 1})

	timers[0].Reset(time.Second) // fired: scheduled anew, under the lock
	w.AfterFunc(time.Second, func() {})
	w.Close()
	check("Close", timewheel.Stats{Started: 6, Stopped: 2, Reset: 3, LazyResets: 1,
		Fired: 3, Wakeups: 3, EmptyWakeups: 1, Discarded: 2})
	w.AfterFunc(time.Second, func() {}) // closed: counted nowhere
	check("AfterFunc after Close", timewheel.Stats{Started: 6, Stopped: 2, Reset: 3, LazyResets: 1,
		Fired: 3, Wakeups: 3, EmptyWakeups: 1, Discarded: 2})
}

// TestStatsChannels: channel timers and tickers count as AfterFunc timers
// do, a tick each time a ticker sends (or drops a tick for a receiver
// behind).
func TestStatsChannels(t *testing.T) {
	clk := clock.NewVirtual(statsEpoch)
	w := timewheel.New(timewheel.WithClock(clk))
	defer w.Close()
	tm := w.NewTimer(time.Second)
	tk := w.NewTicker(time.Second)
	stopped := w.NewTicker(time.Second)
	stopped.Stop()
	tk.Reset(2 * time.Second)
	clk.Advance(6 * time.Second) // the timer once, the ticker 3 times (2 dropped)
	<-tm.C
	<-tk.C
	tk.Stop()
	st := w.Stats()
	if st.Started != 3 || st.Stopped != 2 || st.Reset != 1 || st.LazyResets != 0 || st.Fired != 4 || st.Pending != 0 {
		t.Fatalf("stats %+v", st)
	}
}

// TestStatsCollected: a channel timer nobody references is collected and
// counted.
func TestStatsCollected(t *testing.T) {
	w := timewheel.New()
	defer w.Close()
	for range 10 {
		w.NewTimer(time.Hour)
		w.NewTicker(time.Hour)
	}
	if n := collectedLen(w, 0); n != 0 {
		t.Fatalf("%d timers still pending after collection", n)
	}
	if st := w.Stats(); st.Collected != 20 || st.Started != 20 || st.Pending != 0 {
		t.Fatalf("stats %+v, want 20 started and collected", st)
	}
}

// lateClock is a virtual clock whose timers fire late by a fixed delay,
// as a loaded machine's do.
type lateClock struct {
	*clock.Virtual
	late time.Duration
}

func (c lateClock) AfterFunc(d time.Duration, f func()) clock.Timer {
	return lateTimer{c.Virtual.AfterFunc(d+c.late, f), c.late}
}

type lateTimer struct {
	clock.Timer
	late time.Duration
}

func (t lateTimer) Reset(d time.Duration) bool { return t.Timer.Reset(d + t.late) }

// TestStatsLateness: fires land in the bucket of their lateness, whose
// bounds are powers of two of the tick.
func TestStatsLateness(t *testing.T) {
	for _, tc := range []struct {
		late   time.Duration
		bucket int
	}{
		{0, 0},
		{999 * time.Microsecond, 0},
		{time.Millisecond, 1},
		{3 * time.Millisecond, 2},
		{4 * time.Millisecond, 3},
		{time.Second, 10}, // 1000 ticks: [512, 1024)
		{time.Hour, 15},   // the rest
		{16384 * time.Millisecond, 15},
		{16383 * time.Millisecond, 14},
	} {
		t.Run(fmt.Sprint(tc.late), func(t *testing.T) {
			clk := lateClock{clock.NewVirtual(statsEpoch), tc.late}
			w := timewheel.New(timewheel.WithClock(clk), timewheel.WithExecutor(timewheel.Inline()))
			defer w.Close()
			for range 3 {
				w.AfterFunc(time.Second, func() {})
			}
			clk.Advance(time.Second + tc.late)
			l := w.Stats().Lateness
			var want timewheel.Lateness
			want.Tick, want.Counts[tc.bucket], want.Sum = time.Millisecond, 3, 3*tc.late
			if l != want {
				t.Fatalf("lateness %+v, want %+v", l, want)
			}
			b := l.Bounds()
			if tc.bucket > 0 && b[tc.bucket-1] > tc.late {
				t.Errorf("late %v in bucket %d, whose lower bound is %v", tc.late, tc.bucket, b[tc.bucket-1])
			}
			if tc.bucket < len(b) && tc.late >= b[tc.bucket] {
				t.Errorf("late %v in bucket %d, whose upper bound is %v", tc.late, tc.bucket, b[tc.bucket])
			}
		})
	}
}

func TestLatenessBounds(t *testing.T) {
	b := timewheel.Lateness{Tick: 10 * time.Millisecond}.Bounds()
	if len(b) != timewheel.LatenessBuckets-1 || b[0] != 10*time.Millisecond || b[1] != 20*time.Millisecond ||
		b[len(b)-1] != 10*time.Millisecond<<(timewheel.LatenessBuckets-2) {
		t.Fatalf("bounds %v", b)
	}
}

// TestPoolStats: a pool of one worker blocked in a callback, with two
// more queued behind it.
func TestPoolStats(t *testing.T) {
	p := timewheel.NewPool(1)
	started, release := make(chan struct{}), make(chan struct{})
	p.Execute(func() { close(started); <-release })
	<-started
	p.Execute(func() {})
	p.Execute(func() {})
	if st, want := p.Stats(), (timewheel.PoolStats{Limit: 1, Queued: 2, Running: 1, Submitted: 3}); st != want {
		t.Fatalf("stats %+v, want %+v", st, want)
	}
	close(release)
	p.Wait()
	if st, want := p.Stats(), (timewheel.PoolStats{Limit: 1, Submitted: 3}); st != want {
		t.Fatalf("stats %+v after Wait, want %+v", st, want)
	}
}

// TestStatsExecutor: Stats shows the wheel's own pool, and nothing for an
// executor of the caller's.
func TestStatsExecutor(t *testing.T) {
	w := timewheel.New(timewheel.WithWorkers(3))
	defer w.Close()
	if st := w.Stats().Executor; st.Limit != 3 {
		t.Fatalf("executor stats %+v, want the pool's limit 3", st)
	}
	w2 := timewheel.New(timewheel.WithExecutor(timewheel.Inline()))
	defer w2.Close()
	if st := w2.Stats().Executor; st != (timewheel.PoolStats{}) {
		t.Fatalf("executor stats %+v for Inline, want zero", st)
	}
}

// TestStatsConcurrent: Stats read while goroutines churn on a sharded
// wheel (for the race detector), and the totals add up at the end.
func TestStatsConcurrent(t *testing.T) {
	w := timewheel.New(timewheel.WithShards(4))
	defer w.Close()
	const goroutines, ops = 4, 2000
	var wg sync.WaitGroup
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-done:
				return
			default:
				w.Stats()
				runtime.Gosched()
			}
		}
	}()
	for range goroutines {
		wg.Go(func() {
			for i := range ops {
				tm := w.AfterFunc(time.Hour, func() {})
				tm.Reset(time.Duration(i%3+2) * time.Hour) // later: lazy
				tm.Stop()
			}
		})
	}
	wg.Wait()
	close(done)
	st := w.Stats()
	if st.Started != goroutines*ops || st.Stopped != goroutines*ops || st.Reset != goroutines*ops ||
		st.LazyResets != goroutines*ops || st.Pending != 0 {
		t.Fatalf("stats %+v", st)
	}
}

// Stats after a few timers on a virtual clock: one reset later without a
// lock, one stopped, one fired (on its tick: bucket 0 of the lateness).
func ExampleWheel_Stats() {
	clk := clock.NewVirtual(statsEpoch)
	w := timewheel.New(timewheel.WithClock(clk), timewheel.WithExecutor(timewheel.Inline()))
	defer w.Close()
	t := w.AfterFunc(time.Second, func() {})
	t.Reset(2 * time.Second)
	w.AfterFunc(time.Second, func() {}).Stop()
	clk.Advance(time.Minute)
	st := w.Stats()
	fmt.Printf("started %d, stopped %d, reset %d (lazily %d), fired %d, pending %d\n",
		st.Started, st.Stopped, st.Reset, st.LazyResets, st.Fired, st.Pending)
	fmt.Println("lateness buckets:", st.Lateness.Counts[:4], "bounds:", st.Lateness.Bounds()[:3])
	// Output:
	// started 2, stopped 1, reset 1 (lazily 1), fired 1, pending 0
	// lateness buckets: [1 0 0 0] bounds: [1ms 2ms 4ms]
}

// BenchmarkResetParallel: goroutines each refreshing timers of their own,
// lazily, as connections' goroutines refresh their idle timeouts: the
// count of lazy Resets must not be a cache line that every processor
// writes.
func BenchmarkResetParallel(b *testing.B) {
	for _, impl := range impls {
		b.Run("impl="+impl.name, func(b *testing.B) {
			after, cleanup := impl.make()
			defer cleanup()
			var seed atomic.Uint64
			var mu sync.Mutex
			var all []stopper
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				r := rng(seed.Add(1))
				timers := preload(after, &r, 1000)
				for pb.Next() {
					timers[r.next()%uint64(len(timers))].Reset(time.Minute)
				}
				mu.Lock()
				all = append(all, timers...)
				mu.Unlock()
			})
			b.StopTimer()
			stopAll(all)
		})
	}
}

// TestStatsResetToTheSameTickIsNotCounted: a Reset of a pending timer to
// the tick it is already due at changes nothing, and is not counted, so
// that the lock-free path pays for its count only when it moves a
// deadline; a Reset to a later tick is counted, as lazy.
func TestStatsResetToTheSameTickIsNotCounted(t *testing.T) {
	clk := clock.NewVirtual(time.Date(2026, 11, 24, 0, 0, 0, 0, time.UTC))
	w := timewheel.New(timewheel.WithClock(clk), timewheel.WithExecutor(timewheel.Inline()))
	defer w.Close()
	tm := w.AfterFunc(time.Second, func() {})
	if !tm.Reset(time.Second) {
		t.Fatal("Reset of a pending timer = false")
	}
	if st := w.Stats(); st.Reset != 0 || st.LazyResets != 0 {
		t.Fatalf("after a Reset to the same tick: Reset %d, LazyResets %d; want 0, 0", st.Reset, st.LazyResets)
	}
	tm.Reset(2 * time.Second)
	if st := w.Stats(); st.Reset != 1 || st.LazyResets != 1 {
		t.Fatalf("after a Reset to a later tick: Reset %d, LazyResets %d; want 1, 1", st.Reset, st.LazyResets)
	}
}
