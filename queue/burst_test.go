package queue_test

import (
	"fmt"
	"math"
	"runtime"
	"runtime/debug"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/timewheel/timewheel/queue"
)

// burstTimer is the size of the scheduler's AfterFunc Timer (48 bytes,
// the Entry first), so that a burst of them is as cold as one of Timers.
type burstTimer struct {
	e queue.Entry
	_ [3]uintptr
}

// BenchmarkBurst is W3 (see the root package's BenchmarkW3Burst) on the
// bare engine, driven as the scheduler drives it but on a simulated clock,
// so that the figures are the engine's alone, without the executor, the
// collector, or the other processes on the machine: n timers, each
// allocated on its own, due in a window of 100 ticks (a tick is taken to
// be 1 ms) that starts lead ticks after they are started. The driver
// wakes first at the earliest deadline inserted or Ahead, whichever is
// earlier, then at NextWake, or at
// the tick the simulated clock has reached if it is late, and each wake
// costs the CPU time Expire takes on its thread, measured (CPU time, not
// wall-clock time, so that other processes taking the processor do not
// count; they still share its caches), with the collector held off. It
// reports the CPU per fire spent before the window (ahead-ns/fire) and in
// it (window-ns/fire), the wakes before the window that fired nothing
// (early-wakes), and how late the driver handed out the window's last
// timer (ms-late).
//
// align says where the window falls: epoch is where the scheduler's
// benchmark puts it (the wheel's tick 0 at its New, so the window starts
// at tick lead); straddle puts a boundary of the timers' level in the
// window's middle (4096 for 2 s and 10 s, 262144 for 5 min), where half
// the burst sits in one coarse slot and half in the next.
func BenchmarkBurst(b *testing.B) {
	const n, window = 1_000_000, 100
	for _, lead := range []int64{2_000, 10_000, 300_000} {
		for _, align := range []string{"epoch", "straddle"} {
			b.Run(fmt.Sprintf("lead=%d/align=%s", lead, align), func(b *testing.B) {
				base := int64(0)
				if align == "straddle" {
					unit := int64(4096)
					if lead > 262_144 {
						unit = 262_144
					}
					base = (lead/unit+1)*unit - window/2 - lead
				}
				var r burstRun
				for b.Loop() {
					r.add(runBurst(base, lead, n, window))
				}
				r.report(b, n)
			})
		}
	}
}

// burstRun sums the runs of BenchmarkBurst.
type burstRun struct {
	runs              int
	ahead, inWindow   time.Duration
	late              time.Duration
	earlyWakes, fired int
}

func (s *burstRun) add(r burstRun) {
	s.runs++
	s.ahead += r.ahead
	s.inWindow += r.inWindow
	s.late += r.late
	s.earlyWakes += r.earlyWakes
	s.fired += r.fired
}

func (s *burstRun) report(b *testing.B, n int) {
	if s.fired != s.runs*n {
		b.Fatalf("fired %d timers in %d runs of %d", s.fired, s.runs, n)
	}
	b.ReportMetric(float64(s.ahead.Nanoseconds())/float64(s.fired), "ahead-ns/fire")
	b.ReportMetric(float64(s.inWindow.Nanoseconds())/float64(s.fired), "window-ns/fire")
	b.ReportMetric(float64(s.earlyWakes)/float64(s.runs), "early-wakes")
	b.ReportMetric(float64(s.late.Microseconds())/1000/float64(s.runs), "ms-late")
}

// runBurst is one run of BenchmarkBurst: a wheel whose current tick is
// base, n timers started there due in [base+lead, base+lead+window), and
// a simulated driver that expires them.
func runBurst(base, lead int64, n int, window int64) burstRun {
	w := queue.NewWheel()
	w.Expire(base, func(*queue.Entry) {})
	timers := make([]*burstTimer, n)
	x := uint64(7)
	start := base + lead
	wake := int64(math.MaxInt64) // as the scheduler: each Insert moves it earlier
	for i := range timers {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		timers[i] = new(burstTimer)
		when := start + int64(x%uint64(window))
		w.Insert(&timers[i].e, when)
		wake = min(wake, when)
		if ahead, ok := w.Ahead(); ok {
			wake = min(wake, ahead)
		}
	}
	runtime.GC() // as W3's gc=forced; and none during the run
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var r burstRun
	batch := make([]*queue.Entry, 0, 1024)
	fire := func(e *queue.Entry) { batch = append(batch, e) }
	const tick = time.Millisecond
	var clock time.Duration // simulated time since tick base; the driver is busy until then
	for next, ok := wake, true; ok; next, ok = w.NextWake() {
		now := max(next, base+int64(clock/tick))
		clock = max(clock, time.Duration(now-base)*tick)
		t0 := threadCPU()
		fired := w.Expire(now, fire)
		d := threadCPU() - t0
		clock += d
		batch = batch[:0]
		r.fired += fired
		if now < start {
			r.ahead += d
			if fired == 0 {
				r.earlyWakes++
			}
		} else {
			r.inWindow += d
		}
	}
	r.late = max(clock-time.Duration(lead+window)*tick, 0)
	return r
}

// threadCPU returns the CPU time the calling thread has used.
func threadCPU() time.Duration {
	var ts syscall.Timespec
	const clockThreadCPUTime = 3 // CLOCK_THREAD_CPUTIME_ID
	syscall.Syscall(syscall.SYS_CLOCK_GETTIME, clockThreadCPUTime, uintptr(unsafe.Pointer(&ts)), 0)
	return time.Duration(ts.Nano())
}
