package timewheel

import (
	"errors"
	"fmt"
	"math"
	"sync"
	"time"
	"unsafe"

	"github.com/timewheel/timewheel/clock"
	"github.com/timewheel/timewheel/queue"
)

// ErrClosed is returned by Close on a wheel that is already closed.
var ErrClosed = errors.New("timewheel: wheel closed")

// Wheel is a timer scheduler: package time's timers, tickers and sleeps on
// one hierarchical timing wheel (see [queue.Wheel]) with one driver.
//
// The driver is a single callback timer of the wheel's [clock.Clock], set
// for the earliest pending deadline. With nothing pending it is stopped, so
// an idle wheel never wakes; scheduling a timer earlier than the one it
// waits for moves it earlier. When it fires, it expires every timer due by
// then: a channel timer's value is sent at once, and AfterFunc callbacks
// are handed, in deadline order, to the wheel's [Executor].
//
// Deadlines are rounded up to the wheel's tick, so a timer never fires
// early; it fires at most one tick plus the driver's own delay late.
//
// A Wheel is safe for concurrent use.
type Wheel struct {
	clock        clock.Clock
	epoch        time.Time     // tick 0; read through clock.Since
	tick         time.Duration // duration of one tick
	exec         Executor
	pool         *Pool // exec, when it is the wheel's own pool
	panicHandler func(any)
	done         chan struct{} // closed by Close

	mu        sync.Mutex
	idle      sync.Cond    // signalled when firing goes false; uses mu
	q         *queue.Wheel // guarded by mu
	driver    clock.Timer  // guarded by mu; nil until first armed
	armed     int64        // guarded by mu; tick the driver is set for, or notArmed
	firing    bool         // guarded by mu; a goroutine is in fire
	again     bool         // guarded by mu; fire was called while firing
	closed    bool         // guarded by mu
	discarded int          // guarded by mu; pending timers dropped by Close
	batch     []func()     // owned by the goroutine with firing set
}

const notArmed = math.MaxInt64

// New returns a running wheel configured by opts. It starts no goroutine:
// the driver exists only while a timer is pending.
func New(opts ...Option) *Wheel {
	cfg := config{tick: time.Millisecond, clock: clock.Real()}
	for _, o := range opts {
		o(&cfg)
	}
	w := &Wheel{
		clock:        cfg.clock,
		tick:         cfg.tick,
		exec:         cfg.exec,
		panicHandler: cfg.panicHandler,
		done:         make(chan struct{}),
		q:            queue.NewWheel(),
		armed:        notArmed,
	}
	w.epoch = w.clock.Now()
	w.idle.L = &w.mu
	if w.exec == nil {
		w.pool = NewPool(cfg.workers)
		w.pool.panicHandler = cfg.panicHandler
		w.exec = w.pool
	}
	return w
}

// Now returns the current time of the wheel's clock.
func (w *Wheel) Now() time.Time { return w.clock.Now() }

// Tick returns the wheel's tick, the granularity of its deadlines.
func (w *Wheel) Tick() time.Duration { return w.tick }

// Len returns the number of pending timers and tickers. The complexity is
// O(1).
func (w *Wheel) Len() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.q.Len()
}

// Discarded returns the number of pending timers Close dropped without
// firing them, or 0 if the wheel is open.
func (w *Wheel) Discarded() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.discarded
}

// Close stops the wheel. Pending timers are dropped without firing (see
// Discarded), the driver is stopped, and Close waits until every callback
// already handed to the wheel's own pool has returned. It returns
// ErrClosed if the wheel was closed already. Close must not be called from
// a callback of the same wheel.
//
// After Close the wheel refuses new work, without blocking: AfterFunc,
// NewTimer and NewTicker return timers that are not pending and never fire
// (their Stop and Reset return false and do nothing), and Sleep returns at
// once. A Sleep in progress returns when Close is called.
func (w *Wheel) Close() error {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return ErrClosed
	}
	w.closed = true
	close(w.done)
	w.discarded = w.q.Len()
	w.q.Expire(math.MaxInt64, func(*queue.Entry) {})
	w.disarmLocked()
	for w.firing {
		w.idle.Wait()
	}
	w.mu.Unlock()
	if w.pool != nil {
		w.pool.Wait()
	}
	return nil
}

// deadline returns the tick at which a timer started now with duration d
// falls due: rounded up, so that it never fires early, and saturated at the
// end of time. A d of zero or less is due now.
func (w *Wheel) deadline(d time.Duration) int64 {
	if d <= 0 {
		return 0 // the engine reads any past tick as its current one
	}
	ns := int64(w.clock.Since(w.epoch))
	if ns > math.MaxInt64-int64(d) {
		return math.MaxInt64 / int64(w.tick) // saturate, never wrap
	}
	ns += int64(d)
	return (ns + int64(w.tick) - 1) / int64(w.tick) // round up: never early
}

// nowTick returns the tick the clock is in now (rounded down).
func (w *Wheel) nowTick() int64 {
	return int64(w.clock.Since(w.epoch)) / int64(w.tick)
}

// scheduleLocked inserts e due at tick when and moves the driver earlier if
// e is now the first timer due.
func (w *Wheel) scheduleLocked(e *queue.Entry, when int64) {
	w.q.Insert(e, when)
	if e.When() < w.armed {
		w.armLocked(e.When())
	}
}

// cancelLocked removes e if pending and reports whether it was. When the
// wheel empties the driver is stopped; when e was the timer the driver
// waits for, the driver is moved to the next one, so it never wakes for
// nothing.
func (w *Wheel) cancelLocked(e *queue.Entry) bool {
	if !w.q.Cancel(e) {
		return false
	}
	if e.When() == w.armed {
		w.rearmLocked()
	}
	return true
}

// rearmLocked sets the driver for the earliest pending deadline, or stops
// it if nothing is pending.
func (w *Wheel) rearmLocked() {
	next, ok := w.q.Next()
	if !ok {
		w.disarmLocked()
		return
	}
	if next != w.armed {
		w.armLocked(next)
	}
}

func (w *Wheel) armLocked(when int64) {
	w.armed = when
	var d time.Duration
	if when <= math.MaxInt64/int64(w.tick) {
		d = time.Duration(when)*w.tick - w.clock.Since(w.epoch)
	} else {
		d = math.MaxInt64
	}
	if w.driver == nil {
		w.driver = w.clock.AfterFunc(d, w.fire)
	} else {
		w.driver.Reset(d)
	}
}

func (w *Wheel) disarmLocked() {
	w.armed = notArmed
	if w.driver != nil {
		w.driver.Stop()
	}
}

// fire is the driver: it expires every timer due by now, sets itself for
// the next deadline and hands the due callbacks to the executor, in order.
// Only one goroutine fires at a time; a call that finds another firing
// asks it to go round again.
func (w *Wheel) fire() {
	w.mu.Lock()
	if w.firing || w.closed {
		w.again = true
		w.mu.Unlock()
		return
	}
	w.firing = true
	for {
		w.again = false
		now := w.nowTick()
		sent := w.clock.Now()
		w.q.Expire(now, func(e *queue.Entry) { w.expireLocked(e, now, sent) })
		w.armed = notArmed // the driver has fired: whatever is next needs it set anew
		if !w.closed {
			w.rearmLocked()
		}
		batch := w.batch
		w.mu.Unlock()
		w.dispatch(batch)
		clear(batch)
		w.mu.Lock()
		w.batch = batch[:0]
		if !w.again || w.closed {
			break
		}
	}
	w.firing = false
	w.idle.Broadcast()
	w.mu.Unlock()
}

// expireLocked handles one timer the engine has expired at tick now.
func (w *Wheel) expireLocked(e *queue.Entry, now int64, sent time.Time) {
	t := (*Timer)(unsafe.Pointer(e)) // e is the first field of a Timer
	switch {
	case t.f != nil:
		w.batch = append(w.batch, t.f)
	case t.C != nil:
		select {
		case t.sendC() <- sent:
		default:
		}
	default:
		(*Ticker)(unsafe.Pointer(t)).expireLocked(now, sent) // t is the first field of a Ticker
	}
}

// dispatch hands a batch of callbacks to the executor in order.
func (w *Wheel) dispatch(batch []func()) {
	if len(batch) == 0 {
		return
	}
	if w.pool != nil {
		w.pool.executeAll(batch)
		return
	}
	for _, f := range batch {
		if w.panicHandler != nil {
			f = recovering(f, w.panicHandler)
		}
		w.exec.Execute(f)
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
