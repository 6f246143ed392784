package timewheel

import (
	"testing"
	"testing/synctest"
	"time"
	"unsafe"
)

// TestEmptyWakeupsAcrossShards: on the real clock, shards due at the same
// wake fire on goroutines of their own, and the wake counts as empty only
// if none of them fired anything.
func TestEmptyWakeupsAcrossShards(t *testing.T) {
	for _, tc := range []struct {
		name      string
		postponed int // how many of the two shards' timers Reset moves later
		wakeups   uint64
		empty     uint64
	}{
		{"none postponed", 0, 1, 0},
		{"one postponed", 1, 2, 0},
		{"both postponed", 2, 2, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				w := New(WithShards(2), WithExecutor(Inline()))
				defer w.Close()
				fired := make(chan struct{}, 2)
				for i, s := range w.shards {
					tm := &Timer{f: func() { fired <- struct{}{} }, p: unsafe.Pointer(s)}
					s.start(&tm.e, nil, time.Second)
					if i < tc.postponed {
						tm.Reset(2 * time.Second)
					}
				}
				time.Sleep(3 * time.Second)
				synctest.Wait()
				st := w.Stats()
				if len(fired) != 2 || st.LazyResets != uint64(tc.postponed) || st.Wakeups != tc.wakeups || st.EmptyWakeups != tc.empty {
					t.Fatalf("%d fired, stats %+v; want 2 fired, %d wakeups, %d empty", len(fired), st, tc.wakeups, tc.empty)
				}
			})
		})
	}
}
