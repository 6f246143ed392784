package wheelvar_test

import (
	"expvar"
	"fmt"
	"testing"

	"github.com/timewheel/timewheel"
	"github.com/timewheel/timewheel/wheelvar"
)

// misuse is one way of holding the package wrong, and what it must do:
// want is "ok" or "panic: " and the panic's value.
type misuse struct {
	name string
	run  func(t *testing.T)
	want string
}

// checkMisuse runs m and checks its outcome.
func checkMisuse(t *testing.T, m misuse) {
	t.Helper()
	got := func() (got string) {
		defer func() {
			if r := recover(); r != nil {
				got = fmt.Sprint("panic: ", r)
			}
		}()
		m.run(t)
		return "ok"
	}()
	if got != m.want {
		t.Errorf("%s:\n got %s\nwant %s", m.name, got, m.want)
	}
}

// runs counts the runs of TestMisuse.
var runs int

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
	// expvar names last for the process: fresh ones for each run, so
	// that -count=2 works.
	runs++
	twice, closed := fmt.Sprintf("misuse_twice_%d", runs), fmt.Sprintf("misuse_closed_%d", runs)
	const already = " is published already; expvar names are for the life of the process (publish each once, from main or a sync.Once)"
	for _, m := range []misuse{
		{"Publish(name, nil)", func(*testing.T) { wheelvar.Publish("misuse_nil", nil) },
			`panic: wheelvar: Publish called with a nil wheel for "misuse_nil"`},
		{"Func(nil)", func(*testing.T) { wheelvar.Func(nil) },
			"panic: wheelvar: Func called with a nil wheel"},
		{"Publish(name, zero Wheel)", func(*testing.T) { wheelvar.Publish("misuse_zero", new(timewheel.Wheel)) },
			"panic: timewheel: Stats called on a zero Wheel; make one with New"},
		{"Func(zero Wheel)", func(*testing.T) { wheelvar.Func(new(timewheel.Wheel)) },
			"panic: timewheel: Stats called on a zero Wheel; make one with New"},
		{"Publish twice", func(t *testing.T) {
			w := newWheel(t)
			wheelvar.Publish(twice, w)
			wheelvar.Publish(twice, w)
		}, fmt.Sprintf("panic: wheelvar: Publish: %q", twice) + already},
		{"Publish a name expvar has", func(t *testing.T) { wheelvar.Publish("memstats", newWheel(t)) },
			`panic: wheelvar: Publish: "memstats"` + already},
		{"Publish a closed wheel", func(t *testing.T) {
			w := newWheel(t)
			w.AfterFunc(0, func() {}) // started, then discarded or fired
			w.Close()
			wheelvar.Publish(closed, w)
			if s := expvar.Get(closed).String(); s == "" || s == "null" {
				t.Errorf("a closed wheel's Stats read %q", s)
			}
		}, "ok"},
	} {
		t.Run(m.name, func(t *testing.T) { checkMisuse(t, m) })
	}
}
