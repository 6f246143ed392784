// Package timewheel is package time's timers for programs with millions
// of them: AfterFunc, NewTimer, After, NewTicker and Sleep with the same
// names and the same Go 1.23 semantics, on a hierarchical timing wheel
// whose schedule, stop and reset cost O(1) whatever the number pending.
//
// Switching is a one-word change:
//
//	t := timewheel.AfterFunc(30*time.Second, closeIdle) // was time.AfterFunc
//	defer t.Stop()
//
// The package-level functions use a default wheel with a one-millisecond
// tick. [New] makes a wheel of one's own, with a tick ([WithTick]), a
// clock ([WithClock]), an executor ([WithExecutor], [WithWorkers]), a
// panic handler ([WithPanicHandler]) and shards for many goroutines
// ([WithShards]).
//
// # Guarantees
//
//   - Never early: deadlines round up to the tick; a timer fires at most
//     one tick plus the driver's own delay after its deadline.
//   - Exactly once: a timer whose Stop returned true never fires; Reset on
//     a fired or stopped timer schedules it anew.
//   - Order: timers due at the same tick fire in the order they were
//     started or reset, and earlier deadlines before later ones.
//   - Range: any time.Duration is accepted; zero or negative means now, and
//     deadlines past the end of time saturate instead of wrapping.
//   - Idle: with nothing pending a wheel has no goroutine and no wakeup;
//     pending timers cost one wakeup per distinct due tick.
//
// # Callbacks
//
// AfterFunc callbacks do not each get a goroutine, as they do in package
// time: the driver hands them, in deadline order, to the wheel's
// [Executor]. The default is a [Pool] of at most [DefaultWorkers]
// goroutines, started on demand and gone when idle. A callback that blocks
// holds a worker; give long or blocking work its own goroutine, a larger
// pool ([WithWorkers]), or an Executor of your own. A panicking callback
// crashes the program, as with time.AfterFunc, unless [WithPanicHandler]
// is set.
package timewheel
