package cron_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/timewheel/timewheel"
	"github.com/timewheel/timewheel/clock"
	"github.com/timewheel/timewheel/cron"
)

// TestWithLogger: with no panic handler, a job's panic is logged through
// the logger WithLogger gives, at level Error, with the job's name, and
// the scheduler goes on; the library writes nothing to the global log.
func TestWithLogger(t *testing.T) {
	clk := clock.NewVirtual(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	w := timewheel.New(timewheel.WithClock(clk), timewheel.WithExecutor(timewheel.Inline()))
	defer w.Close()
	var buf bytes.Buffer
	s := cron.New(cron.WithWheel(w), cron.WithInline(), cron.WithLogger(slog.New(slog.NewTextHandler(&buf, nil))))
	defer s.Stop(context.Background())
	runs := 0
	if _, err := s.Add("boom", "@every 1s", func(context.Context, time.Time) {
		runs++
		panic("kaboom")
	}); err != nil {
		t.Fatal(err)
	}
	clk.Advance(2 * time.Second)
	out := buf.String()
	if runs != 2 || strings.Count(out, "level=ERROR") != 2 || !strings.Contains(out, "job=boom") || !strings.Contains(out, "panic=kaboom") {
		t.Fatalf("%d runs; logged:\n%s", runs, out)
	}
}
