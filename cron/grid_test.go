package cron_test

import (
	"testing"
	"time"

	"github.com/timewheel/timewheel/cron"
)

// OnEpochGrid puts "@every" on the multiples of its period since the
// Unix epoch, and leaves a calendar spec as Parse made it.
func TestOnEpochGrid(t *testing.T) {
	every, err := cron.Parse("@every 1500ms", time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	g := cron.OnEpochGrid(every)
	from := time.Date(2026, 3, 1, 9, 0, 0, 700_000_000, time.UTC)
	if got, want := g.Next(from), time.Date(2026, 3, 1, 9, 0, 1, 500_000_000, time.UTC); !got.Equal(want) {
		t.Errorf("grid Next(%v) = %v, want %v", from, got, want)
	}
	if got := cron.OnEpochGrid(g).Next(from); !got.Equal(g.Next(from)) {
		t.Errorf("OnEpochGrid twice: %v, want %v", got, g.Next(from))
	}
	cal, err := cron.Parse("*/5 * * * * *", time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := cron.OnEpochGrid(cal).Next(from), cal.Next(from); !got.Equal(want) {
		t.Errorf("calendar spec: %v, want %v", got, want)
	}
}
