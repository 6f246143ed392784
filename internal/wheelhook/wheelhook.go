// Package wheelhook lets the module's own packages start a timer in
// memory they allocated, where the root package's API allocates it, and
// ask what clock a wheel runs on. wheelctx embeds its context's timer in
// the context so, which saves an allocation per context. The root
// package sets the hooks in its init, so they are set before any
// package that imports the root package uses them.
package wheelhook

import (
	"time"
	"unsafe"
)

// AfterFuncAt starts the zero *timewheel.Timer t on the *timewheel.Wheel
// w, due d after now, to call f: as w.AfterFunc(d, f), in t. now is a
// reading of w's clock taken just before the call (w.Now()), or the zero
// Time for the wheel to read its clock itself. The caller must not copy t
// afterwards. It panics as AfterFunc does.
var AfterFuncAt func(w, t unsafe.Pointer, now time.Time, d time.Duration, f func())

// RealClock reports whether the *timewheel.Wheel w runs on clock.Real,
// the clock of package time's own timers.
var RealClock func(w unsafe.Pointer) bool
