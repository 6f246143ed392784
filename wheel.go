package timewheel

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"sync/atomic"
	"time"
	"weak"

	"github.com/timewheel/timewheel/clock"
	"github.com/timewheel/timewheel/internal/stack"
	"github.com/timewheel/timewheel/internal/stripe"
	"github.com/timewheel/timewheel/internal/ticks"
)

// ErrClosed is returned by Close on a wheel that is already closed.
var ErrClosed = errors.New("timewheel: wheel closed")

// ErrDefaultWheel is returned by Close on the default wheel, which serves
// the whole process (every package's timers, as package time's do) and so
// cannot be closed: nothing is closed.
var ErrDefaultWheel = errors.New("timewheel: the default wheel serves the whole process and cannot be closed")

// Wheel is a timer scheduler: package time's timers, tickers and sleeps on
// hierarchical timing wheels (see [queue.Wheel]) with one driver.
//
// A wheel is several engines, shards, each with its own lock: one per
// processor unless [WithShards] says otherwise. A goroutine starts its
// timers on the shard of the processor it runs on, and a timer stays on
// its shard for life. A Stop from another processor takes no lock (see
// [Timer.Stop]), so processors do not contend for each other's shards.
//
// The driver is a single callback timer of the wheel's [clock.Clock], set
// for the earliest pending deadline of all the shards. Shards waiting for
// the same tick wake once between them. With nothing pending the driver
// is stopped, so an idle wheel never wakes. Four exceptions wake the
// driver with nothing due, and [Stats] counts them in EmptyWakeups:
//   - A coarse slot of more than 64 timers whose earliest were stopped:
//     the driver wakes at the slot's start to move its timers down, so
//     that Stop stays O(1).
//   - A timer that Reset postponed lazily (see [Timer.Reset]) costs a
//     wake at its old deadline, where it is filed again, unless other
//     timers are due then.
//   - A burst, a thousand timers or more in one slot of a shard's engine,
//     costs about one wake per 4,096 of them before it falls due. The
//     wake moves them down ahead of time, so that the burst fires on
//     time (see [queue.Wheel]).
//   - A timer stopped from another processor while its shard was firing
//     may cost a wake at its deadline (see [Timer.Stop]).
//
// When the driver fires, it expires every timer due by then. A channel
// timer's value is sent at once. AfterFunc callbacks are handed, in
// deadline order, to the wheel's [Executor]. Shards due together fire in
// parallel on the real clock or a [clock.RealTime]. On any other clock
// they fire one after the other, so that a test clock's Advance returns
// with every due callback run.
//
// Deadlines are rounded up to the wheel's tick, so a timer never fires
// early; it fires at most one tick plus the driver's own delay late.
//
// A Wheel is safe for concurrent use. Its zero value is not a wheel:
// every method panics on it, naming the method, as on a nil *Wheel. Make
// one with New.
type Wheel struct {
	clock        clock.Clock
	real         bool          // clock is clock.Real: since calls time.Since directly
	parallel     bool          // clock is clock.Real or a clock.RealTime: due shards fire in parallel
	epoch        time.Time     // tick 0; read through clock.Since
	tick         time.Duration // duration of one tick
	exec         Executor
	pool         *Pool // exec, when it is the wheel's own pool
	panicHandler func(any)
	done         chan struct{} // closed by Close
	closed       atomic.Bool
	process      bool // the default wheel: Close refuses

	shards []*shard
	driver driver
	lazy   stripe.Counter // Resets that took no lock, for Stats: the hot path of servers that refresh idle timeouts
}

// New returns a running wheel configured by opts. It starts no goroutine:
// the driver exists only while a timer is pending.
func New(opts ...Option) *Wheel {
	cfg := config{tick: time.Millisecond, clock: clock.Real()}
	for i, o := range opts {
		if o == nil {
			panic(fmt.Sprintf("timewheel: New: option %d is nil", i))
		}
		o(&cfg)
	}
	real := cfg.clock == clock.Real()
	parallel := real
	if rt, ok := cfg.clock.(clock.RealTime); ok && rt.RealTime() {
		parallel = true
	}
	if cfg.shards == 0 {
		cfg.shards = 1 // a test clock: one shard, so that runs repeat exactly
		if parallel {
			cfg.shards = runtime.GOMAXPROCS(0)
		}
	}
	w := &Wheel{
		clock:        cfg.clock,
		real:         real,
		parallel:     parallel,
		tick:         cfg.tick,
		exec:         cfg.exec,
		panicHandler: cfg.panicHandler,
		done:         make(chan struct{}),
	}
	w.epoch = w.clock.Now()
	if w.exec == nil {
		w.pool = NewPool(cfg.workers)
		w.pool.panicHandler = cfg.panicHandler
		w.exec = w.pool
	}
	rings := max(cfg.shards, runtime.GOMAXPROCS(0))
	for range cfg.shards {
		w.shards = append(w.shards, newShard(w, rings))
	}
	w.driver = driver{w: w, shards: w.shards}
	w.driver.armed.Store(notArmed)
	// The driver's one clock timer, made stopped, so that a Clock whose
	// AfterFunc returns nil is refused here rather than losing every timer.
	if w.driver.timer = w.clock.AfterFunc(math.MaxInt64, w.driver.fire); w.driver.timer == nil {
		panic(fmt.Sprintf("timewheel: New: the Clock's AfterFunc returned a nil Timer (%T)", w.clock))
	}
	w.driver.timer.Stop()
	watchCollections(weak.Make(w))
	return w
}

// shard returns the shard a new timer goes to: the only one, or the one
// of the processor the goroutine runs on. op names the calling method,
// for the panic on a zero Wheel.
func (w *Wheel) shard(op string) *shard {
	w.made(op)
	if len(w.shards) == 1 {
		return w.shards[0]
	}
	p := stripe.ProcPin()
	stripe.ProcUnpin()
	return w.shards[uint(p)%uint(len(w.shards))]
}

// made panics, naming the method op, if w is nil or a zero Wheel, which
// has no shard: the one check every method makes before it uses one.
func (w *Wheel) made(op string) {
	if w == nil {
		panic("timewheel: " + op + " called on a nil *Wheel")
	}
	if len(w.shards) == 0 {
		panic("timewheel: " + op + " called on a zero Wheel; make one with New")
	}
}

// Now returns the current time of the wheel's clock.
func (w *Wheel) Now() time.Time {
	w.made("Now")
	return w.clock.Now()
}

// Since returns the time elapsed since t on the wheel's clock. For the
// real clock and a t from Now, it reads only the monotonic clock, which is
// cheaper than Now.
func (w *Wheel) Since(t time.Time) time.Duration {
	w.made("Since")
	if w.real {
		return time.Since(t) // no interface call: expiry reads it on every Get
	}
	return w.clock.Since(t)
}

// Err returns nil while the wheel is open and ErrClosed once Close has
// been called: after that, new timers are never pending.
func (w *Wheel) Err() error {
	w.made("Err")
	if w.closed.Load() {
		return ErrClosed
	}
	return nil
}

// Resolution returns the wheel's tick, the granularity of its deadlines
// (see [WithTick]).
func (w *Wheel) Resolution() time.Duration {
	w.made("Resolution")
	return w.tick
}

// Len returns the number of pending timers and tickers. The complexity is
// O(1) per shard.
func (w *Wheel) Len() int {
	w.made("Len")
	n := 0
	for _, s := range w.shards {
		s.mu.Lock()
		s.drainAllLocked()
		n += s.q.Len()
		s.mu.Unlock()
	}
	return n
}

// Discarded returns the number of pending timers Close dropped without
// firing them, or 0 if the wheel is open.
func (w *Wheel) Discarded() int {
	w.made("Discarded")
	n := 0
	for _, s := range w.shards {
		s.mu.Lock()
		n += s.discarded
		s.mu.Unlock()
	}
	return n
}

// Close stops the wheel. Pending timers are dropped without firing (see
// Discarded), the driver is stopped, and Close waits until every callback
// already handed to the wheel's own pool has returned. It returns
// ErrClosed if the wheel was closed already, and ErrDefaultWheel, closing
// nothing, on the default wheel (see [Default]).
//
// Close called from an AfterFunc callback, of this wheel or any other,
// closes the wheel as well. But it waits for no callback, since it could
// wait for itself; the callbacks already handed to the pool finish on
// their own. (A goroutine cannot tell whose callback it runs.)
//
// After Close the wheel refuses new work, without blocking. AfterFunc,
// NewTimer and NewTicker return timers that are not pending and never
// fire; their Stop and Reset return false and do nothing. Sleep returns
// at once, and a Sleep in progress returns when Close is called.
func (w *Wheel) Close() error {
	w.made("Close")
	if w.process {
		return ErrDefaultWheel
	}
	if !w.closed.CompareAndSwap(false, true) {
		return ErrClosed
	}
	close(w.done)
	wait := !inCallback()
	for _, s := range w.shards {
		s.close(wait)
	}
	if w.pool != nil && wait {
		w.pool.Wait()
	}
	return nil
}

// callbackFrames are the functions on the stack of a goroutine running an
// AfterFunc callback: the pool's, or the driver's for any other executor.
var callbackFrames = [...]string{stack.FuncName((*Pool).run), stack.FuncName((*shard).fire)}

// inCallback reports whether the calling goroutine is running an AfterFunc
// callback, of any wheel (see package internal/stack). Close and Pool.Wait
// alone call it.
func inCallback() bool { return stack.Has(callbackFrames[:]...) }

// since returns the time elapsed since the wheel's epoch, in
// nanoseconds: one read of the clock, with no interface call for the real
// clock.
func (w *Wheel) since() int64 {
	if w.real {
		return int64(time.Since(w.epoch))
	}
	return int64(w.clock.Since(w.epoch))
}

// deadline returns the tick at which a timer started now with duration d
// falls due, and the clock reading it was computed from. Arming the driver
// for it then need not read the clock again. The tick is rounded up, so
// the timer never fires early, and saturated at the end of time. A d of
// zero or less is due now (see ticks.Deadline).
func (w *Wheel) deadline(d time.Duration) (when, ns int64) {
	ns = w.since()
	return ticks.Deadline(ns, d, w.tick), ns
}

// dispatch hands a batch of callbacks to the executor in order. It counts
// in *ran those the executor has returned from, so that if one panics
// through it the caller knows which have not run. (The wheel's own pool
// takes a shard's chunks instead: see shard.fire.)
func (w *Wheel) dispatch(batch []func(), ran *int) {
	for _, f := range batch {
		if w.panicHandler != nil {
			f = recovering(f, w.panicHandler)
		}
		w.exec.Execute(f)
		*ran++
	}
}

func recovering(f func(), handler func(any)) func() {
	return func() {
		defer func() {
			if r := recover(); r != nil {
				handler(r)
			}
		}()
		f()
	}
}

func badDuration(fn string, what string, d time.Duration) string {
	return fmt.Sprintf("timewheel: %s: non-positive %s %v", fn, what, d)
}

// gcSentinel is an object whose only purpose is to be collected: see
// watchCollections. It has a pointer field so that it is not
// tiny-allocated, which could delay its cleanup.
type gcSentinel struct{ _ *int }

// watchCollections calls promote on each of w's shards at the end of
// every garbage collection, for as long as w is open and referenced. Each
// collection runs the cleanup of a new sentinel, unreachable at once,
// which makes the next one.
// It holds w weakly, so that a wheel dropped without Close is collected.
func watchCollections(w weak.Pointer[Wheel]) {
	runtime.AddCleanup(new(gcSentinel), func(w weak.Pointer[Wheel]) {
		wh := w.Value()
		if wh == nil || wh.closed.Load() {
			return
		}
		for _, s := range wh.shards {
			s.promote()
		}
		watchCollections(w)
	}, w)
}
