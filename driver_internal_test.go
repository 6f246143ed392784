package timewheel

import (
	"testing"
	"time"
	"unsafe"

	"github.com/timewheel/timewheel/clock"
)

// TestShardsShareOneWake: four shards each holding timers due at the same
// far tick cost one clock timer and one wake between them, not four, and
// a stop that leaves a shard empty moves the one wake to the next shard's
// tick.
func TestShardsShareOneWake(t *testing.T) {
	clk := clock.NewVirtual(time.Date(2026, 11, 24, 0, 0, 0, 0, time.UTC))
	w := New(WithClock(clk), WithExecutor(Inline()), WithShards(4))
	defer w.Close()
	fired := 0
	var timers []*Timer
	for i, s := range w.shards {
		for range 100 {
			tm := &Timer{f: func() { fired++ }, p: unsafe.Pointer(s)}
			s.start(&tm.e, nil, time.Minute+time.Duration(i)*time.Hour)
			timers = append(timers, tm)
		}
	}
	if clk.Len() != 1 {
		t.Fatalf("%d clock timers armed for 4 shards, want 1", clk.Len())
	}
	for _, tm := range timers[:100] { // shard 0's, the earliest
		tm.Stop()
	}
	if next, _ := clk.Next(); next.Sub(clk.Now()) != time.Minute+time.Hour {
		t.Fatalf("the wake is %v away after shard 0 emptied, want %v", next.Sub(clk.Now()), time.Minute+time.Hour)
	}
	wakes := 0
	for {
		before := fired
		if _, ok := clk.AdvanceNext(); !ok {
			break
		}
		wakes++
		if fired == before {
			t.Fatalf("woke at %v with nothing due", clk.Now())
		}
	}
	if fired != 300 || wakes != 3 {
		t.Fatalf("%d fired in %d wakes, want 300 in 3 (one per shard's tick)", fired, wakes)
	}
}

// TestShardsDueTogetherWakeOnce: shards with timers due at the same tick
// are all fired by one wake.
func TestShardsDueTogetherWakeOnce(t *testing.T) {
	clk := clock.NewVirtual(time.Date(2026, 11, 24, 0, 0, 0, 0, time.UTC))
	w := New(WithClock(clk), WithExecutor(Inline()), WithShards(3))
	defer w.Close()
	fired := 0
	for _, s := range w.shards {
		tm := &Timer{f: func() { fired++ }, p: unsafe.Pointer(s)}
		s.start(&tm.e, nil, time.Minute)
	}
	if _, ok := clk.AdvanceNext(); !ok || fired != 3 {
		t.Fatalf("one wake fired %d of 3 shards' timers", fired)
	}
	if clk.Len() != 0 {
		t.Fatalf("%d clock timers still armed with nothing pending", clk.Len())
	}
}
