package timewheel_test

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/timewheel/timewheel"
)

// BenchmarkW8SharedChurn is the server pattern: goroutines share one
// table of pending timers (a request's timeout, say), and each op starts
// a timer in a random slot and stops the one it replaces, which any
// goroutine, on any processor, started. Package time beside it. Run it
// with -cpu 1,2,4,... and a -benchtime in seconds, never Nx (see the
// README's measuring notes).
func BenchmarkW8SharedChurn(b *testing.B) {
	const n = 100_000
	for _, impl := range impls {
		b.Run("impl="+impl.name, func(b *testing.B) {
			after, cleanup := impl.make()
			defer cleanup()
			table := make([]atomic.Pointer[stopperBox], n)
			r := rng(1)
			for i := range table {
				table[i].Store(&stopperBox{after(r.between(10*time.Second, 60*time.Second), noop)})
			}
			var seed atomic.Uint64
			b.ReportAllocs()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				r := rng(seed.Add(1) * 0x9e3779b97f4a7c15)
				for pb.Next() {
					i := r.next() % n
					old := table[i].Swap(&stopperBox{after(r.between(10*time.Second, 60*time.Second), noop)})
					old.t.Stop()
				}
			})
			b.StopTimer()
			for i := range table {
				table[i].Load().t.Stop()
			}
		})
	}
}

type stopperBox struct{ t stopper }

// BenchmarkStopRate stops a million timers a second for ten seconds (at
// -benchtime 1x; each iteration is a second), stopped from another
// goroutine than the one that started them, and reports the most
// timers the wheel held at once beside the pending ones: stopped timers
// not yet taken off must stay a bounded number, whatever the stop rate.
// Run it with -cpu 2 or more so that the stops come from other
// processors.
func BenchmarkStopRate(b *testing.B) {
	const perSecond, pending = 1_000_000, 100_000
	w := timewheel.New()
	defer w.Close()
	r := rng(7)
	live := make(chan *timewheel.Timer, pending)
	for range pending {
		live <- w.AfterFunc(r.between(time.Minute, 2*time.Minute), noop)
	}
	var peak, samples int
	for b.Loop() {
		for range 10 {
			start := time.Now()
			for range perSecond / 1000 {
				// A thousand stops, each by a fresh goroutine of a timer
				// another started, and as many starts.
				done := make(chan struct{})
				go func() {
					for range 1000 {
						(<-live).Stop()
					}
					close(done)
				}()
				for range 1000 {
					live <- w.AfterFunc(r.between(time.Minute, 2*time.Minute), noop)
				}
				<-done
				if samples++; samples%50 == 0 {
					peak = max(peak, timewheel.Linked(w))
				}
			}
			if d := time.Since(start); d < time.Second {
				time.Sleep(time.Second - d)
			}
		}
	}
	b.ReportMetric(float64(peak-pending), "peak-stopped-linked")
	b.ReportMetric(float64(peak-pending)/pending*100, "peak-stopped-%")
}

// BenchmarkW7Floor is W7Parallel with the wheel taken out: each op
// allocates a 48-byte object holding pointers, as AfterFunc does for its
// Timer, puts it in the goroutine's table of 1,000 in place of a random
// one, and reads the monotonic clock, as every start must to compute its
// deadline. What it costs at a given -cpu is the floor under W7Parallel
// there: the allocator, the collector and the clock, shared by every
// timer package.
func BenchmarkW7Floor(b *testing.B) {
	type timerSized struct {
		a, b, c, d, e, f *int
	}
	epoch := time.Now()
	var seed atomic.Uint64
	var sink atomic.Int64
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		r := rng(seed.Add(1))
		table := make([]*timerSized, 1000)
		var sum int64
		for pb.Next() {
			table[r.next()%uint64(len(table))] = new(timerSized)
			sum += int64(time.Since(epoch))
		}
		sink.Add(sum)
	})
}

// BenchmarkW8Floor is W8SharedChurn with the wheel taken out: each op
// allocates a 48-byte object holding pointers, swaps it into a random
// slot of the shared table, reads the clock, and compare-and-swaps a word
// of the object it replaced, which another goroutine, on another
// processor, allocated: the cache line every Stop of such a timer must
// fetch, whatever the timer package. What it costs is the floor under
// W8SharedChurn at that -cpu.
func BenchmarkW8Floor(b *testing.B) {
	type timerSized struct {
		when       atomic.Int64
		b, c, d, e *int
		f          *int
	}
	const n = 100_000
	table := make([]atomic.Pointer[timerSized], n)
	for i := range table {
		table[i].Store(new(timerSized))
	}
	epoch := time.Now()
	var seed atomic.Uint64
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		r := rng(seed.Add(1) * 0x9e3779b97f4a7c15)
		for pb.Next() {
			t := new(timerSized)
			t.when.Store(int64(time.Since(epoch)))
			old := table[r.next()%n].Swap(t)
			old.when.CompareAndSwap(old.when.Load(), -1)
		}
	})
}
