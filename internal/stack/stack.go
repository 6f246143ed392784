// Package stack tells a component whether the calling goroutine runs one
// of its callbacks, from the functions on the goroutine's stack. Go gives
// a goroutine no identity a library can read. Yet a Close or Stop called
// from a callback must not wait for that callback, which is itself. The
// components that need to know ask here: the wheel's Close, expiry's
// Close and Flush, cron's Stop. They ask on those rare calls only, so
// running a callback costs nothing extra.
//
// The downside of this choice is that a function's frames say which
// function runs, not for which value. A callback of one wheel, map or
// scheduler looks like a callback of any other; the components document
// what that means for them.
package stack

import (
	"reflect"
	"runtime"
	"strings"
)

// FuncName returns the name that runtime frames give the function f, such
// as "github.com/timewheel/timewheel.(*Pool).run" for the method
// expression (*Pool).run.
func FuncName(f any) string {
	return runtime.FuncForPC(reflect.ValueOf(f).Pointer()).Name()
}

// Has reports whether a function whose name starts with one of prefixes
// is on the stack of the calling goroutine, above the caller of Has. A
// prefix matches the closures and deferred functions a function holds
// ("….run.func1") and every instance of a generic one ("….(*Map[...]).call").
// The complexity is O(depth of the stack).
func Has(prefixes ...string) bool {
	pcs := make([]uintptr, 64)
	n := runtime.Callers(3, pcs)
	for n == len(pcs) {
		pcs = make([]uintptr, 2*len(pcs))
		n = runtime.Callers(3, pcs)
	}
	frames := runtime.CallersFrames(pcs[:n])
	for {
		f, more := frames.Next()
		for _, p := range prefixes {
			if strings.HasPrefix(f.Function, p) {
				return true
			}
		}
		if !more {
			return false
		}
	}
}
