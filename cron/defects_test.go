package cron_test

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/timewheel/timewheel"
	"github.com/timewheel/timewheel/clock"
	"github.com/timewheel/timewheel/cron"
)

// creepClock is a virtual clock whose Now moves on a little at each
// reading, as a real clock does between two readings, by a microsecond a
// reading up to 500µs (half the wheel's tick) past the virtual time; it
// starts again from the virtual time when that moves. The wheel reads
// Since, which does not creep, so that it keeps to the virtual time.
type creepClock struct {
	*clock.Virtual
	mu    sync.Mutex
	last  time.Time
	creep time.Duration
}

func (c *creepClock) Now() time.Time {
	now := c.Virtual.Now()
	c.mu.Lock()
	defer c.mu.Unlock()
	if !now.Equal(c.last) {
		c.last, c.creep = now, 0
	}
	c.creep = min(c.creep+time.Microsecond, 500*time.Microsecond)
	return now.Add(c.creep)
}

// TestEveryShorterThanTheClockReads: "@every 1ns" runs at most once a
// tick even when the clock moves between the scheduler's readings. A
// run's next time was computed from one reading and its timer reset by
// its distance from a second, later one: a negative duration, due at
// once, so that the job ran again and again within each tick, keeping a
// core busy.
func TestEveryShorterThanTheClockReads(t *testing.T) {
	clk := &creepClock{Virtual: clock.NewVirtual(jan1)}
	w := timewheel.New(timewheel.WithClock(clk), timewheel.WithExecutor(timewheel.Inline()))
	s := cron.New(cron.WithWheel(w), cron.WithInline(), cron.WithLocation(time.UTC))
	t.Cleanup(func() { s.Stop(nil); w.Close() })
	if _, err := s.Add("j", "@every 1ns", nop); err != nil {
		t.Fatal(err)
	}
	const ticks = 10
	clk.Advance(ticks * time.Millisecond)
	if st := s.Stats(); st.Runs+st.Skipped > ticks+1 {
		t.Fatalf("@every 1ns over %d ticks: %d runs, %d skipped; want at most one a tick", ticks, st.Runs, st.Skipped)
	}
}

// TestNeverInFiveYears: a schedule whose first run is more than five
// years away is refused with ErrNever, as its doc says.
func TestNeverInFiveYears(t *testing.T) {
	f := newFixture(t, jan1)
	for _, spec := range []string{"@every 2562047h", "@every 43831h"} {
		if _, err := f.s.Add("far", spec, nop); !errors.Is(err, cron.ErrNever) {
			t.Errorf("Add %q: err %v, want ErrNever", spec, err)
		}
	}
	sixYears := scheduleFunc(func(t time.Time) time.Time { return jan1.AddDate(6, 0, 0) })
	if _, err := f.s.AddSchedule("far", sixYears, nop); !errors.Is(err, cron.ErrNever) {
		t.Errorf("AddSchedule six years out: err %v, want ErrNever", err)
	}
	if _, err := f.s.Add("near", "@every 43800h", nop); err != nil { // 4.997 years
		t.Errorf("Add @every 43800h: %v", err)
	}
}
