package cron_test

import (
	"errors"
	"testing"
	"time"

	"github.com/timewheel/timewheel/cron"
)

// Parse never panics: any string is a schedule or an error wrapping
// ErrSpec or ErrZone; a schedule's Next moves forward or ends.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"0 9 * * TUE", "@every 1500ms", "CRON_TZ=Europe/Berlin 30 2 * * *", "TZ=", "@every", "*/15 1 * * *", "0 0 30 2 *", "? ? ? ? ?", "@hourly", "1-5/2 * * * * *"} {
		f.Add(s)
	}
	from := time.Date(2026, 3, 8, 1, 59, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, spec string) {
		sched, err := cron.Parse(spec, time.UTC)
		if err != nil {
			if !errors.Is(err, cron.ErrSpec) && !errors.Is(err, cron.ErrZone) {
				t.Fatalf("Parse(%q): %v, neither ErrSpec nor ErrZone", spec, err)
			}
			return
		}
		if next := sched.Next(from); !next.IsZero() && !next.After(from) {
			t.Fatalf("Parse(%q): Next(%v) = %v, not after", spec, from, next)
		}
	})
}
