package clock_test

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/timewheel/timewheel/clock"
)

// TestStepWallMovesNowAlone: a step of the wall clock, either way, moves
// Now, Next and what AdvanceTo reads by the step, and leaves the timers
// and Since of earlier readings where they were, as a step of the real
// wall clock leaves Go's timers and monotonic readings.
func TestStepWallMovesNowAlone(t *testing.T) {
	for _, step := range []time.Duration{time.Hour, -time.Hour} {
		t.Run(fmt.Sprint(step), func(t *testing.T) {
			v := clock.NewVirtual(start)
			var ranAt []time.Time
			v.AfterFunc(time.Minute, func() { ranAt = append(ranAt, v.Now()) })
			before := v.Now()
			v.StepWall(step)
			if got := v.Now(); !got.Equal(start.Add(step)) {
				t.Fatalf("Now after the step = %v, want %v", got, start.Add(step))
			}
			if v.Since(before) != 0 {
				t.Fatalf("Since(a reading before the step) = %v, want 0", v.Since(before))
			}
			if next, _ := v.Next(); !next.Equal(start.Add(step + time.Minute)) {
				t.Fatalf("Next = %v, want the deadline on the stepped wall clock", next)
			}
			if v.Len() != 1 || len(ranAt) != 0 {
				t.Fatal("the step ran or dropped the timer")
			}
			v.Advance(time.Minute)
			if len(ranAt) != 1 || !ranAt[0].Equal(start.Add(step+time.Minute)) {
				t.Fatalf("timer ran at %v, want a minute of Advance later, at %v", ranAt, start.Add(step+time.Minute))
			}
			if v.Since(before) != time.Minute {
				t.Fatalf("Since(a reading before the step) = %v, want 1m", v.Since(before))
			}
			v.AdvanceTo(v.Now().Add(time.Second))
			if v.Since(before) != time.Minute+time.Second {
				t.Fatalf("Since after AdvanceTo: %v, want 1m1s", v.Since(before))
			}
		})
	}
}

// TestSuspendMakesTimersLate: in a suspend the wall clock moves and the
// monotonic clock does not, so a timer due during it runs, after the
// resume, as late on the wall clock as the suspend was long.
func TestSuspendMakesTimersLate(t *testing.T) {
	v := clock.NewVirtual(start)
	var ranAt time.Time
	v.AfterFunc(10*time.Minute, func() { ranAt = v.Now() })
	v.Advance(5 * time.Minute)
	v.Suspend(time.Hour)
	if got := v.Now(); !got.Equal(start.Add(65 * time.Minute)) {
		t.Fatalf("Now after the resume = %v, want 65m after start", got)
	}
	v.Advance(5 * time.Minute)
	if !ranAt.Equal(start.Add(70 * time.Minute)) {
		t.Fatalf("timer ran at %v, want 70m after start (an hour late)", ranAt)
	}
	checkMisuse(t, misuse{"Suspend(-1s)", func() any { v.Suspend(-time.Second); return nil },
		"panic: clock: Virtual.Suspend called with negative duration -1s"})
}

// TestSinceAcrossSteps: Since reads each time Now returned by the wall
// clock's lead when it was read, through steps both ways; a reading
// that came both before and after a backward step is read as the earlier.
func TestSinceAcrossSteps(t *testing.T) {
	v := clock.NewVirtual(start)
	r0 := v.Now()
	v.Advance(time.Hour)
	v.StepWall(-30 * time.Minute) // wall 00:30 again
	v.Advance(time.Minute)
	r1 := v.Now() // 00:31 on the wall, read after the step
	v.StepWall(2 * time.Hour)
	v.Advance(time.Minute)
	r2 := v.Now()
	v.Advance(time.Minute)
	for _, c := range []struct {
		name string
		r    time.Time
		want time.Duration
	}{
		{"before both steps", r0, 63 * time.Minute},
		{"between the steps, in the repeated half hour: read as the earlier", r1, 32 * time.Minute}, // 2m if read as it was
		{"after both steps", r2, time.Minute},
	} {
		if got := v.Since(c.r); got != c.want {
			t.Errorf("Since(%s) = %v, want %v", c.name, got, c.want)
		}
	}
}

func ExampleVirtual_StepWall() {
	v := clock.NewVirtual(time.Date(2026, 1, 1, 9, 0, 0, 0, time.UTC))
	v.AfterFunc(time.Hour, func() { fmt.Println("timer at", v.Now().Format("15:04")) })
	v.StepWall(30 * time.Minute) // NTP steps the wall clock
	fmt.Println("now", v.Now().Format("15:04"))
	v.Advance(time.Hour) // timers follow the monotonic clock
	// Output:
	// now 09:30
	// timer at 10:30
}

// TestStepWallBeyondADuration: steps whose sum is past what a Duration
// holds (292 years) still move Now by each, either way; Since of earlier
// readings and AdvanceTo keep to the monotonic clock. The lead was one
// Duration, and stopped at 2318 without a word.
func TestStepWallBeyondADuration(t *testing.T) {
	v := clock.NewVirtual(start)
	before := v.Now()
	want := start
	for range 2 {
		v.StepWall(math.MaxInt64)
		want = want.Add(math.MaxInt64)
		if now := v.Now(); !now.Equal(want) {
			t.Fatalf("after StepWall(MaxInt64): Now %v, want %v", now, want)
		}
	}
	v.AfterFunc(time.Second, func() {})
	if next, _ := v.Next(); !next.Equal(want.Add(time.Second)) {
		t.Fatalf("Next %v, want %v", next, want.Add(time.Second))
	}
	v.AdvanceTo(want.Add(time.Minute))
	if d := v.Since(before); d != time.Minute {
		t.Fatalf("Since a reading before the steps: %v, want 1m", d)
	}
	if d := v.Since(v.Now()); d != 0 {
		t.Fatalf("Since(Now()): %v, want 0", d)
	}
	for range 4 {
		v.StepWall(math.MinInt64)
		want = want.Add(math.MinInt64)
	}
	if now, want := v.Now(), want.Add(time.Minute); !now.Equal(want) {
		t.Fatalf("after four steps of MinInt64 back: Now %v, want %v", now, want)
	}
}
