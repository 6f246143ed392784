package timewheel_test

import (
	"flag"
	"fmt"
	"math"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/timewheel/timewheel"
	"github.com/timewheel/timewheel/clock"
	"github.com/timewheel/timewheel/queue"
)

// The workloads of DESIGN.md, each run on timewheel and on package time in
// the same function so that one benchstat shows the ratio:
//
//	go test -run '^$' -bench 'W[1-4]' -count 6 . > bench.txt
//	go run golang.org/x/perf/cmd/benchstat@latest -col /impl bench.txt

var benchSizes = []int{1e3, 1e5, 1e6}

// rng is a xorshift generator: cheap enough not to blur the numbers.
type rng uint64

func (r *rng) next() uint64 {
	*r ^= *r << 13
	*r ^= *r >> 7
	*r ^= *r << 17
	return uint64(*r)
}

// between returns a duration in [lo, hi).
func (r *rng) between(lo, hi time.Duration) time.Duration {
	return lo + time.Duration(r.next()%uint64(hi-lo))
}

func noop() {}

// preload starts n timers due 10 to 60 s out.
func preload(after func(time.Duration, func()) stopper, r *rng, n int) []stopper {
	return preloadIn(after, r, n, 10*time.Second, 60*time.Second)
}

// preloadIn starts n timers due lo to hi out.
func preloadIn(after func(time.Duration, func()) stopper, r *rng, n int, lo, hi time.Duration) []stopper {
	timers := make([]stopper, n)
	for i := range timers {
		timers[i] = after(r.between(lo, hi), noop)
	}
	return timers
}

func stopAll(timers []stopper) {
	for _, t := range timers {
		t.Stop()
	}
}

// stopper is what the workloads need of a timer.
type stopper interface {
	Stop() bool
	Reset(time.Duration) bool
}

// impls are the contenders. Each returns an AfterFunc and a cleanup.
var impls = []struct {
	name string
	make func() (func(time.Duration, func()) stopper, func())
}{
	{"timewheel", func() (func(time.Duration, func()) stopper, func()) {
		w := timewheel.New()
		return func(d time.Duration, f func()) stopper { return w.AfterFunc(d, f) }, func() { w.Close() }
	}},
	{"time", func() (func(time.Duration, func()) stopper, func()) {
		return func(d time.Duration, f func()) stopper { return time.AfterFunc(d, f) }, func() {}
	}},
}

// BenchmarkW1Churn: n timers pending 10-60 s out; each op starts one and
// stops a random pending one.
func BenchmarkW1Churn(b *testing.B) {
	for _, n := range benchSizes {
		for _, impl := range impls {
			b.Run(fmt.Sprintf("n=%.0e/impl=%s", float64(n), impl.name), func(b *testing.B) {
				churn(b, impl.make, n)
			})
		}
		b.Run(fmt.Sprintf("n=%.0e/impl=engine", float64(n)), func(b *testing.B) {
			engineChurn(b, n)
		})
	}
}

// BenchmarkW2Refresh: n timers pending 10 to 30 s out; each op resets a
// random one to 30 s, a later deadline, as an idle timeout is refreshed on
// every read (DESIGN's W2: "Reset a random pending timer later").
func BenchmarkW2Refresh(b *testing.B) {
	for _, n := range benchSizes {
		for _, impl := range impls {
			b.Run(fmt.Sprintf("n=%.0e/impl=%s", float64(n), impl.name), func(b *testing.B) {
				refresh(b, impl.make, n, 10*time.Second, 30*time.Second)
			})
		}
	}
}

// BenchmarkW2RefreshMixed is W2 with the timers preloaded 10 to 60 s
// out, as W2 was before it kept to DESIGN's "later": the first refresh of
// most timers moves them earlier, which takes the shard's lock and moves
// the timer, so the figure mixes the eager and the lazy paths in a
// proportion that depends on how many operations the run makes per timer.
func BenchmarkW2RefreshMixed(b *testing.B) {
	for _, n := range benchSizes {
		for _, impl := range impls {
			b.Run(fmt.Sprintf("n=%.0e/impl=%s", float64(n), impl.name), func(b *testing.B) {
				refresh(b, impl.make, n, 10*time.Second, 60*time.Second)
			})
		}
	}
}

// churn is W1's loop: n timers pending 10-60 s out; each op stops a
// random one and starts another in its place.
func churn(b *testing.B, newImpl func() (func(time.Duration, func()) stopper, func()), n int) {
	after, cleanup := newImpl()
	defer cleanup()
	r := rng(n)
	timers := preload(after, &r, n)
	b.ReportAllocs()
	for b.Loop() {
		i := r.next() % uint64(n)
		timers[i].Stop()
		timers[i] = after(r.between(10*time.Second, 60*time.Second), noop)
	}
	b.StopTimer()
	stopAll(timers)
}

// refresh is W2's loop: n timers pending lo to hi out; each op resets a
// random one to 30 s.
func refresh(b *testing.B, newImpl func() (func(time.Duration, func()) stopper, func()), n int, lo, hi time.Duration) {
	after, cleanup := newImpl()
	defer cleanup()
	r := rng(n)
	timers := preloadIn(after, &r, n, lo, hi)
	b.ReportAllocs()
	for b.Loop() {
		timers[r.next()%uint64(n)].Reset(30 * time.Second)
	}
	b.StopTimer()
	stopAll(timers)
}

// engineChurn is W1 on the bare engine: no lock, no clock, no callback.
func engineChurn(b *testing.B, n int) {
	q := queue.NewWheel()
	r := rng(n)
	entries := make([]*queue.Entry, n)
	for i := range entries {
		entries[i] = q.Schedule(int64(r.between(10_000, 60_000)))
	}
	b.ReportAllocs()
	for b.Loop() {
		i := r.next() % uint64(n)
		q.Cancel(entries[i])
		entries[i] = q.Schedule(int64(r.between(10_000, 60_000)))
	}
}

// engineRefresh is W2 on the bare engine, reading the clock as the
// scheduler does, so that each refresh moves the deadline later.
func engineRefresh(b *testing.B, n int) {
	q := queue.NewWheel()
	r := rng(n)
	entries := make([]*queue.Entry, n)
	for i := range entries {
		entries[i] = q.Schedule(int64(r.between(10_000, 30_000)))
	}
	epoch := time.Now()
	for b.Loop() {
		when := int64(time.Since(epoch)/time.Millisecond) + 30_000
		e := entries[r.next()%uint64(n)]
		if !e.Postpone(when) {
			q.Reschedule(e, when)
		}
	}
}

// BenchmarkW3Burst: a million timers, all due inside one 100 ms window,
// with a trivial callback, started lead ahead of the window (2 s, 10 s or
// 5 min: a timeout set in a wave) from one goroutine or from many (each a
// slice of the timers, so that they spread over the wheel's shards). It
// reports how late the last callback ran after the window closed
// (ms-late), and after the latest deadline any start may have asked for
// (ms-late-net): a start descheduled between reading the clock for its
// duration and the timer's own reading asks for a deadline past the
// window by that much, which ms-late counts as lateness (an upper bound);
// ms-late-net takes each deadline as late as a clock reading after its
// start allows, so time a start spent after the timer's own reading
// (waiting for a lock, say) shortens it (a lower bound). For timewheel,
// whose deadlines a test can read (DueAt, in export_test.go), it reports
// the exact figure too: how long after the latest deadline the wheel took
// for the burst's timers, rounded up to its tick, the last callback ran
// (ms-late-exact; package time's deadlines cannot be read). Then the
// fires per second over the burst (n ÷ the time from the window's start
// to the last callback), the CPU time per fire from 10 ms before the
// window to the last callback (cpu-ns/fire), and from the end of
// scheduling to the last callback (wait+cpu-ns/fire, which counts work
// done ahead of the window), each with a garbage collection forced
// between scheduling and the window (gc=forced), without (gc=none),
// where the collection the million new timers call for may run during the
// burst, and with one started 5 ms before the window (gc=during), so that
// it marks the million timers while they fire: what gc=none measures
// when the collector starts in the window, every time.
//
// A lead of 5 min would make each run last 5 min: timewheel runs it on a
// warpClock, real time plus an offset that jumps, once the timers are
// started, to 5 s before the window (see warpClock for what that keeps).
// Package time's clock cannot jump, so impl=time runs lead=5m only with
// -w3.real5m (5 min a run); its heap does not depend on the lead.
//
//	go test -run '^$' -bench W3Burst -benchtime 1x -count 3 .
func BenchmarkW3Burst(b *testing.B) {
	const n, window = 1_000_000, 100 * time.Millisecond
	for _, lead := range []time.Duration{2 * time.Second, 10 * time.Second, 5 * time.Minute} {
		for _, from := range []string{"one", "many"} {
			for _, gc := range []string{"forced", "none", "during"} {
				for _, impl := range burstImpls {
					name := fmt.Sprintf("lead=%v/from=%s/gc=%s/impl=%s", shortDuration(lead), from, gc, impl.name)
					b.Run(name, func(b *testing.B) {
						warp := lead > warpOver
						if warp && impl.name == "time" && !*real5m {
							b.Skip("package time's clock cannot jump: run with -w3.real5m (5 min a run)")
						}
						goroutines := 1
						if from == "many" {
							goroutines = 4 * runtime.GOMAXPROCS(0)
						}
						benchBurst(b, impl.make, burstCase{n, window, lead, goroutines, gc == "forced", gc == "during", warp})
					})
				}
			}
		}
	}
}

var real5m = flag.Bool("w3.real5m", false, "BenchmarkW3Burst: run package time at lead=5m on the real clock (5 min a run)")

// warpOver is the lead past which BenchmarkW3Burst runs timewheel on a
// warpClock, and warpTo how long before the window the clock lands.
const warpOver, warpTo = time.Minute, 5 * time.Second

// shortDuration prints 2s, 10s, 5m rather than 2s, 10s, 5m0s.
func shortDuration(d time.Duration) string {
	if d >= time.Minute && d%time.Minute == 0 {
		return fmt.Sprintf("%dm", d/time.Minute)
	}
	return d.String()
}

// burstImpls are W3's contenders: as impls, but timewheel may run on a
// warpClock, whose warp the benchmark calls to jump ahead.
var burstImpls = []struct {
	name string
	make func(warp bool) (after func(time.Duration, func()) stopper, warpTo func(time.Time), cleanup func())
}{
	{"timewheel", func(warp bool) (func(time.Duration, func()) stopper, func(time.Time), func()) {
		if !warp {
			w := timewheel.New()
			return burstDue(w), nil, func() { w.Close() }
		}
		c := &warpClock{}
		w := timewheel.New(timewheel.WithClock(c), timewheel.WithShards(runtime.GOMAXPROCS(0)))
		return burstDue(w), c.warpTo, func() { w.Close() }
	}},
	{"time", func(bool) (func(time.Duration, func()) stopper, func(time.Time), func()) {
		return func(d time.Duration, f func()) stopper { return time.AfterFunc(d, f) }, nil, func() {}
	}},
}

// burstCase is one W3 run: n timers due in [start, start+window), started
// lead before start by goroutines goroutines.
type burstCase struct {
	n          int
	window     time.Duration
	lead       time.Duration
	goroutines int
	forceGC    bool
	gcDuring   bool // a collection started 5 ms before the window, so that it marks during the burst
	warp       bool
}

func benchBurst(b *testing.B, newImpl func(bool) (func(time.Duration, func()) stopper, func(time.Time), func()), c burstCase) {
	var late, net, exact, span, cpu, total time.Duration
	runs, known := 0, true
	for b.Loop() {
		after, jump, cleanup := newImpl(c.warp)
		r := burst(after, jump, c)
		cleanup()
		late, net, span, cpu, total, runs = late+r.late, net+r.net, span+r.span, cpu+r.cpu, total+r.total, runs+1
		exact, known = exact+r.exact, known && r.exact >= 0
	}
	b.ReportMetric(float64(late.Microseconds())/1000/float64(runs), "ms-late")
	b.ReportMetric(float64(net.Microseconds())/1000/float64(runs), "ms-late-net")
	if known {
		b.ReportMetric(float64(exact.Microseconds())/1000/float64(runs), "ms-late-exact")
	}
	b.ReportMetric(float64(c.n*runs)/span.Seconds(), "fires/s")
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(runs*c.n), "cpu-ns/fire")
	b.ReportMetric(float64(total.Nanoseconds())/float64(runs*c.n), "wait+cpu-ns/fire")
}

// latestDue is the latest instant at which the wheel has a timer of the
// running W3 burst due, on the wheel's clock, in nanoseconds after
// burstRef (math.MinInt64: unknown, as for package time, whose deadlines
// cannot be read). W3 runs one burst at a time; burst sets both.
var (
	latestDue atomic.Int64
	burstRef  time.Time
)

// burstDue returns w.AfterFunc, recording in latestDue the latest
// deadline the wheel took for the timers it starts.
func burstDue(w *timewheel.Wheel) func(time.Duration, func()) stopper {
	return func(d time.Duration, f func()) stopper {
		t := w.AfterFunc(d, f)
		if due, ok := timewheel.DueAt(w, t); ok {
			for n := int64(due.Sub(burstRef)); ; {
				old := latestDue.Load()
				if n <= old || latestDue.CompareAndSwap(old, n) {
					break
				}
			}
		}
		return t
	}
}

// burstResult is what one W3 run measured.
type burstResult struct {
	late  time.Duration // last callback after the window's end
	net   time.Duration // last callback after the latest deadline a start may have asked for, or 0
	exact time.Duration // last callback after the latest deadline the wheel took (-1 if unknown)
	span  time.Duration // window's start to the last callback
	cpu   time.Duration // process CPU from 10 ms before the window to the last callback
	total time.Duration // process CPU from the end of scheduling to the last callback
}

// burst starts c.n timers due in [start, start+c.window), start being
// c.lead from now, waits for all to fire and measures it. On a warped
// clock (warpTo not nil) it jumps the clock, once the timers are started,
// to warpTo before the window; the window is then a point in real time
// that far ahead, and start, on the warped clock's scale, the same point.
func burst(after func(time.Duration, func()) stopper, warp func(time.Time), c burstCase) burstResult {
	var fired atomic.Int64
	var last time.Time // when the last callback ran
	done := make(chan struct{})
	f := func() {
		if fired.Add(1) == int64(c.n) {
			last = time.Now()
			close(done)
		}
	}
	latestDue.Store(math.MinInt64)
	burstRef = time.Now()
	start := time.Now().Add(c.lead) // after scheduling is over
	var wg sync.WaitGroup
	per := c.n / c.goroutines
	lags := make([]time.Duration, c.goroutines)
	for g := range c.goroutines {
		count := per
		if g == c.goroutines-1 {
			count = c.n - per*g
		}
		wg.Go(func() {
			r := rng(7 + g)
			lag := time.Duration(math.MinInt64)
			for range count {
				at := start.Add(r.between(0, c.window))
				t0 := time.Now()
				after(at.Sub(t0), f)
				// A start descheduled between t0 and the timer's own
				// clock reading asks for a deadline up to lag past at.
				lag = max(lag, time.Since(t0)-start.Add(c.window).Sub(at))
			}
			lags[g] = lag
		})
	}
	wg.Wait()
	// The latest deadline asked for is no later than the window's end, or
	// past it by the worst such lag.
	end := start.Add(c.window + max(slices.Max(lags), 0))
	if c.forceGC {
		runtime.GC()
	}
	if warp != nil {
		// The timers were set on the warped clock's scale, which read
		// real time until now: jumping it by skip moves the window to
		// real time start-skip.
		skip := time.Until(start) - warpTo
		warp(time.Now().Add(skip))
		start, end = start.Add(-skip), end.Add(-skip)
		burstRef = burstRef.Add(-skip) // the wheel's instants, in real time
	}
	scheduled := cpuTime()
	time.Sleep(time.Until(start) - 10*time.Millisecond)
	before := cpuTime()
	if c.gcDuring {
		time.Sleep(5 * time.Millisecond)
		go runtime.GC()
	}
	<-done
	stop := cpuTime()
	return burstResult{
		late:  last.Sub(start.Add(c.window)),
		exact: exactLate(last),
		net:   max(last.Sub(end), 0),
		span:  last.Sub(start),
		cpu:   stop - before,
		total: stop - scheduled,
	}
}

// exactLate returns how long after the latest deadline the wheel took for
// the burst's timers (see latestDue) its last callback ran at last, or
// -1 if the wheel's deadlines are unknown.
func exactLate(last time.Time) time.Duration {
	n := latestDue.Load()
	if n == math.MinInt64 {
		return -1
	}
	return last.Sub(burstRef.Add(time.Duration(n)))
}

// warpClock is BenchmarkW3Burst's clock for leads too long to wait for:
// real time plus an offset, which warpTo moves forward once. Its timers
// are package time's, set for the time left on its own scale; warpTo sets
// each pending one again for the time left after the jump, so that one due
// before the new time fires at once and one due after fires when it would
// have. A wheel on it behaves as on the real clock with one difference:
// wakes it asked for inside the skipped span are made together, at the
// jump, where they would have been minutes apart. It is a
// clock.RealTime, so the wheel fires due shards in parallel on it, as on
// the real clock.
type warpClock struct {
	offset atomic.Int64 // nanoseconds ahead of real time
	mu     sync.Mutex
	timers map[*warpTimer]struct{} // guarded by mu; set and not fired or stopped
}

func (c *warpClock) Now() time.Time                  { return time.Now().Add(time.Duration(c.offset.Load())) }
func (c *warpClock) Since(t time.Time) time.Duration { return c.Now().Sub(t) }

// RealTime reports that the clock runs in step with real time (see
// clock.RealTime), so that the wheel fires due shards in parallel on it.
func (c *warpClock) RealTime() bool { return true }

func (c *warpClock) AfterFunc(d time.Duration, f func()) clock.Timer {
	t := &warpTimer{c: c, f: f}
	c.mu.Lock()
	defer c.mu.Unlock()
	t.setLocked(d)
	t.rt = time.AfterFunc(d, t.fire)
	return t
}

// warpTo moves the clock forward so that real time to reads as the clock's
// Now did before the call, that is by time.Until(to), and sets its timers
// again.
func (c *warpClock) warpTo(to time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.offset.Add(int64(time.Until(to)))
	now := c.Now()
	for t := range c.timers {
		if t.rt.Stop() {
			t.rt.Reset(t.at.Sub(now))
		}
	}
}

type warpTimer struct {
	c  *warpClock
	f  func()
	rt *time.Timer
	at time.Time // guarded by c.mu; due on c's scale
}

func (t *warpTimer) setLocked(d time.Duration) {
	t.at = t.c.Now().Add(d)
	if t.c.timers == nil {
		t.c.timers = map[*warpTimer]struct{}{}
	}
	t.c.timers[t] = struct{}{}
}

func (t *warpTimer) fire() {
	t.c.mu.Lock()
	if !t.at.After(t.c.Now()) { // else Reset has set it again since
		delete(t.c.timers, t)
	}
	t.c.mu.Unlock()
	t.f()
}

func (t *warpTimer) Stop() bool {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	delete(t.c.timers, t)
	return t.rt.Stop()
}

func (t *warpTimer) Reset(d time.Duration) bool {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	t.setLocked(d)
	return t.rt.Reset(d)
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkW4Memory reports the heap bytes per pending timer with a
// million pending.
func BenchmarkW4Memory(b *testing.B) {
	const n = 1_000_000
	for _, impl := range impls {
		b.Run("impl="+impl.name, func(b *testing.B) {
			var perTimer float64
			for b.Loop() {
				after, cleanup := impl.make()
				timers := make([]stopper, n)
				f := func() {}
				before := heapInUse()
				for i := range timers {
					timers[i] = after(time.Hour+time.Duration(i), f)
				}
				perTimer = float64(heapInUse()-before) / n
				for _, t := range timers {
					t.Stop()
				}
				cleanup()
			}
			b.ReportMetric(perTimer, "B/timer")
		})
	}
}

func heapInUse() int64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

// BenchmarkW7Parallel: goroutines (GOMAXPROCS of them: run with -cpu 1,2
// for one and two) churning timers at once on one wheel with default
// options (a shard per processor), against package time, and on a wheel
// of one shard, one lock for all.
func BenchmarkW7Parallel(b *testing.B) {
	sharded := struct {
		name string
		make func() (func(time.Duration, func()) stopper, func())
	}{"timewheel-1shard", func() (func(time.Duration, func()) stopper, func()) {
		w := timewheel.New(timewheel.WithShards(1))
		return func(d time.Duration, f func()) stopper { return w.AfterFunc(d, f) }, func() { w.Close() }
	}}
	for _, impl := range append(impls[:len(impls):len(impls)], sharded) {
		b.Run("impl="+impl.name, func(b *testing.B) {
			after, cleanup := impl.make()
			defer cleanup()
			var seed atomic.Uint64
			var mu sync.Mutex
			var leftovers []stopper
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				r := rng(seed.Add(1))
				timers := make([]stopper, 1000)
				for i := range timers {
					timers[i] = after(r.between(10*time.Second, 60*time.Second), noop)
				}
				for pb.Next() {
					i := r.next() % uint64(len(timers))
					timers[i].Stop()
					timers[i] = after(r.between(10*time.Second, 60*time.Second), noop)
				}
				mu.Lock()
				leftovers = append(leftovers, timers...)
				mu.Unlock()
			})
			for _, t := range leftovers {
				t.Stop()
			}
		})
	}
}

// BenchmarkW5Lateness: 1e5 timers pending, due over two seconds; reports
// how late callbacks ran (p50, p99, max) and how many ran early.
func BenchmarkW5Lateness(b *testing.B) {
	const n = 100_000
	for _, impl := range impls {
		b.Run("impl="+impl.name, func(b *testing.B) {
			var p50, p99, worst time.Duration
			var early int
			for b.Loop() {
				after, cleanup := impl.make()
				late := make([]time.Duration, n) // each callback writes its own
				var wg sync.WaitGroup
				wg.Add(n)
				r := rng(3)
				for i := range n {
					d := r.between(time.Second, 3*time.Second)
					due := time.Now().Add(d)
					after(d, func() {
						late[i] = time.Since(due)
						wg.Done()
					})
				}
				wg.Wait()
				cleanup()
				early = 0
				for _, l := range late {
					if l < 0 {
						early++
					}
				}
				slices.Sort(late)
				at := func(q float64) time.Duration { return max(late[int(q*float64(n-1))], 0) }
				p50, p99, worst = at(0.50), at(0.99), at(1)
			}
			b.ReportMetric(float64(p50.Microseconds())/1000, "p50-ms")
			b.ReportMetric(float64(p99.Microseconds())/1000, "p99-ms")
			b.ReportMetric(float64(worst.Microseconds())/1000, "max-ms")
			b.ReportMetric(float64(early), "early")
		})
	}
}

// BenchmarkW6Idle: 1e4 timers waiting a minute; reports the CPU the
// process spends over two seconds of that wait. No pending timer is due,
// so the wheel's driver should not wake at all.
func BenchmarkW6Idle(b *testing.B) {
	const n = 10_000
	for _, impl := range impls {
		b.Run("impl="+impl.name, func(b *testing.B) {
			var cpu time.Duration
			for b.Loop() {
				after, cleanup := impl.make()
				timers := make([]stopper, n)
				for i := range timers {
					timers[i] = after(time.Minute+time.Duration(i)*time.Millisecond, noop)
				}
				runtime.GC()
				before := cpuTime()
				time.Sleep(2 * time.Second)
				cpu = cpuTime() - before
				for _, t := range timers {
					t.Stop()
				}
				cleanup()
			}
			b.ReportMetric(float64(cpu.Microseconds())/1000, "cpu-ms/2s")
		})
	}
}

// BenchmarkStopEarliest starts and stops a short timer ahead of n long
// ones (a request deadline among idle-connection timeouts): the cost must
// not grow with n.
func BenchmarkStopEarliest(b *testing.B) {
	for _, n := range []int{0, 1e3, 1e5} {
		for _, impl := range impls {
			b.Run(fmt.Sprintf("n=%.0e/impl=%s", float64(n), impl.name), func(b *testing.B) {
				after, cleanup := impl.make()
				defer cleanup()
				long := make([]stopper, n)
				for i := range long {
					long[i] = after(time.Hour, noop)
				}
				b.ReportAllocs()
				for b.Loop() {
					after(2*time.Second, noop).Stop()
				}
				b.StopTimer()
				for _, t := range long {
					t.Stop()
				}
			})
		}
	}
}

// BenchmarkFloor measures what bounds every goroutine-safe timer
// operation on this machine, beside package time's cheapest one, so that
// the W1 and W2 ratios can be read against it:
//
//   - op=clock: one monotonic clock read, which every start and reset
//     needs (package time's runtime timers read the same clock);
//   - op=lock: an uncontended mutex, locked and unlocked;
//   - op=alloc: a 48-byte allocation, the size of an AfterFunc Timer;
//   - op=list-churn: DESIGN.md's floor for W1, no lock and no clock:
//     unlink a random one of n entries of 24 bytes from an intrusive
//     doubly linked list and append a newly allocated one to one of 64
//     lists, the least any O(1) timer structure does per start + stop;
//   - op=list-move: the floor for W2: unlink a random one and append it
//     again, allocating nothing;
//   - op=time-reset: (*time.Timer).Reset of one timer, package time's
//     cheapest operation, for comparison;
//   - op=clock+cas: the floor of a lazy Reset (W2), which reads the clock
//     once and moves a deadline with one compare-and-swap;
//   - op=clock+touch: the floor of any Reset of a random one of n pending
//     timers at scale: pick a random one of n stopper interfaces from a
//     slice, as W2 does, read the clock, and compare-and-swap a word of
//     the 48-byte object behind it through a method call. The clock read
//     orders the processor's loads (its rdtsc is fenced), so the two cache
//     misses of one operation cannot overlap those of the next: package
//     time's Reset and ours both pay them in full.
func BenchmarkFloor(b *testing.B) {
	epoch := time.Now()
	var sink int64
	b.Run("op=clock", func(b *testing.B) {
		for b.Loop() {
			sink += int64(time.Since(epoch))
		}
	})
	b.Run("op=lock", func(b *testing.B) {
		var mu sync.Mutex
		for b.Loop() {
			mu.Lock()
			sink++
			mu.Unlock()
		}
	})
	b.Run("op=alloc", func(b *testing.B) {
		b.ReportAllocs()
		var keep *[6]int64
		for b.Loop() {
			keep = new([6]int64)
		}
		sink += keep[0]
	})
	for _, op := range []string{"list-churn", "list-move"} {
		for _, n := range benchSizes {
			b.Run(fmt.Sprintf("op=%s/n=%.0e", op, float64(n)), func(b *testing.B) {
				type node struct {
					prev, next *node
					when       int64 // the size of a queue.Entry
				}
				var heads [64]node
				for i := range heads {
					heads[i].prev, heads[i].next = &heads[i], &heads[i]
				}
				push := func(h, e *node) {
					e.prev, e.next = h.prev, h
					h.prev.next = e
					h.prev = e
				}
				r := rng(n)
				nodes := make([]*node, n)
				for i := range nodes {
					nodes[i] = new(node)
					push(&heads[r.next()%64], nodes[i])
				}
				churn := op == "list-churn"
				b.ReportAllocs()
				for b.Loop() {
					i := r.next() % uint64(n)
					e := nodes[i]
					e.prev.next, e.next.prev = e.next, e.prev
					if churn {
						e.prev, e.next = nil, nil
						e = new(node)
						nodes[i] = e
					}
					push(&heads[r.next()%64], e)
				}
			})
		}
	}
	b.Run("op=clock+cas", func(b *testing.B) {
		var word atomic.Int64
		for b.Loop() {
			d := int64(time.Since(epoch)) + int64(30*time.Second)
			old := word.Load()
			word.CompareAndSwap(old, max(old, d/int64(time.Millisecond)))
		}
	})
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("op=clock+touch/n=%.0e", float64(n)), func(b *testing.B) {
			objs := make([]toucher, n)
			for i := range objs {
				objs[i] = &touchObj{epoch: epoch}
			}
			r := rng(n)
			for b.Loop() {
				objs[r.next()%uint64(n)].touch()
			}
		})
	}
	b.Run("op=time-reset", func(b *testing.B) {
		t := time.AfterFunc(time.Hour, noop)
		defer t.Stop()
		for b.Loop() {
			t.Reset(time.Hour)
		}
	})
	if sink == 42 {
		b.Log(sink) // keeps sink, and so the measured work, alive
	}
}

// toucher and touchObj are BenchmarkFloor's op=touch: an interface call
// and a compare-and-swap on a 48-byte object, as a Reset is.
type toucher interface{ touch() }

type touchObj struct {
	epoch time.Time // 24 bytes
	word  atomic.Int64
	_     [2]uintptr
}

func (o *touchObj) touch() {
	d := int64(time.Since(o.epoch)) / int64(time.Millisecond)
	old := o.word.Load()
	o.word.CompareAndSwap(old, max(old, d))
}

// scaleSizes are BenchmarkScale's: from a thousand to ten million pending.
var scaleSizes = []int{1e3, 1e4, 1e5, 1e6, 1e7}

// BenchmarkScale reports W1 (churn) and W2 (refresh) from 1e3 to 1e7
// pending, for the scheduler, package time and the bare engine, so that
// the growth of the cost per operation with n shows in one run. It takes
// minutes and gigabytes at 1e7: run it on its own,
//
//	go test -run '^$' -bench Scale -benchtime 200000x -count 3 .
func BenchmarkScale(b *testing.B) {
	for _, n := range scaleSizes {
		for _, impl := range impls {
			b.Run(fmt.Sprintf("op=churn/n=%.0e/impl=%s", float64(n), impl.name), func(b *testing.B) {
				churn(b, impl.make, n)
			})
			b.Run(fmt.Sprintf("op=refresh/n=%.0e/impl=%s", float64(n), impl.name), func(b *testing.B) {
				refresh(b, impl.make, n, 10*time.Second, 30*time.Second)
			})
		}
		b.Run(fmt.Sprintf("op=churn/n=%.0e/impl=engine", float64(n)), func(b *testing.B) {
			engineChurn(b, n)
		})
		b.Run(fmt.Sprintf("op=refresh/n=%.0e/impl=engine", float64(n)), func(b *testing.B) {
			engineRefresh(b, n)
		})
	}
}

// BenchmarkW3CollectionFloor is the floor under W3 when the collector
// marks during the burst (gc=during, and gc=none when the burst's first
// allocations start a collection): the cost of one collection with a
// million timers pending an hour out, in wall time and in process CPU,
// the work that then shares the machine with the firing. Package time's
// timers are measured the same way in the same function.
//
//	go test -run '^$' -bench W3CollectionFloor -count 6 .
func BenchmarkW3CollectionFloor(b *testing.B) {
	const n = 1_000_000
	for _, impl := range impls {
		b.Run("impl="+impl.name, func(b *testing.B) {
			after, cleanup := impl.make()
			defer cleanup()
			timers := make([]stopper, n)
			for i := range timers {
				timers[i] = after(time.Hour, func() {})
			}
			runtime.GC()
			var cpu time.Duration
			for b.Loop() {
				c0 := cpuTime()
				runtime.GC()
				cpu += cpuTime() - c0
			}
			b.ReportMetric(float64(cpu.Microseconds())/1000/float64(b.N), "cpu-ms/gc")
			for _, t := range timers {
				t.Stop()
			}
			runtime.KeepAlive(timers)
		})
	}
}
