// Package queue holds timewheel's single-goroutine timer queues. They are
// the interface they share, the engine (a hierarchical timing wheel,
// [Wheel]), and a plain reference ([Reference], a binary heap) that the
// tests use as an oracle. The lab adds the other structures from the reference
// documents behind the same interface.
//
//	w := queue.NewWheel()
//	e := w.Schedule(5) // due at tick 5
//	w.Expire(5, func(*queue.Entry) { fmt.Println("fired at tick", w.Now()) })
//	w.Cancel(e)        // false: it has fired
//
// Time in this package is a count of ticks, an int64. A queue has a current
// tick, moved forward only by Expire; a deadline at or before it means "due
// now". No queue reads a clock or starts a goroutine, and none is safe for
// concurrent use: the scheduler in the root package adds the lock and the
// clock.
package queue

// Queue is a timer queue. H is the queue's handle to one timer, returned by
// Schedule and passed back to Cancel and Reschedule.
//
// Every Queue keeps the same contract:
//   - Never early: Expire(now) fires only timers whose deadline is at or
//     before now.
//   - Exactly once: a timer fires once per Schedule or Reschedule, and a
//     timer whose Cancel returned true does not fire.
//   - Order: one Expire call fires timers in deadline order and timers with
//     equal deadlines in the order they were scheduled or rescheduled.
//   - Due now: a deadline at or before the queue's current tick is treated
//     as the current tick.
//
// A Queue is not safe for concurrent use.
type Queue[H comparable] interface {
	// Schedule adds a timer that falls due at tick when and returns its
	// handle.
	Schedule(when int64) H
	// Cancel removes a pending timer. It returns true if the timer was
	// pending, false if it had fired or been cancelled already.
	Cancel(h H) bool
	// Reschedule moves a timer to tick when, scheduling it anew if it had
	// fired or been cancelled. It returns true if the timer was pending.
	Reschedule(h H, when int64) bool
	// Expire moves the queue's current tick forward to now and calls fire
	// for every timer due by then, in order, removing each before its call.
	// It returns the number of timers fired. A now before the current tick
	// leaves the queue unchanged. fire must not call Expire; it may
	// schedule, cancel and reschedule. A timer fire schedules at or before
	// now may fire later in the same call or wait for the next one, as the
	// implementation finds cheaper. It may come after timers due later
	// that were pending before the call. It is never lost and never fires
	// early.
	Expire(now int64, fire func(H)) int
	// Next returns the earliest deadline among pending timers and false if
	// none is pending. A deadline at or before the current tick is reported
	// as the current tick.
	Next() (int64, bool)
	// Len returns the number of pending timers.
	Len() int
}
