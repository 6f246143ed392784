package wheelctx

import (
	"context"
	"time"

	"github.com/timewheel/timewheel"
)

// Scheduler makes contexts with deadlines on one wheel. It is made by
// [On]; its zero value uses [timewheel.Default]. A Scheduler is a small
// value, safe for concurrent use and cheap to copy.
//
// The wheel should outlive the contexts: a context made before its wheel
// closes is then done only by its CancelFunc or its parent, since a closed
// wheel fires nothing. A context made on a closed wheel (Wheel.Err is not
// nil) is package context's, with the same deadline on the real clock.
// (The default wheel is never closed.)
type Scheduler struct {
	w *timewheel.Wheel
}

// On returns a Scheduler whose contexts' deadlines are timers on w (nil
// means timewheel.Default()).
func On(w *timewheel.Wheel) Scheduler { return Scheduler{w: w} }

func (s Scheduler) wheel() *timewheel.Wheel {
	if s.w == nil {
		return timewheel.Default()
	}
	return s.w
}

// WithDeadline returns a derived context that is done when the wheel's
// clock reaches d, when the returned cancel function is called, or when
// the parent is done, whichever happens first; as context.WithDeadline.
// Calling cancel releases the wheel timer at once. It panics if parent is
// nil. The complexity is O(1).
func (s Scheduler) WithDeadline(parent context.Context, d time.Time) (context.Context, context.CancelFunc) {
	w := s.wheel()
	return newTimerCtx(w, parent, w.Now(), d, nil)
}

// WithDeadlineCause is WithDeadline, but when the deadline passes the
// context's cause, read by context.Cause, is cause (Err is still
// context.DeadlineExceeded); as context.WithDeadlineCause. A nil cause
// means context.DeadlineExceeded. The complexity is O(1).
func (s Scheduler) WithDeadlineCause(parent context.Context, d time.Time, cause error) (context.Context, context.CancelFunc) {
	w := s.wheel()
	return newTimerCtx(w, parent, w.Now(), d, cause)
}

// WithTimeout returns WithDeadline(parent, now.Add(timeout)), where now is
// the wheel clock's current time; as context.WithTimeout. The complexity
// is O(1).
func (s Scheduler) WithTimeout(parent context.Context, timeout time.Duration) (context.Context, context.CancelFunc) {
	w := s.wheel()
	now := w.Now()
	return newTimerCtx(w, parent, now, now.Add(timeout), nil)
}

// WithTimeoutCause is WithTimeout with the cause of WithDeadlineCause; as
// context.WithTimeoutCause. The complexity is O(1).
func (s Scheduler) WithTimeoutCause(parent context.Context, timeout time.Duration, cause error) (context.Context, context.CancelFunc) {
	w := s.wheel()
	now := w.Now()
	return newTimerCtx(w, parent, now, now.Add(timeout), cause)
}

// WithDeadline is Scheduler.WithDeadline on timewheel.Default(): a drop-in
// for context.WithDeadline.
func WithDeadline(parent context.Context, d time.Time) (context.Context, context.CancelFunc) {
	return Scheduler{}.WithDeadline(parent, d)
}

// WithDeadlineCause is Scheduler.WithDeadlineCause on timewheel.Default():
// a drop-in for context.WithDeadlineCause.
func WithDeadlineCause(parent context.Context, d time.Time, cause error) (context.Context, context.CancelFunc) {
	return Scheduler{}.WithDeadlineCause(parent, d, cause)
}

// WithTimeout is Scheduler.WithTimeout on timewheel.Default(): a drop-in
// for context.WithTimeout.
func WithTimeout(parent context.Context, timeout time.Duration) (context.Context, context.CancelFunc) {
	return Scheduler{}.WithTimeout(parent, timeout)
}

// WithTimeoutCause is Scheduler.WithTimeoutCause on timewheel.Default():
// a drop-in for context.WithTimeoutCause.
func WithTimeoutCause(parent context.Context, timeout time.Duration, cause error) (context.Context, context.CancelFunc) {
	return Scheduler{}.WithTimeoutCause(parent, timeout, cause)
}
