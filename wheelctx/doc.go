// Package wheelctx makes contexts whose deadlines are timers on a
// [timewheel.Wheel] instead of the runtime's: WithTimeout, WithDeadline,
// WithTimeoutCause and WithDeadlineCause, with package context's names
// and behaviour.
//
//	ctx, cancel := wheelctx.WithTimeout(context.Background(), 2*time.Second) // was context.WithTimeout
//	defer cancel()
//
// A service that gives every job, poll or outgoing call a deadline keeps
// one pending timer per call in flight, and cancels nearly all of them
// before they fire. On a wheel that is O(1) per call whatever the number
// in flight. Contexts on a parent that package context can cancel (an
// http.Request's) are package context's own: see "Which contexts are on
// the wheel".
//
// # Which wheel
//
// The package-level functions use [timewheel.Default], so switching is a
// one-word change:
//
//	ctx, cancel := wheelctx.WithTimeout(ctx, 2*time.Second) // was context.WithTimeout
//	defer cancel()
//
// [On] returns a [Scheduler] bound to a wheel of one's own, whose methods
// are the same four functions; a test passes a wheel on a virtual clock
// and moves time itself:
//
//	sched := wheelctx.On(w)
//	ctx, cancel := sched.WithTimeout(parent, time.Second)
//
// Deadlines are read from and measured on the wheel's clock: Deadline
// reports the wheel clock's time, and the context is done at the first
// wheel tick at or after it, never before.
//
// # Behaviour
//
// The contexts behave as package context's own at every step, not only
// at the end, and the differential tests (differential_test.go) run
// random chains of every kind of context on both and compare every
// observable after every step, on the real clock with no wait between a
// step and the reads after it, and in a synctest bubble:
//   - Done is closed, before the call that caused it returns, when the
//     deadline passes, when the CancelFunc is called, or when any
//     ancestor is canceled; so are the Done channels of every context
//     derived from it, by package context (directly, or through
//     context.WithValue or a type that embeds it) or by this package.
//     Err is nil exactly while Done is open, and then returns
//     context.DeadlineExceeded, context.Canceled or the parent's error.
//   - [context.Cause] returns the cause given to the *Cause variants, or
//     the error, or the ancestor's cause.
//   - Done returns one channel on every call.
//   - A parent whose deadline is earlier makes the call return
//     context.WithCancel(parent), as package context does.
//   - No goroutine is held per context; a parent's cancel releases its
//     descendants' wheel timers and memory, CancelFunc or not.
//
// # Which contexts are on the wheel
//
// A context is on the wheel when nothing but this package can cancel its
// ancestors: its parent is context.Background, context.TODO, a context
// without a Done (context.WithoutCancel, WithValue of those), or a
// context of this package that is on the wheel itself. That is where the
// wheel wins (docs/benchmarks.md): background work, jobs, and the
// contexts a server derives from one of its own deadlines.
//
// On a parent that package context can cancel, such as an
// http.Request's context, the functions return package context's own
// context.WithDeadlineCause. Package context offers an outside Context
// no synchronous hook into such a parent's cancellation. An outside
// context is canceled with the parent only through a child of package
// context's (context.WithCancelCause of the parent). That child's own
// children are then canceled with Canceled at the deadline, where they
// must see DeadlineExceeded. And the parent's cancel can neither stop
// the outside wheel timer nor free its memory. Only package context's
// timerCtx does all three. So a drop-in that behaves the same at every
// step there is package context's own, at package context's cost
// (BenchmarkCreateCancelFloor measures the alternatives).
//
// # Differences
//
// Two remain, both in what package context cannot do, not in what a
// caller observes:
//   - Deadlines are on the wheel's clock, and a context on the wheel is
//     done at the first wheel tick at or after its deadline (never
//     before), where package context's timer fires at the deadline.
//   - On a wheel whose clock is not the real one (a test's
//     clock.Virtual), a context on a parent that package context can
//     cancel is on the wheel too, through a context.WithCancelCause of
//     the parent. It is canceled with the parent synchronously. But
//     when it times out, the contexts package context derives from it
//     see Canceled, with the cause DeadlineExceeded. And the parent's
//     cancel leaves its wheel timer pending until its CancelFunc is
//     called, its Err is read or its deadline passes.
//     TestVirtualClockDifferences pins both.
//
// # Misuse
//
// As in package context, a nil parent panics ("wheelctx: cannot create
// context from nil parent"). Any duration or deadline is accepted: one
// already past makes a context that is done at once, one that overflows
// saturates. The CancelFunc may be called any number of times, from
// anywhere, including from a function the context runs when it is done.
// A timeout shorter than the wheel's tick is rounded up to the tick,
// never down. The zero [Scheduler] and On(nil) use [timewheel.Default]; a
// zero Wheel panics, naming the method, at the first context made on it.
// On a closed wheel the contexts are package context's (see Scheduler).
//
// # How
//
// A context on the wheel is finished in one place (finish), by its
// timer, its CancelFunc or its parent, which keeps its children on the
// wheel in a set and finishes them before its own finish returns, as
// package context's cancelCtx does. At the first Done it makes one
// context of package context's, context.WithCancelCause of a small
// Context of its own that package context knows only by its AfterFunc
// method: package context hands that method the function that cancels
// the child with the parent's Err and Cause, and finish calls it. The
// context then answers package context's private key with that child,
// whose Done is its Done, so that package context attaches its own
// derived contexts there, through WithValue too, and cancels them with
// the right error, synchronously, without a goroutine.
package wheelctx
