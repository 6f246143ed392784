// Package wheelctx makes contexts whose deadlines are timers on a
// [timewheel.Wheel] instead of the runtime's: WithTimeout, WithDeadline,
// WithTimeoutCause and WithDeadlineCause, with package context's names
// and behaviour.
//
//	ctx, cancel := wheelctx.WithTimeout(r.Context(), 2*time.Second) // was context.WithTimeout
//	defer cancel()
//
// A server that gives every request a deadline keeps one pending timer per
// request in flight, and cancels nearly all of them before they fire. On a
// wheel that is O(1) per request whatever the number in flight.
//
// # Which wheel
//
// The package-level functions use [timewheel.Default], so switching is a
// one-word change:
//
//	ctx, cancel := wheelctx.WithTimeout(r.Context(), 2*time.Second) // was context.WithTimeout
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
// The contexts behave as package context's own, and the tests run both
// side by side:
//   - Done is closed, synchronously, when the deadline passes, when the
//     CancelFunc is called, or when the parent is done first. Err then
//     returns context.DeadlineExceeded, context.Canceled or the parent's
//     error.
//   - [context.Cause] returns the cause given to the *Cause variants, or
//     the error, or the parent's cause.
//   - A parent whose deadline is earlier makes the call return
//     context.WithCancel(parent), as package context does.
//   - Contexts derived from one of these (by package context or by this
//     package) are done with the same error and cause.
//
// The CancelFunc is idempotent and releases the wheel timer at once.
//
// Three differences remain, in when things happen rather than in what a
// caller finally observes:
//
//   - When the parent is canceled, the context is canceled at once, but
//     its wheel timer stays pending until the CancelFunc is called (which
//     `go vet` insists on) or the deadline passes; package context stops
//     the timer with the parent.
//   - Contexts derived from one of these directly by package context
//     (context.WithCancel(ctx), WithTimeout, AfterFunc, ...) are canceled
//     synchronously when the deadline passes or the CancelFunc is called,
//     but, when it is the parent further up that is canceled, on a
//     goroutine an instant later: package context offers an outside
//     Context no synchronous hook into a parent's cancellation.
//   - Contexts derived through a wrapper that has no AfterFunc method,
//     such as context.WithValue(ctx, k, v), are watched by package
//     context with one goroutine each, and are canceled an instant after
//     this context, with the same error and cause. (Under package
//     context's own deadlines they are canceled synchronously: its
//     private types recognise each other through a wrapper; an outside
//     Context can be recognised only by its AfterFunc method, or by
//     handing package context an inner context, whose error would then
//     be Canceled where it must be DeadlineExceeded.) Derive request
//     values before the deadline (WithTimeout(WithValue(ctx, ...))) where
//     it matters.
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
// A context on a parent that can be canceled wraps a
// context.WithCancelCause of the parent, which gives it synchronous
// cancellation by the parent and carries the cause. It makes that inner
// context when something could tell it is missing: the first Done, a
// derived context, or the cause of a cancellation by the parent. Until
// then Err reads the parent's Err, so a context made and canceled
// without a Done costs no more on such a parent than on Background. The
// wheel timer cancels the inner context with the caller's cause (or
// DeadlineExceeded), and Err turns the resulting Canceled into
// DeadlineExceeded. So that derived contexts also see DeadlineExceeded,
// the context keeps them to itself, through the AfterFunc method that
// package context looks for on a parent, rather than letting them attach
// to the inner context.
package wheelctx
