package main

import (
	"strings"
	"testing"
	"time"

	"github.com/timewheel/timewheel"
	"github.com/timewheel/timewheel/clock"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// TestRun runs the example on a virtual clock, where sleeping is moving
// the clock and every report is exact.
func TestRun(t *testing.T) {
	clk := clock.NewVirtual(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	w := timewheel.New(timewheel.WithClock(clk), timewheel.WithExecutor(timewheel.Inline()))
	defer w.Close()
	var out strings.Builder
	run(&out, w, func(d time.Duration) { clk.Advance(d) })
	want := `    0s  monitoring 3 peers, beat every 100ms, timeout 250ms
 550ms  bravo missed its heartbeats: silent for 250ms
 750ms  charlie missed its heartbeats: silent for 250ms
 900ms  charlie is back after 400ms of silence
  1.2s  alpha: 12 beats
  1.2s  bravo: 3 beats
  1.2s  charlie: 9 beats
`
	if out.String() != want {
		t.Fatalf("got:\n%s\nwant:\n%s", out.String(), want)
	}
}
