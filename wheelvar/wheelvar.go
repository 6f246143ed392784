// Package wheelvar publishes a wheel's [timewheel.Stats] through package
// expvar, so that they appear, as JSON, at /debug/vars beside the
// runtime's memstats:
//
//	wheelvar.Publish("timewheel", timewheel.Default())
//
// It is a package of its own, not a function of package timewheel.
// Importing expvar registers the /debug/vars handler on
// http.DefaultServeMux and links net/http. A program that uses timers
// should not expose its command line and memory statistics on its default
// mux, nor pay for net/http, unless it asks to.
//
// The Stats of the applications publish the same way, through
// expvar.Func:
//
//	expvar.Publish("sessions", expvar.Func(func() any { return sessions.Stats() }))
package wheelvar

import (
	"expvar"
	"fmt"

	"github.com/timewheel/timewheel"
)

// Publish publishes w's Stats under name. Each time /debug/vars is served
// (or expvar.Get(name) is read), Stats is called. Its result is written
// as a JSON object with the field names of [timewheel.Stats] (durations
// in nanoseconds). A closed wheel's Stats are published as well.
//
// Like expvar.Publish, it panics if name is in use already. (expvar
// cannot unpublish a name: publish once per process, from main or under a
// sync.Once.) It panics too if w is nil or a zero Wheel, rather than
// when the variable is read. The complexity of each reading is that of
// [timewheel.Wheel.Stats].
func Publish(name string, w *timewheel.Wheel) {
	if w == nil {
		panic(fmt.Sprintf("wheelvar: Publish called with a nil wheel for %q", name))
	}
	w.Stats() // a zero Wheel panics here, naming the method
	if expvar.Get(name) != nil {
		panic(fmt.Sprintf("wheelvar: Publish: %q is published already; expvar names are for the life of the process (publish each once, from main or a sync.Once)", name))
	}
	expvar.Publish(name, Func(w))
}

// Func returns w's Stats as an expvar.Var, for a caller that publishes it
// itself, say inside an expvar.Map of its own. It panics if w is nil or a
// zero Wheel.
func Func(w *timewheel.Wheel) expvar.Func {
	if w == nil {
		panic("wheelvar: Func called with a nil wheel")
	}
	w.Stats() // a zero Wheel panics here, naming the method
	return func() any { return w.Stats() }
}
