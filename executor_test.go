package timewheel_test

import (
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/timewheel/timewheel"
)

// TestPoolIsBounded queues many blocking callbacks: never more than the
// limit run at once, all run, and no worker outlives the queue.
func TestPoolIsBounded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := timewheel.NewPool(3)
		var running, peak, done atomic.Int32
		for range 100 {
			p.Execute(func() {
				raise(&peak, running.Add(1))
				time.Sleep(time.Millisecond)
				running.Add(-1)
				done.Add(1)
			})
		}
		p.Wait()
		if done.Load() != 100 || peak.Load() != 3 {
			t.Fatalf("%d of 100 ran, at most %d at once; want 100 and 3", done.Load(), peak.Load())
		}
	})
}

// TestPoolRunsInOrderWithOneWorker: one worker runs callbacks in the order
// they were queued.
func TestPoolRunsInOrderWithOneWorker(t *testing.T) {
	p := timewheel.NewPool(1)
	var mu sync.Mutex
	var got []int
	for i := range 1000 {
		p.Execute(func() {
			mu.Lock()
			got = append(got, i)
			mu.Unlock()
		})
	}
	p.Wait()
	for i, v := range got {
		if i != v {
			t.Fatalf("callback %d ran in place %d", v, i)
		}
	}
	if len(got) != 1000 {
		t.Fatalf("%d of 1000 ran", len(got))
	}
}

// TestWheelCallbacksAreBounded: a burst of AfterFunc callbacks runs on at
// most WithWorkers goroutines, not one goroutine each.
func TestWheelCallbacksAreBounded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := timewheel.New(timewheel.WithWorkers(2))
		defer w.Close()
		var running, peak atomic.Int32
		for range 50 {
			w.AfterFunc(time.Second, func() {
				raise(&peak, running.Add(1))
				time.Sleep(time.Millisecond)
				running.Add(-1)
			})
		}
		time.Sleep(2 * time.Second)
		synctest.Wait()
		if peak.Load() > 2 {
			t.Fatalf("%d callbacks ran at once with two workers", peak.Load())
		}
	})
}

// raise sets peak to n if n is larger.
func raise(peak *atomic.Int32, n int32) {
	for {
		m := peak.Load()
		if n <= m || peak.CompareAndSwap(m, n) {
			return
		}
	}
}

// BenchmarkPoolStart: a callback queued on an idle Pool, the case of
// timers that fall due one at a time: a worker starts, runs it and exits.
// Package time's AfterFunc starts a goroutine per callback; the
// sub-benchmark impl=go does the same for comparison.
func BenchmarkPoolStart(b *testing.B) {
	done := make(chan struct{})
	f := func() { done <- struct{}{} }
	b.Run("impl=pool", func(b *testing.B) {
		p := timewheel.NewPool(4)
		b.ReportAllocs()
		for b.Loop() {
			p.Execute(f)
			<-done
		}
		p.Wait()
	})
	b.Run("impl=go", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			go f()
			<-done
		}
	})
}
