package timewheel

import "time"

// DueAt returns the instant w has t due at, on w's clock (its deadline
// rounded up to the tick), and false if t is not pending: for the
// benchmarks that measure a burst's lateness against the deadlines the
// wheel itself took.
func DueAt(w *Wheel, t *Timer) (time.Time, bool) {
	when := t.e.When()
	if when < 0 {
		return time.Time{}, false
	}
	return w.epoch.Add(time.Duration(when) * w.tick), true
}
