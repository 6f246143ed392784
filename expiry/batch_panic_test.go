package expiry

import (
	"fmt"
	"testing"
	"time"

	"github.com/timewheel/timewheel"
	"github.com/timewheel/timewheel/clock"
)

// TestFirePanicKeepsLaterBatches: a bucket holding more than expireBatch
// entries is evicted in batches, with delivery between them. With
// WithInlineCallbacks and a panic handler that re-panics, a panic in the
// first batch's delivery unwinds out of bucket.fire; the entries of the
// later batches must still be evicted, with their Expired callbacks, and
// not stay in the map for good.
func TestFirePanicKeepsLaterBatches(t *testing.T) {
	clk := clock.NewVirtual(start)
	w := timewheel.New(timewheel.WithClock(clk), timewheel.WithExecutor(timewheel.Inline()))
	defer w.Close()
	expired := 0
	m := New[string, int](WithWheel(w), WithInlineCallbacks(),
		WithPanicHandler(func(v any) { panic(v) }),
		WithOnEvict(func(k string, v int, why Reason) {
			if why == Expired {
				expired++
			}
			if v < 0 {
				panic("bad " + k)
			}
		}))
	defer m.Close()
	const n = expireBatch + 44
	m.Set("bad", -1, time.Second)
	for i := 1; i < n; i++ {
		m.Set(fmt.Sprint(i), i, time.Second) // same bucket
	}
	func() {
		defer func() {
			if r := recover(); r != "bad bad" {
				t.Fatalf("Advance: panic %v, want the handler's", r)
			}
		}()
		clk.Advance(2 * time.Second)
	}()
	clk.Advance(time.Hour)
	// any eviction starts the next delivery, which takes the rest of the batch
	m.Set("kick", 1, time.Hour)
	m.Delete("kick")
	if m.Len() != 0 || expired != n {
		t.Fatalf("an hour after a bucket of %d entries expired: Len %d, %d Expired callbacks; want 0, %d",
			n, m.Len(), expired, n)
	}
}
