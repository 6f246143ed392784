package wheelvar_test

import (
	"expvar"
	"fmt"
	"testing"

	"github.com/timewheel/timewheel"
	"github.com/timewheel/timewheel/internal/misusetest"
	"github.com/timewheel/timewheel/wheelvar"
)

// names counts the expvar names fresh has made.
var names int

// fresh returns an expvar name made of prefix that no run of a test has
// published yet: expvar names last for the process, so a test that
// publishes one takes a fresh one each run, and -count=2 works.
func fresh(prefix string) string {
	names++
	return fmt.Sprintf("%s_%d", prefix, names)
}

// newWheel returns a wheel closed at cleanup.
func newWheel(t *testing.T) *timewheel.Wheel {
	t.Helper()
	w := timewheel.New()
	t.Cleanup(func() { w.Close() })
	return w
}

// TestMisuse: nil and zero wheels are refused when published, not when
// /debug/vars is served; a name published twice panics with the package's
// name; a closed wheel's Stats are still published.
func TestMisuse(t *testing.T) {
	twice, closed := fresh("misuse_twice"), fresh("misuse_closed")
	const already = " is published already; expvar names are for the life of the process (publish each once, from main or a sync.Once)"
	for _, m := range []misusetest.Case{
		{Name: "Publish(name, nil)", Do: func(*testing.T) { wheelvar.Publish("misuse_nil", nil) },
			Want: `panic: wheelvar: Publish called with a nil wheel for "misuse_nil"`},
		{Name: "Func(nil)", Do: func(*testing.T) { wheelvar.Func(nil) },
			Want: "panic: wheelvar: Func called with a nil wheel"},
		{Name: "Publish(name, zero Wheel)", Do: func(*testing.T) { wheelvar.Publish("misuse_zero", new(timewheel.Wheel)) },
			Want: "panic: timewheel: Stats called on a zero Wheel; make one with New"},
		{Name: "Func(zero Wheel)", Do: func(*testing.T) { wheelvar.Func(new(timewheel.Wheel)) },
			Want: "panic: timewheel: Stats called on a zero Wheel; make one with New"},
		{Name: "Publish twice", Do: func(t *testing.T) {
			w := newWheel(t)
			wheelvar.Publish(twice, w)
			wheelvar.Publish(twice, w)
		}, Want: fmt.Sprintf("panic: wheelvar: Publish: %q", twice) + already},
		{Name: "Publish a name expvar has", Do: func(t *testing.T) { wheelvar.Publish("memstats", newWheel(t)) },
			Want: `panic: wheelvar: Publish: "memstats"` + already},
		{Name: "Publish a closed wheel", Do: func(t *testing.T) {
			w := newWheel(t)
			w.AfterFunc(0, func() {}) // started, then discarded or fired
			w.Close()
			wheelvar.Publish(closed, w)
			if s := expvar.Get(closed).String(); s == "" || s == "null" {
				t.Errorf("a closed wheel's Stats read %q", s)
			}
		}, Want: "ok"},
	} {
		t.Run(m.Name, func(t *testing.T) { misusetest.Check(t, m) })
	}
}
