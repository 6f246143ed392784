package loop

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/timewheel/timewheel/clock"
	"github.com/timewheel/timewheel/internal/ticks"
	"github.com/timewheel/timewheel/queue"
)

// ErrStopped is returned by Post, and by Run, once the loop has been
// stopped.
var ErrStopped = errors.New("loop: stopped")

// Loop is a single-goroutine event loop of timers, sockets and posted
// functions, like libuv's uv_loop_t. It is made by [New]. The zero Loop is ready to
// use: it is the loop New() returns, on the real clock with a
// one-millisecond tick, its time counted from its first use. A Loop must
// not be copied after first use.
//
// Post, Stop, Ref and Unref are safe for concurrent use, from any
// goroutine. Run, RunOnce, RunNoWait, Timeout, NewSocket and NewListener,
// and the methods of the loop's timers, sockets and listeners, belong to
// the goroutine running the loop: call them from callbacks and posted
// functions, or before the loop runs. Only one goroutine may run the loop
// at a time; Run panics if called while the loop is running, including
// from one of its own callbacks. Timeout, NewSocket, NewListener and the
// methods of the loop's timers, sockets and listeners panic if called
// from another goroutine while the loop waits for work; a call from
// another goroutine while the loop runs a callback is a data race, which
// the race detector reports.
//
// Every method panics on a nil *Loop, naming itself: "loop: Run called
// on a nil *Loop".
type Loop struct {
	// # Locking
	//
	// One lock, mu, and one owner, the goroutine running the loop:
	//   - mu guards posted, holds and handles: what other goroutines hand
	//     the loop (Post, Ref, Unref) and what Stop must close.
	//   - Everything else marked "owned" belongs to the loop goroutine:
	//     the engine q, refs, sleeper, batch and work here, and the timers,
	//     sockets and listeners. It touches them with no lock.
	//
	// The order: mu is a leaf. Nothing is called with it held: no
	// callback, no method of the clock, no Close, no blocking send. Post
	// and Unref signal after they unlock, and Stop closes the handles
	// after. The clock's own lock (a clock.Virtual's) never nests with
	// mu, in either order.
	//
	// Read without a lock, and why that is safe:
	//   - once, clock, epoch and tick are set once, by setup under once.
	//   - stopped is atomic, written under mu by Stop. Post and register
	//     read it under mu, so nothing is added after Stop took posted
	//     and handles. The loop goroutine reads it between callbacks:
	//     a Stop during a callback is seen when that callback returns.
	//   - running is atomic: enter's compare-and-swap lets one goroutine
	//     run the loop at a time.
	//   - waiting is atomic, for owned's misuse check only. It is best
	//     effort: a call from another goroutine while the loop runs a
	//     callback is a data race that the race detector reports.
	//   - wake has capacity 1. A signal sent before the loop blocks in
	//     wait is kept, so none is lost between wait's look at posted and
	//     its receive. The sleeper's callback only signals.
	//   - done is closed once, by Stop under mu; the goroutines of sockets
	//     and listeners select on it.
	//   - io counts those goroutines. Only the loop goroutine starts them
	//     and waits for them (halt), so Go never races Wait.
	//   - A socket's or listener's goroutine hands over its fields through
	//     Post and the more channel (see the fields of Socket and
	//     Listener): Post's lock orders the hand-over.
	once  sync.Once // sets up the loop: in New, or on the zero Loop's first use
	clock clock.Clock
	epoch time.Time     // tick 0
	tick  time.Duration // duration of one tick

	// Owned by the goroutine running the loop.
	q       *queue.Wheel
	refs    int         // active referenced timers, open referenced sockets and listeners
	sleeper clock.Timer // wakes the loop for the earliest timer; nil until first needed
	batch   []*Timer    // timers expired in this pass, in order
	work    []func()    // posted functions being run in this pass

	running atomic.Bool
	waiting atomic.Bool // the loop goroutine is blocked in wait, running nothing
	stopped atomic.Bool
	wake    chan struct{}  // capacity 1: a wakeup is pending
	done    chan struct{}  // closed by Stop: the goroutines of sockets and listeners return
	io      sync.WaitGroup // those goroutines; started on the loop goroutine only

	mu      sync.Mutex
	posted  []func()            // guarded by mu
	holds   int                 // guarded by mu; Ref minus Unref
	handles map[handle]struct{} // guarded by mu; the open sockets and listeners, which Stop closes
}

// New returns a loop configured by opts. It starts no goroutine: the
// loop runs on the goroutine that calls Run. New panics on a nil Option,
// naming its place.
func New(opts ...Option) *Loop {
	cfg := defaults()
	for i, o := range opts {
		if o == nil {
			panic(fmt.Sprintf("loop: New: option %d is nil", i))
		}
		o(&cfg)
	}
	l := new(Loop)
	l.once.Do(func() { l.setup(cfg) })
	return l
}

// init sets up the zero Loop as New() does, on its first use; after that
// it costs a compare and an atomic load. It panics if l is nil, naming
// method, the exported method that was called.
func (l *Loop) init(method string) {
	if l == nil {
		nilLoop(method)
	}
	l.once.Do(func() { l.setup(defaults()) })
}

// nilLoop panics: method was called on a nil *Loop.
func nilLoop(method string) {
	panic("loop: " + method + " called on a nil *Loop")
}

func (l *Loop) setup(cfg config) {
	l.clock = cfg.clock
	l.tick = cfg.tick
	l.q = queue.NewWheel()
	l.wake = make(chan struct{}, 1)
	l.done = make(chan struct{})
	l.epoch = l.clock.Now()
}

// Now returns the current time of the loop's clock. It is safe for
// concurrent use.
func (l *Loop) Now() time.Time {
	l.init("Now")
	return l.clock.Now()
}

// Post queues f to run on the loop goroutine, after the functions posted
// before it, and wakes the loop. It may be called from any goroutine,
// including the loop's own (f then runs on a later pass). A posted
// function keeps Run from returning until it has run. On a stopped loop
// Post returns ErrStopped and f never runs. Post panics if f is nil. The
// complexity is O(1) amortised.
func (l *Loop) Post(f func()) error {
	if f == nil {
		panic("loop: Post called with nil func")
	}
	l.init("Post")
	l.mu.Lock()
	if l.stopped.Load() {
		l.mu.Unlock()
		return ErrStopped
	}
	l.posted = append(l.posted, f)
	l.mu.Unlock()
	l.signal()
	return nil
}

// Stop ends the loop for good, from any goroutine. Run returns
// ErrStopped once the callback in progress, if any, has returned. No
// further callback or posted function runs, functions posted but not yet
// run are dropped, and Post returns ErrStopped. Stop closes the
// connection of every open [Socket] and the listener of every open
// [Listener] of the loop, without running their callbacks. Their
// goroutines return, and the Run method that returns ErrStopped waits for
// them first. (On a loop that is not running, RunNoWait after Stop waits
// for them and returns.) Stop does not wait for Run to return, so it may
// be called from the loop's own callbacks. Stopping a stopped loop does
// nothing. (libuv's uv_stop only ends the current uv_run; here Stop is
// final, so that work posted from other goroutines cannot be lost
// silently.) The complexity is O(1), plus one Close per open socket and
// listener.
func (l *Loop) Stop() {
	l.init("Stop")
	l.mu.Lock()
	if l.stopped.Load() {
		l.mu.Unlock()
		return
	}
	l.stopped.Store(true)
	l.posted = nil
	open := l.handles
	l.handles = nil
	close(l.done)
	l.mu.Unlock()
	for h := range open {
		h.shut()
	}
	l.signal()
}

// register adds h to the handles Stop closes. On a stopped loop it adds
// nothing and returns ErrStopped.
func (l *Loop) register(h handle) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.stopped.Load() {
		return ErrStopped
	}
	if l.handles == nil {
		l.handles = make(map[handle]struct{})
	}
	l.handles[h] = struct{}{}
	return nil
}

// deregister removes h, closed, from the handles Stop closes.
func (l *Loop) deregister(h handle) {
	l.mu.Lock()
	delete(l.handles, h)
	l.mu.Unlock()
}

// halt returns ErrStopped after waiting for the goroutines of the loop's
// sockets and listeners, which Stop has told to return: the Run methods
// call it on a stopped loop, on the loop goroutine, the only one that
// starts them.
func (l *Loop) halt() error {
	l.io.Wait()
	return ErrStopped
}

// Ref keeps the loop alive, as a referenced handle does in libuv, until a
// matching Unref: Run does not return for lack of work while a Ref is
// held, and waits for posted functions instead. It may be called from any
// goroutine; a producer that will Post to the loop holds a Ref while it
// may. The complexity is O(1).
func (l *Loop) Ref() {
	l.init("Ref")
	l.mu.Lock()
	l.holds++
	l.mu.Unlock()
}

// Unref releases a Ref and wakes the loop, so that Run can return if
// nothing else keeps it alive. It may be called from any goroutine.
// Unref panics if no Ref is held. The complexity is O(1).
func (l *Loop) Unref() {
	l.init("Unref")
	l.mu.Lock()
	if l.holds == 0 {
		l.mu.Unlock()
		panic("loop: Unref called with no Ref held")
	}
	l.holds--
	l.mu.Unlock()
	l.signal()
}

// signal wakes the loop if it is waiting, or makes its next wait return.
func (l *Loop) signal() {
	select {
	case l.wake <- struct{}{}:
	default:
	}
}

// Run runs the loop until nothing is left to do, and returns nil then: no
// referenced timer active, no referenced socket or listener open, no posted
// function waiting and no Ref held. It returns ErrStopped if the loop is or
// gets stopped, once the goroutines of its sockets and listeners have
// returned. A callback that panics unwinds through Run, leaving the loop
// able to run again; timers that were due with it and had not run yet stay
// due. Run panics if the loop is running already: called from one of its
// own callbacks, or on a second goroutine.
func (l *Loop) Run() error {
	l.enter("Run")
	defer l.running.Store(false)
	for {
		l.pass()
		if l.stopped.Load() {
			return l.halt()
		}
		if !l.alive() {
			return nil
		}
		l.wait()
	}
}

// RunOnce runs every timer that is due and every function posted; if
// nothing was ready and the loop is alive, it first waits for the next
// timer, socket event or Post. It reports whether the loop is still
// alive, as libuv's UV_RUN_ONCE does; a stopped loop is not, and RunOnce
// returns on one as Run does, once its sockets' goroutines have returned.
// It panics as Run does.
func (l *Loop) RunOnce() bool {
	l.enter("RunOnce")
	defer l.running.Store(false)
	if l.pass() == 0 {
		// Wait for work: a wake that only moved timers to finer slots
		// (see wait) or changed no state goes round again.
		for !l.stopped.Load() && l.alive() {
			l.wait()
			if l.pass() > 0 {
				break
			}
		}
	}
	if l.stopped.Load() {
		l.halt()
		return false
	}
	return l.alive()
}

// RunNoWait runs every timer that is due and every function posted,
// without waiting, and reports whether the loop is still alive, as
// libuv's UV_RUN_NOWAIT does; a stopped loop is not. With [Loop.Timeout]
// it lets another event loop, or a test on a virtual clock, drive this
// one. On a stopped loop it returns once its sockets' goroutines have
// returned, as Run does. It panics as Run does.
func (l *Loop) RunNoWait() bool {
	l.enter("RunNoWait")
	defer l.running.Store(false)
	l.pass()
	if l.stopped.Load() {
		l.halt()
		return false
	}
	return l.alive()
}

// Timeout returns how long RunOnce would wait for the next timer. That is
// zero if work is ready (a timer due or a function posted), else the time
// until the earliest timer. It returns false if no timer is active
// (RunOnce would then wait for a Post if the loop is alive). On a stopped
// loop, which RunOnce does not wait on, it returns zero and true. It is
// libuv's uv_backend_timeout. Timeout panics if called from another
// goroutine while the loop waits for work. The complexity is O(1)
// amortised.
func (l *Loop) Timeout() (time.Duration, bool) {
	l.init("Timeout")
	l.owned("Timeout")
	if l.stopped.Load() {
		return 0, true
	}
	l.mu.Lock()
	posted := len(l.posted) > 0
	l.mu.Unlock()
	if posted {
		return 0, true
	}
	next, ok := l.q.Next()
	return l.until(next, ok)
}

// until returns the time until tick next, as Timeout does.
func (l *Loop) until(next int64, ok bool) (time.Duration, bool) {
	if !ok {
		return 0, false
	}
	return max(ticks.Until(next, int64(l.clock.Since(l.epoch)), l.tick), 0), true
}

// enter marks the loop running for method, one of the Run methods.
func (l *Loop) enter(method string) {
	l.init(method)
	if !l.running.CompareAndSwap(false, true) {
		panic("loop: " + method + " called while the loop is running (from one of its own callbacks, or on a second goroutine); one goroutine runs a loop at a time")
	}
}

// owned panics if method, one of the methods that belong to the loop
// goroutine, was called while that goroutine waits for work: from another
// goroutine, then.
func (l *Loop) owned(method string) {
	if l.waiting.Load() {
		panic("loop: " + method + " called from another goroutine while the loop runs; Post a function that calls it")
	}
}

// alive reports whether anything can still make the loop run a callback.
func (l *Loop) alive() bool {
	if l.refs > 0 {
		return true
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.posted) > 0 || l.holds > 0
}

// pass runs the timers due now, then the functions posted so far, and
// returns how many callbacks it ran.
func (l *Loop) pass() int {
	return l.runTimers() + l.runPosted()
}

// wait blocks until the earliest timer is due or the loop is signalled.
// It sleeps until the engine's NextWake, which is O(1): the earliest
// deadline, or at worst the start of the coarse slot that holds it.
func (l *Loop) wait() {
	l.mu.Lock()
	posted := len(l.posted) > 0
	l.mu.Unlock()
	if posted {
		return
	}
	d, ok := l.until(l.q.NextWake())
	if ok && d == 0 {
		return
	}
	if ok {
		if l.sleeper == nil {
			l.sleeper = l.clock.AfterFunc(d, l.signal)
			if l.sleeper == nil {
				panic(fmt.Sprintf("loop: the clock's AfterFunc returned a nil Timer (a %T); a Clock must return one", l.clock))
			}
		} else {
			l.sleeper.Reset(d)
		}
	}
	l.waiting.Store(true)
	<-l.wake
	l.waiting.Store(false)
	if ok {
		l.sleeper.Stop()
	}
}

// since returns the time since the loop's epoch, in nanoseconds.
func (l *Loop) since() int64 { return int64(l.clock.Since(l.epoch)) }

// runTimers relies on an Entry being at offset 0 of a Timer: this fails
// to compile (index out of range) if a field is put before it.
var _ = [1]struct{}{}[unsafe.Offsetof(Timer{}.e)]

// runTimers expires the timers due now and runs their callbacks in order.
// A callback may stop or restart any timer, including ones due in the
// same pass, which then do not run. If a callback panics, the timers of
// the pass that have not run are made due again.
func (l *Loop) runTimers() int {
	ns := l.since()
	now := ns / int64(l.tick)
	l.q.Expire(now, func(e *queue.Entry) {
		t := (*Timer)(unsafe.Pointer(e)) // e is the first field of a Timer
		t.batched = true
		l.batch = append(l.batch, t)
	})
	batch := l.batch
	ran, i := 0, 0
	defer func() {
		for _, t := range batch[i:] {
			if t.batched { // a panic left it unrun (and not re-armed): due again
				t.batched = false
				l.q.Insert(&t.e, now)
			}
		}
		clear(batch)
		l.batch = batch[:0]
	}()
	for ; i < len(batch); i++ {
		t := batch[i]
		if !t.batched || l.stopped.Load() {
			continue // stopped or restarted by an earlier callback
		}
		t.batched = false
		if t.repeat > 0 {
			// Re-armed just before its own callback, as libuv's
			// uv__run_timers does: a timer an earlier callback of this
			// pass started for the same tick runs before its next run.
			t.next = ticks.NextOnGrid(t.next, int64(t.repeat), ns)
			l.q.Insert(&t.e, ticks.Ceil(t.next, l.tick))
		}
		t.sync()
		ran++
		t.f()
	}
	return ran
}

// runPosted runs the functions posted before it started, in order.
// Functions they post run on the next pass.
func (l *Loop) runPosted() int {
	l.mu.Lock()
	work := l.posted
	l.posted = l.work[:0]
	l.mu.Unlock()
	i := 0
	defer func() {
		if i < len(work) && !l.stopped.Load() {
			// work[i] panicked: what was posted after it runs first on
			// the next pass, as Post promised.
			l.mu.Lock()
			l.posted = append(slices.Clone(work[i+1:]), l.posted...)
			l.mu.Unlock()
		}
		clear(work)
		l.work = work[:0]
	}()
	for ; i < len(work) && !l.stopped.Load(); i++ {
		work[i]()
	}
	return i
}
