// Package timewheel is package time's timers for programs with millions
// of them. AfterFunc, NewTimer, After, NewTicker, Tick and Sleep keep
// their names and their Go 1.23 semantics; the differences are listed
// below, all of them. They run on a hierarchical timing wheel whose
// schedule, stop and reset cost O(1) whatever the number pending.
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
//   - Order: earlier deadlines fire before later ones. Timers due at the
//     same tick fire in the order they were started or reset, if they are
//     on the same shard and were not postponed. (A goroutine's timers are
//     on its processor's shard; see WithShards.) A Reset that moves a
//     pending timer later does not move it in the wheel. The timer joins
//     the timers of its new tick, behind those there, only when its old
//     deadline comes round.
//   - Range: any time.Duration is accepted; zero or negative means now, and
//     deadlines past the end of time saturate instead of wrapping.
//   - Idle: with nothing pending a wheel has no goroutine and no wakeup.
//     Pending timers cost one wakeup per distinct due tick, whatever the
//     number of shards. A few cases add a wakeup with nothing due:
//     [Wheel] lists them.
//
// # Differences from package time
//
// These are all of them; everything else behaves as package time does
// since Go 1.23, which the tests check side by side.
//
//   - Deadlines round up to the wheel's tick (default one millisecond,
//     WithTick). A timer fires up to one tick, plus the driver's delay,
//     after package time's would, and never before. A Ticker keeps to the
//     exact grid of its period, but each tick rounds up the same way (see
//     [Ticker]).
//   - A Timer's and Ticker's C has a buffer of one, as before Go 1.23:
//     len(C) and cap(C) report 1 where Go 1.23's report 0. Stop and Reset
//     take back an unreceived value. So no stale value is received after
//     they return, as in Go 1.23.
//   - AfterFunc callbacks run through the wheel's Executor (a bounded
//     pool by default), not on a goroutine each: a callback that blocks
//     holds a worker. WithPanicHandler can recover a panicking callback.
//   - A Wheel made by New can be closed (Close): its pending timers are
//     dropped and timers made on it afterwards never fire. The default
//     wheel, like package time's timers, serves the whole process and
//     cannot be closed.
//   - The default wheel belongs to the whole process, so it cannot be used
//     inside a testing/synctest bubble (see [Default]).
//   - AfterFunc panics at once on a nil func, where package time accepts
//     it and the program dies when the timer fires.
//   - (*Wheel).Resolution, Len, Discarded and Err have no counterpart in
//     package time.
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
