package wheelctx_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/timewheel/timewheel"
	"github.com/timewheel/timewheel/wheelctx"
)

const benchTimeout = time.Minute

// BenchmarkCreateCancel is the per-request cost of a deadline: create a
// context with a one-minute timeout and cancel it, as a handler does with
// defer cancel(). pending is the number of other deadline contexts alive
// meanwhile, made earlier with the same timeout (requests in flight);
// parent is Background or a cancelable context (r.Context() in a
// server); use=done also waits on the context's Done once (a select
// with its data ready, as code that passes the context on does), which
// makes wheelctx's inner context on a cancelable parent. Package
// context runs as a sub-benchmark in the same function:
//
//	go test -run '^$' -bench CreateCancel -count 6 ./wheelctx > ctx.txt
//	go run golang.org/x/perf/cmd/benchstat@latest -col /impl ctx.txt
func BenchmarkCreateCancel(b *testing.B) {
	for _, pending := range []int{0, 1e5} {
		for _, parent := range []string{"background", "cancelable"} {
			for _, use := range []string{"none", "done"} {
				for _, impl := range []string{"context", "wheelctx"} {
					name := fmt.Sprintf("pending=%.0e/parent=%s/use=%s/impl=%s", float64(pending), parent, use, impl)
					b.Run(name, func(b *testing.B) { createCancel(b, pending, parent, use, impl) })
				}
			}
		}
	}
}

// ready is a channel always ready to receive from.
var ready = func() chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}()

// createCancel is one sub-benchmark of BenchmarkCreateCancel.
func createCancel(b *testing.B, pending int, parent, use, impl string) {
	w := timewheel.New()
	defer w.Close()
	withTimeout := context.WithTimeout
	if impl == "wheelctx" {
		withTimeout = wheelctx.On(w).WithTimeout
	}
	for range pending {
		_, cancel := withTimeout(context.Background(), benchTimeout)
		defer cancel()
	}
	p := context.Background()
	if parent == "cancelable" {
		var cancel context.CancelFunc
		p, cancel = context.WithCancel(p)
		defer cancel()
	}
	b.ReportAllocs()
	for b.Loop() {
		ctx, cancel := withTimeout(p, benchTimeout)
		if use == "done" {
			select {
			case <-ready:
			case <-ctx.Done():
			}
		}
		cancel()
	}
}

// BenchmarkCreateCancelParallel is BenchmarkCreateCancel from every
// processor at once, on a cancelable parent per goroutine. With
// pending=1e3 each goroutine first makes 1,000 contexts it cancels only
// at the end (requests in flight), so the wheel is never empty.
func BenchmarkCreateCancelParallel(b *testing.B) {
	for _, pending := range []int{0, 1e3} {
		for _, impl := range []string{"context", "wheelctx"} {
			b.Run(fmt.Sprintf("pending=%.0e/impl=%s", float64(pending), impl), func(b *testing.B) {
				w := timewheel.New()
				defer w.Close()
				withTimeout := context.WithTimeout
				if impl == "wheelctx" {
					withTimeout = wheelctx.On(w).WithTimeout
				}
				b.ReportAllocs()
				b.RunParallel(func(pb *testing.PB) {
					p, cancel := context.WithCancel(context.Background())
					defer cancel()
					for range pending {
						_, cancel := withTimeout(p, benchTimeout)
						defer cancel()
					}
					for pb.Next() {
						_, cancel := withTimeout(p, benchTimeout)
						cancel()
					}
				})
			})
		}
	}
}

// BenchmarkCreateCancelFloor: what any context with a deadline pays, in
// the same units as BenchmarkCreateCancel:
//   - op=inner: on a cancelable parent, package context's own child
//     (context.WithCancelCause, then its cancel), through which a
//     context outside package context is canceled synchronously with its
//     parent; wheelctx makes one on such a parent, package context's
//     WithTimeout pays the same bookkeeping in its own child;
//   - op=clock: the wall clock read that WithTimeout takes the deadline
//     from (time.Now).
func BenchmarkCreateCancelFloor(b *testing.B) {
	b.Run("op=inner", func(b *testing.B) {
		p, cancel := context.WithCancel(context.Background())
		defer cancel()
		b.ReportAllocs()
		for b.Loop() {
			_, cancel := context.WithCancelCause(p)
			cancel(nil)
		}
	})
	b.Run("op=clock", func(b *testing.B) {
		var sink time.Time
		for b.Loop() {
			sink = time.Now()
		}
		_ = sink
	})
}
