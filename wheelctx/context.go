package wheelctx

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/timewheel/timewheel"
	"github.com/timewheel/timewheel/internal/lockcheck"
	"github.com/timewheel/timewheel/internal/wheelhook"
)

// How a timerCtx was finished by its own hand.
const (
	open     = iota // not finished by the timer or the CancelFunc (maybe by the parent)
	timedOut        // by the wheel timer: Err is DeadlineExceeded
	canceled        // by the CancelFunc
	byParent        // the parent was seen done while open: it finished c
)

// timerCtx is a context done at a deadline on a wheel.
//
// A parent that can be canceled (its Done is not nil) gives it an inner
// context, context.WithCancelCause(parent), through which package context
// cancels it synchronously with the parent. The inner context is made
// only when something can tell it is missing: the first Done, an
// AfterFunc (a derived context), or the cause of a context the parent
// finished. Until then Err reads the parent's Err, and a parent's cancel
// has nothing to tell, so a context made and canceled without Done costs
// no inner context (package context's WithTimeout pays the same
// bookkeeping in its own child). Once made, the timer and the CancelFunc
// cancel it too, with the right cause; Err translates the Canceled that
// results from the timer into DeadlineExceeded. On a parent that cannot
// be canceled, or once c is done without one, Done is a channel of its
// own, made when first asked for, as package context's.
//
// Contexts derived from a timerCtx register with its AfterFunc (see
// Value), so that the timer cancels them with DeadlineExceeded too.
//
// A timerCtx is safe for concurrent use.
type timerCtx struct {
	parent     context.Context
	w          *timewheel.Wheel
	deadline   time.Time
	cause      error           // the cause of timing out: the caller's, or DeadlineExceeded
	timer      timewheel.Timer // started by newTimerCtx in place, unless born done; not copied
	armed      bool            // timer was started; written before it, read by its callback and the CancelFunc
	cancelable bool            // the parent's Done is not nil: it can be canceled

	// in is set once innerLocked, under mu, has made the inner context
	// (inner and cancelInner), if the parent can be canceled. Whoever
	// reads it true may read them without mu.
	in          atomic.Bool
	how         atomic.Uint32 // open, then timedOut or canceled (by finish, under mu, before Done is closed) or byParent (by Err); set once
	inner       context.Context
	cancelInner context.CancelCauseFunc
	done        atomic.Pointer[byte] // the Done channel's runtime object, without inner: made by Done or finish, closed by finish (see loadDone)

	mu    sync.Mutex
	extra *ctxExtra // guarded by mu; made by the first AfterFunc or cancelCtxValue that needs it
}

// ctxExtra is what few contexts need: a derived context or an AfterFunc,
// or the cause a child of package context's looks up. Kept apart, it
// leaves timerCtx 16 bytes smaller, a size class down (TestContextSize).
// Its fields are guarded by the timerCtx's mu.
type ctxExtra struct {
	after    map[*afterFunc]struct{} // funcs registered by AfterFunc
	stop     func() bool             // stops the AfterFunc on inner that serves after
	causeCtx context.Context         // a canceled *cancelCtx carrying the cause of timedOut, or Canceled without inner
}

// extraLocked returns c's ctxExtra, made now if it was not yet.
func (c *timerCtx) extraLocked() *ctxExtra {
	lockcheck.Held(&c.mu, "timerCtx.extraLocked")
	if c.extra == nil {
		c.extra = new(ctxExtra)
	}
	return c.extra
}

type afterFunc struct{ f func() }

// closedChan is the Done of a context without inner that is done before
// anything asked for its Done.
var closedChan = func() chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}()

// newTimerCtx returns a context done at deadline d on w, whose clock read
// now, with cause as the cause of its timing out (nil for
// DeadlineExceeded).
func newTimerCtx(w *timewheel.Wheel, parent context.Context, now, d time.Time, cause error) (context.Context, context.CancelFunc) {
	if parent == nil {
		panic("wheelctx: cannot create context from nil parent")
	}
	if cur, ok := parent.Deadline(); ok && cur.Before(d) {
		// The parent is done first: this is no different from WithCancel,
		// and package context returns exactly that.
		return context.WithCancel(parent)
	}
	if w.Err() != nil {
		// A closed wheel fires nothing: let package context keep the
		// deadline, so that the context still times out.
		return context.WithDeadlineCause(parent, d, cause)
	}
	if cause == nil {
		cause = context.DeadlineExceeded
	}
	c := &timerCtx{parent: parent, cancelable: parent.Done() != nil, w: w, deadline: d, cause: cause}
	f := c.cancelOrExpire // one func is both the CancelFunc and the timer's callback
	if dur := d.Sub(now); dur <= 0 {
		c.finish(timedOut, cause) // the deadline has already passed
	} else if c.parentErr() == nil { // else the parent is done already
		c.armed = true
		wheelhook.AfterFuncAt(unsafe.Pointer(w), unsafe.Pointer(&c.timer), now, dur, f)
	}
	return c, f
}

// parentErr returns the inner context's Err, or the parent's while c
// has no inner context; nil if the parent cannot be canceled.
func (c *timerCtx) parentErr() error {
	if c.in.Load() {
		return c.inner.Err()
	}
	if c.cancelable {
		return c.parent.Err()
	}
	return nil
}

// innerLocked returns c's inner context, made now if it was not yet. The
// parent must be one that can be canceled.
func (c *timerCtx) innerLocked() context.Context {
	lockcheck.Held(&c.mu, "timerCtx.innerLocked")
	if !c.in.Load() {
		c.inner, c.cancelInner = context.WithCancelCause(c.parent)
		c.in.Store(true)
	}
	return c.inner
}

// cancelOrExpire is both the CancelFunc and the wheel timer's callback,
// which saves an allocation per context. Stopping the timer tells them
// apart: if Stop stops it, this is the CancelFunc, before the deadline.
// Otherwise the timer has fired (this may be it) or never will (it was
// never set, or its wheel is closed), and the wheel clock says whether the
// deadline has passed.
func (c *timerCtx) cancelOrExpire() {
	if c.armed && c.timer.Stop() {
		c.finish(canceled, context.Canceled)
		return
	}
	if c.w.Now().Before(c.deadline) {
		c.finish(canceled, context.Canceled)
		return
	}
	c.finish(timedOut, c.cause)
}

// finish cancels c, how it says, with cause, unless c is done already,
// and then cancels the contexts registered with AfterFunc, synchronously,
// as package context cancels its children.
func (c *timerCtx) finish(how uint32, cause error) {
	c.mu.Lock()
	// Compare-and-swap, not a store: if Err has seen the parent done
	// meanwhile, it has fixed the answer (byParent), and it stands.
	if c.parentErr() != nil || !c.how.CompareAndSwap(open, how) {
		c.mu.Unlock()
		return
	}
	// how is set before Done is closed: whoever sees Done closed sees how.
	x := c.extra
	if x != nil && x.stop != nil {
		x.stop() // the funcs run here, not on a goroutine
	}
	if c.in.Load() {
		c.cancelInner(cause)
	} else if d := c.loadDone(); d != nil {
		close(d)
	} else {
		c.storeDone(closedChan)
	}
	var after map[*afterFunc]struct{}
	if x != nil {
		after, x.after = x.after, nil
	}
	c.mu.Unlock()
	for a := range after {
		a.f()
	}
}

// Done returns a channel closed when the context is done: the inner
// context's, made now, if the parent can be canceled and c is still open;
// else one of c's own, made on the first call, as package context's.
func (c *timerCtx) Done() <-chan struct{} {
	if c.in.Load() {
		return c.inner.Done()
	}
	if d := c.loadDone(); d != nil {
		return d
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if d := c.loadDone(); d != nil {
		return d
	}
	if c.how.Load() != open {
		c.storeDone(closedChan) // finished before anything asked
		return closedChan
	}
	if c.cancelable {
		return c.innerLocked().Done()
	}
	d := make(chan struct{})
	c.storeDone(d)
	return d
}

// loadDone returns c's own Done channel, or nil if it has none yet. A
// channel is one pointer, to its runtime object: done holds that, which
// keeps the channel alive, so that setting it is one atomic store where
// an atomic.Value's first Store pins the processor and takes two
// (BenchmarkCreateCancel).
func (c *timerCtx) loadDone() chan struct{} {
	p := c.done.Load()
	return *(*chan struct{})(unsafe.Pointer(&p))
}

// The casts of loadDone and storeDone rely on a channel being one
// pointer: this fails to compile (index out of range) if it is not.
var _ = [1]struct{}{}[unsafe.Sizeof(make(chan struct{}))-unsafe.Sizeof(unsafe.Pointer(nil))]

// storeDone sets c's own Done channel to d (see loadDone).
func (c *timerCtx) storeDone(d chan struct{}) {
	c.done.Store(*(**byte)(unsafe.Pointer(&d)))
}

// Deadline returns the context's deadline, on the wheel's clock.
func (c *timerCtx) Deadline() (time.Time, bool) { return c.deadline, true }

// Err returns nil while the context is open, DeadlineExceeded once its
// deadline has passed, Canceled once its CancelFunc was called, and the
// parent's error if the parent was done first.
func (c *timerCtx) Err() error {
	for {
		switch c.how.Load() {
		case timedOut:
			return context.DeadlineExceeded
		case canceled:
			return context.Canceled
		case byParent:
			return c.parent.Err()
		}
		if c.parentErr() == nil {
			return nil
		}
		// Done: neither the timer nor the CancelFunc has claimed it yet,
		// so the parent did. That answer is final, so Err never changes
		// once it is not nil, even when the timer fires as the parent is
		// canceled. (If one of them claimed it meanwhile, the loop reads
		// its answer.)
		c.how.CompareAndSwap(open, byParent)
	}
}

// Value returns the parent's value for key, except for package context's
// private key (see cancelCtxKey).
func (c *timerCtx) Value(key any) any {
	if key == cancelCtxKey && key != nil {
		return c.cancelCtxValue()
	}
	return c.parent.Value(key)
}

// cancelCtxValue answers context's private key, which context.Cause uses
// to find the cause and context.WithCancel to find where to attach a
// child. An open context answers a never-canceled context, so that Cause
// reads nil and children come to AfterFunc. A context the parent
// finished answers inner, made now if it was not, so that package
// context finds the parent's cause as it does for its own children; one
// the CancelFunc finished answers inner if it has one. A context that
// timed out, or was canceled without inner, answers a canceled context
// carrying the cause, not inner, whose Done is c's: a child attached to
// inner would be told Canceled rather than DeadlineExceeded.
func (c *timerCtx) cancelCtxValue() any {
	if c.Err() == nil {
		return neverCanceled
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	how := c.how.Load()
	if how == byParent || how == canceled && c.in.Load() {
		return c.innerLocked().Value(cancelCtxKey)
	}
	x := c.extraLocked()
	if x.causeCtx == nil {
		cause := c.cause
		if how != timedOut {
			cause = context.Canceled
		}
		var cancel context.CancelCauseFunc
		x.causeCtx, cancel = context.WithCancelCause(context.Background())
		cancel(cause)
	}
	return x.causeCtx.Value(cancelCtxKey)
}

// AfterFunc arranges to call f once the context is done, and returns a
// function that prevents the call if it has not started, reporting
// whether it did. Package context calls it to attach a derived context;
// context.AfterFunc(ctx, f) goes through it too. f is called
// synchronously when the deadline passes or the CancelFunc is called, on
// its own goroutine when the parent is canceled or the context is done
// already. It panics if f is nil (package context's own contexts would
// crash later, running it).
func (c *timerCtx) AfterFunc(f func()) (stop func() bool) {
	if f == nil {
		panic("wheelctx: AfterFunc called with a nil func")
	}
	c.mu.Lock()
	if c.how.Load() != open || c.parentErr() != nil {
		c.mu.Unlock()
		go f()
		return func() bool { return false }
	}
	a := &afterFunc{f: f}
	x := c.extraLocked()
	if x.after == nil {
		x.after = make(map[*afterFunc]struct{})
	}
	x.after[a] = struct{}{}
	if x.stop == nil && c.cancelable {
		x.stop = context.AfterFunc(c.innerLocked(), c.parentDone)
	}
	c.mu.Unlock()
	return func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		_, ok := x.after[a]
		delete(x.after, a)
		return ok
	}
}

// parentDone runs, on its own goroutine, when inner is done without
// finish: when the parent was canceled.
func (c *timerCtx) parentDone() {
	c.mu.Lock()
	after := c.extra.after // AfterFunc made extra before it set this up
	c.extra.after = nil
	c.mu.Unlock()
	for a := range after {
		a.f()
	}
}

// String describes the context as package context does.
func (c *timerCtx) String() string {
	return fmt.Sprintf("%s.WithDeadline(%s [%s])", contextName(c.parent), c.deadline, c.deadline.Sub(c.w.Now()))
}

// contextName names a context as package context does: its String, or
// its type.
func contextName(c context.Context) string {
	if s, ok := c.(fmt.Stringer); ok {
		return s.String()
	}
	return fmt.Sprintf("%T", c)
}
