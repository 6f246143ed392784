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

// How a timerCtx was finished. how goes from open to one of the others
// once, under mu, before Done is closed; Err and Cause are read from it.
const (
	open     = iota // not done
	timedOut        // by the wheel timer: Err is DeadlineExceeded, Cause the caller's cause
	canceled        // by the CancelFunc: Err and Cause are Canceled
	byParent        // by the parent: Err and Cause are the parent's
)

// timerCtx is a context done at a deadline on a wheel. It lives in one
// of two worlds, fixed when it is made (see newTimerCtx and the package
// doc's "How"):
//
//   - Closed: no ancestor can be canceled except contexts of this
//     package that are closed too. Every cancellation that reaches c
//     goes through finish: its timer, its CancelFunc, or the finish of
//     its parent (up), which holds c among its kids and finishes them
//     synchronously. c then needs package context for one thing only:
//     a *cancelCtx whose children are package context's derived
//     contexts. It makes one, inner, at the first Done (package context
//     asks for Done before it attaches a child), as a child of inner
//     itself, which package context knows only by its AfterFunc method:
//     finish calls the func that method was given, and package context
//     then cancels inner and its children with c's Err and Cause.
//   - Open: an ancestor is one that only package context can cancel,
//     and the wheel's clock is not the real one (on the real clock such
//     a context is package context's own: see newTimerCtx). inner is
//     context.WithCancelCause(parent), made at once, and Done is its.
//     The parent's cancellation reaches c through inner, and Err reads
//     it from there.
//
// A timerCtx is safe for concurrent use. Lock order: a parent's mu
// before its kids' is never taken; a kid takes its own, then its
// parent's (drop, Value).
type timerCtx struct {
	parent   context.Context
	up       *timerCtx // closed world: the parent, if it is a timerCtx, which finishes c with itself; else nil
	closed   bool      // the closed world (see above)
	armed    bool      // timer was started; written before it, and before c is among up's kids
	w        *timewheel.Wheel
	deadline time.Time
	cause    error           // the cause of timing out: the caller's, or DeadlineExceeded
	timer    timewheel.Timer // started by newTimerCtx in place, unless born done; not copied

	how  atomic.Uint32         // open, then timedOut, canceled or byParent: set once, under mu
	in   atomic.Pointer[inner] // set once, under mu: closed world at the first Done, open world at once
	done atomic.Pointer[byte]  // closed world without inner: the Done channel's runtime object (see loadDone), made done by finish

	mu    sync.Mutex
	extra *ctxExtra // guarded by mu; made by the first kid or cause that needs it
}

// ctxExtra is what few contexts need, kept apart so that timerCtx stays
// in its size class (TestContextSize). Its fields are guarded by the
// timerCtx's mu.
type ctxExtra struct {
	kids     map[*timerCtx]struct{} // closed world: open contexts whose up is this one
	causeCtx context.Context        // a canceled context that carries a cause Err does not tell (see causeLocked)
}

// extraLocked returns c's ctxExtra, made now if it was not yet.
func (c *timerCtx) extraLocked() *ctxExtra {
	lockcheck.Held(&c.mu, "timerCtx.extraLocked")
	if c.extra == nil {
		c.extra = new(ctxExtra)
	}
	return c.extra
}

// inner is a timerCtx's package context: ctx, whose Done is the
// timerCtx's. In the closed world, inner is also ctx's parent: a Context
// that package context cannot recognise (its Value answers no
// *cancelCtx) but that has an AfterFunc method, so that making ctx hands
// fire to it.
type inner struct {
	c      *timerCtx
	ctx    context.Context
	cancel context.CancelCauseFunc // open world: cancels ctx; closed world: never called (fire cancels ctx)
	fire   func()                  // closed world: package context's func that cancels ctx with inner's Err and Cause
}

// closedChan is the Done of a context without inner that is done before
// anything asked for its Done.
var closedChan = func() chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}()

// neverDone is the Done of inner as a parent: never closed, so that
// package context registers with its AfterFunc.
var neverDone = make(chan struct{})

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
	up, closed := world(parent)
	if w.Err() != nil || !closed && wheelhook.RealClock(unsafe.Pointer(w)) {
		// A closed wheel fires nothing; and no context outside package
		// context is canceled synchronously with a parent only package
		// context can cancel, and cancels package context's children
		// with DeadlineExceeded, unless it is package context's own (see
		// the package doc). So package context keeps the deadline.
		return context.WithDeadlineCause(parent, d, cause)
	}
	if cause == nil {
		cause = context.DeadlineExceeded
	}
	c := &timerCtx{parent: parent, up: up, closed: closed, w: w, deadline: d, cause: cause}
	f := c.cancelOrExpire // one func is both the CancelFunc and the timer's callback
	if !closed {
		in := &inner{c: c}
		in.ctx, in.cancel = context.WithCancelCause(parent)
		c.in.Store(in)
		if in.ctx.Err() != nil {
			return c, f // the parent is done: Err settles it
		}
	} else if up != nil && up.how.Load() != open {
		c.finish(byParent)
		return c, f
	}
	if d.Sub(now) <= 0 {
		c.finish(timedOut) // the deadline has already passed
		return c, f
	}
	c.armed = true
	wheelhook.AfterFuncAt(unsafe.Pointer(w), unsafe.Pointer(&c.timer), now, d.Sub(now), f)
	if up != nil && !up.adopt(c) {
		c.finish(byParent) // the parent was finished meanwhile
	}
	return c, f
}

// world returns the closed world's up for a context on parent, and
// whether it is in the closed world (see timerCtx).
func world(parent context.Context) (up *timerCtx, closed bool) {
	if p, ok := parent.(*timerCtx); ok {
		return p, p.closed
	}
	return nil, parent.Done() == nil
}

// adopt makes kid one of c's kids, unless c is done: it reports whether
// c is still open. A kid done meanwhile is not kept.
func (c *timerCtx) adopt(kid *timerCtx) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.how.Load() != open {
		return false
	}
	if kid.how.Load() == open {
		x := c.extraLocked()
		if x.kids == nil {
			x.kids = make(map[*timerCtx]struct{})
		}
		x.kids[kid] = struct{}{}
	}
	return true
}

// drop forgets kid, done by its own timer or CancelFunc.
func (c *timerCtx) drop(kid *timerCtx) {
	c.mu.Lock()
	if c.extra != nil {
		delete(c.extra.kids, kid)
	}
	c.mu.Unlock()
}

// cancelOrExpire is both the CancelFunc and the wheel timer's callback,
// which saves an allocation per context. Stopping the timer tells them
// apart: if Stop stops it, this is the CancelFunc, before the deadline.
// Otherwise the timer has fired (this may be it) or never will (it was
// never set, or its wheel is closed), and the wheel clock says whether the
// deadline has passed.
func (c *timerCtx) cancelOrExpire() {
	if c.armed && c.timer.Stop() {
		c.finish(canceled)
		return
	}
	if c.w.Now().Before(c.deadline) {
		c.finish(canceled)
		return
	}
	c.finish(timedOut)
}

// finish makes c done, how it says, unless it is done already, and
// before it returns makes done every context derived from c: package
// context's, through inner, and c's kids, finished by their parent.
func (c *timerCtx) finish(how uint32) {
	if !c.closed {
		c.finishOpen(how)
		return
	}
	c.mu.Lock()
	if !c.how.CompareAndSwap(open, how) {
		c.mu.Unlock()
		return
	}
	// how is set before Done is closed: whoever sees Done closed sees
	// how, and Err waits for Done (see Err).
	if in := c.in.Load(); in != nil {
		in.fire() // package context cancels ctx with inner's Err and Cause
	} else if d := c.loadDone(); d != nil {
		close(d)
	} else {
		c.storeDone(closedChan)
	}
	var kids map[*timerCtx]struct{}
	if c.extra != nil {
		kids, c.extra.kids = c.extra.kids, nil
	}
	c.mu.Unlock()
	if how == byParent && c.armed {
		c.timer.Stop() // release it now, as package context stops its timer
	}
	for k := range kids {
		k.finish(byParent)
	}
	if how != byParent && c.up != nil {
		c.up.drop(c)
	}
}

// finishOpen is finish in the open world: it cancels inner, unless the
// parent has, and then reads from inner which came first.
func (c *timerCtx) finishOpen(how uint32) {
	c.mu.Lock()
	if c.how.Load() != open {
		c.mu.Unlock()
		return
	}
	in := c.in.Load()
	cause := context.Canceled
	if how == timedOut {
		cause = c.cause
	}
	in.cancel(cause)
	if in.ctx.Err() != context.Canceled || context.Cause(in.ctx) != cause {
		how = byParent // the parent canceled inner first
	}
	c.how.Store(how)
	c.mu.Unlock()
	if how == byParent && c.armed {
		c.timer.Stop()
	}
}

// settle records, in the open world, that the parent canceled inner:
// called by Err once it sees inner done while how is open.
func (c *timerCtx) settle() {
	c.mu.Lock()
	stop := c.how.CompareAndSwap(open, byParent)
	c.mu.Unlock()
	if stop && c.armed {
		c.timer.Stop()
	}
}

// Done returns a channel closed when the context is done: inner's, made
// now if c is open, or a closed one if c is done already.
func (c *timerCtx) Done() <-chan struct{} {
	if in := c.in.Load(); in != nil {
		return in.ctx.Done()
	}
	if d := c.loadDone(); d != nil {
		return d
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if in := c.in.Load(); in != nil {
		return in.ctx.Done()
	}
	if d := c.loadDone(); d != nil {
		return d
	}
	if c.how.Load() != open {
		c.storeDone(closedChan) // finished before anything asked
		return closedChan
	}
	return c.innerLocked().ctx.Done()
}

// innerLocked makes c's inner in the closed world: context.WithCancelCause
// of inner itself, which calls inner's AfterFunc, under mu, to hand it
// fire. c must be open.
func (c *timerCtx) innerLocked() *inner {
	lockcheck.Held(&c.mu, "timerCtx.innerLocked")
	in := &inner{c: c}
	in.ctx, in.cancel = context.WithCancelCause(in)
	if in.fire == nil {
		panic("wheelctx: package context did not register with AfterFunc: a context of this package cannot be canceled")
	}
	c.in.Store(in)
	return in
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
// parent's error if the parent was done first. It returns an error only
// once Done is closed, as package context's do.
func (c *timerCtx) Err() error {
	how := c.how.Load()
	if how == open {
		if c.closed || c.in.Load().ctx.Err() == nil {
			return nil
		}
		c.settle()
		how = c.how.Load()
	}
	// finish sets how before it closes Done: wait for the close.
	if in := c.in.Load(); in != nil {
		<-in.ctx.Done()
	} else if d := c.loadDone(); d != nil {
		<-d
	}
	return c.errOf(how)
}

// errOf returns the error of a context finished how.
func (c *timerCtx) errOf(how uint32) error {
	switch how {
	case timedOut:
		return context.DeadlineExceeded
	case canceled:
		return context.Canceled
	case byParent:
		return c.parent.Err()
	}
	return nil
}

// Value returns the parent's value for key, except for package context's
// private key (see cancelCtxValue).
func (c *timerCtx) Value(key any) any {
	if key == cancelCtxKey && key != nil {
		return c.cancelCtxValue()
	}
	return c.parent.Value(key)
}

// cancelCtxValue answers package context's private key, which
// context.Cause uses to find the cause and context.WithCancel to find
// where to attach a child: inner's *cancelCtx once c has inner (whose
// Done is c's, so that package context attaches children there); nil
// while c is open without one (Cause is then nil); once c is done
// without one, a *cancelCtx carrying its cause, or nil where the cause
// is Err.
func (c *timerCtx) cancelCtxValue() any {
	if in := c.in.Load(); in != nil {
		return in.ctx.Value(cancelCtxKey)
	}
	if c.how.Load() == open {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if in := c.in.Load(); in != nil {
		return in.ctx.Value(cancelCtxKey)
	}
	return c.causeLocked()
}

// causeLocked returns, for a context finished without inner or while
// finish cancels inner, a *cancelCtx whose cause is c's, or nil if c's
// cause is its Err.
func (c *timerCtx) causeLocked() any {
	lockcheck.Held(&c.mu, "timerCtx.causeLocked")
	switch c.how.Load() {
	case byParent:
		return c.parent.Value(cancelCtxKey)
	case timedOut:
		if c.cause == context.DeadlineExceeded {
			return nil
		}
		x := c.extraLocked()
		if x.causeCtx == nil {
			var cancel context.CancelCauseFunc
			x.causeCtx, cancel = context.WithCancelCause(context.Background())
			cancel(c.cause)
		}
		return x.causeCtx.Value(cancelCtxKey)
	}
	return nil
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

// The methods below make inner, in the closed world, the parent of its
// own ctx. Package context calls them under c.mu: Done, Value and
// AfterFunc when innerLocked makes ctx, Err and Value when finish calls
// fire. None of them takes c.mu.

// Deadline returns c's deadline.
func (in *inner) Deadline() (time.Time, bool) { return in.c.deadline, true }

// Done returns a channel never closed: ctx is canceled through fire.
func (in *inner) Done() <-chan struct{} { return neverDone }

// Err returns c's error, without waiting for Done: fire reads it while
// it closes Done.
func (in *inner) Err() error { return in.c.errOf(in.c.how.Load()) }

// Value answers package context's key with c's cause, which fire reads
// through context.Cause once c is done, and nil while c is open, so
// that package context does not attach ctx to a *cancelCtx; other keys
// are c's parent's.
func (in *inner) Value(key any) any {
	if key == cancelCtxKey && key != nil {
		if in.c.how.Load() == open {
			return nil
		}
		return in.c.causeLocked()
	}
	return in.c.parent.Value(key)
}

// AfterFunc keeps f, package context's func that cancels ctx, for
// finish to call. It is called once, by innerLocked's WithCancelCause;
// package context never calls the stop function it returns, since ctx
// is never canceled by its own CancelFunc.
func (in *inner) AfterFunc(f func()) (stop func() bool) {
	in.fire = f
	return func() bool { return false }
}
