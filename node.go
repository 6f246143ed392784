package timewheel

import (
	"runtime"
	"sync/atomic"
	"time"
	"unsafe"
	"weak"

	"github.com/timewheel/timewheel/internal/ticks"
)

// node is what the wheel holds for a channel Timer or a Ticker, in place
// of the object the user holds. So, as in Go 1.23, a timer or ticker
// nobody can reach any more is collected although it was never stopped.
//
// A node due within a minute is born young: it holds its channel strongly
// (in t.C). Most such timers fire or are stopped soon, and never pay for
// more. A node still pending when a garbage collection ends is promoted,
// as generational collectors make only old objects pay. From then on it
// points to its channel only weakly. A cleanup attached to the channel
// removes the node from its shard once the channel is collected. (A node
// whose channel is gone when it fires sends nothing and, for a ticker, is
// not armed again.)
//
// A Ticker's node, and a Timer's due a minute or more from now (when made
// or reset), are born promoted. So a forgotten one goes within the
// collections that follow; Go's own test of this runs three back to back.
// A young node would take longer: promotion waits for the end of a
// collection, the collection after it frees the channel, and a third the
// node. A goroutine blocked receiving from the channel keeps the channel,
// and so the timer, alive.
type node struct {
	t      Timer              // first: the wheel's link; t.f is nil, which marks a node; t.C is the channel while the node is young; t.p is unused
	s      *shard             // the shard the timer was started on
	ch     weak.Pointer[byte] // once promoted: the channel's runtime object
	owner  uintptr            // the address of the Timer or Ticker the user holds, to tell it from a copy (it does not keep it alive)
	period int64              // a Ticker's period in nanoseconds, zero for a Timer; guarded by s.mu
	next   int64              // a Ticker's grid point pending, nanoseconds since the wheel's epoch; guarded by s.mu
	young  bool               // listed in s.young; guarded by s.mu
	weak   atomic.Bool        // promoted: written under s.mu, read without it by reset
}

// bornPromoted is the duration from which a timer's node is born
// promoted. Promotion, a weak pointer and a cleanup, costs about as much
// again as the rest of NewTimer (BenchmarkChanTimer, d=1h against d=5s).
// So a timer due sooner is born young: most are stopped or fire first. A
// forgotten one goes when it fires, within the minute, or after the
// second collection that ends while it is pending, if that is sooner.
const bornPromoted = time.Minute

// The casts between a channel and its runtime object (weaken, channel)
// rely on a channel being one pointer: this fails to compile (index out
// of range) if it is not.
var _ = [1]struct{}{}[unsafe.Sizeof(make(chan time.Time))-unsafe.Sizeof(unsafe.Pointer(nil))]

// newNode returns a node on shard s for channel c: a ticker's of the given
// period, or a timer's due d from now.
func newNode(s *shard, c chan time.Time, period, d time.Duration) *node {
	n := &node{s: s, period: int64(period)}
	n.t.C = c
	if period > 0 || d >= bornPromoted {
		n.weaken()
	}
	return n
}

// scheduleLocked schedules the node at tick when (see
// shard.scheduleLocked) and, if it holds its channel strongly, lists it
// for promotion at the end of the next collection.
func (n *node) scheduleLocked(when, ns int64) {
	s := n.s
	s.scheduleLocked(&n.t.e, when, ns)
	if n.t.C != nil && !n.young {
		n.young = true
		s.young = append(s.young, n)
	}
}

// promoteLocked runs at the end of a collection for a young node. If the
// node is pending, the wheel holds it, so promoteLocked weakens it (see
// weaken). A node that is not pending stays young, reachable only from
// its Timer or Ticker, until it is scheduled again.
func (n *node) promoteLocked() {
	n.young = false
	if n.t.e.Pending() {
		n.weaken()
	}
}

// weaken makes the node's hold on its channel weak, if it is not yet,
// and attaches the cleanup that removes the node once the channel is
// collected. The node is not on a shard yet, or s.mu is held.
func (n *node) weaken() {
	c := n.t.C
	if c == nil {
		return // weak already
	}
	p := (*byte)(*(*unsafe.Pointer)(unsafe.Pointer(&c))) // the channel's runtime object
	n.ch = weak.Make(p)
	runtime.AddCleanup(p, (*node).collected, n)
	n.t.C = nil
	n.weak.Store(true)
}

// collected runs on the runtime's cleanup goroutine once the node's
// channel has been collected. It takes the node off the wheel, so that a
// forgotten ticker stops costing wakeups, and Len counts only timers
// someone can still see fire.
func (n *node) collected() {
	s := n.s
	s.mu.Lock()
	if s.cancelLocked(&n.t.e) {
		s.collected++
	}
	s.mu.Unlock()
}

// channel returns the node's channel, or nil if it has been collected.
func (n *node) channel() chan time.Time {
	if n.t.C != nil {
		return *(*chan time.Time)(unsafe.Pointer(&n.t.C)) // made bidirectional, stored receive-only
	}
	p := n.ch.Value()
	if p == nil {
		return nil
	}
	return *(*chan time.Time)(unsafe.Pointer(&p))
}

// expireLocked sends the time on the node's channel, unless it has been
// collected. For a ticker, it schedules the next tick on the grid: the
// first grid point after ns, the driver's clock reading. So a late driver
// skips ticks instead of bunching them.
func (n *node) expireLocked(ns int64, sent time.Time) {
	c := n.channel()
	if c == nil {
		n.s.collected++
		return // nobody can receive: the node is done with
	}
	select {
	case c <- sent:
	default:
	}
	n.s.firedLocked(ns)
	if n.period == 0 {
		return
	}
	n.next = ticks.NextOnGrid(n.next, n.period, ns)
	n.s.q.Insert(&n.t.e, ticks.Ceil(n.next, n.s.w.tick))
}

// stop takes the node off the wheel and takes back an unreceived value,
// for Timer.Stop, and reports whether it did either.
func (n *node) stop() bool {
	s := n.s
	if stopped, handled := s.kill(&n.t.e, true); handled {
		// From another processor, with no value on its way (see
		// inbox.go). A promoted node's channel fields no longer change
		// (weaken wrote them before weak), so C is drained without the
		// lock: a ticker's may hold a tick, a timer's its fired value.
		// A young node is a timer's (tickers are born promoted), whose
		// fields weaken may be writing under the lock: if it was
		// pending when this Stop or an earlier one killed it, C is
		// empty (each arming starts with C drained); if it fired, it
		// drains under the lock.
		switch {
		case n.weak.Load():
			if c := n.channel(); c != nil && drain(c) {
				stopped = true
			}
			return stopped
		case stopped || n.t.e.Dead():
			return stopped
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	pending := s.cancelLocked(&n.t.e)
	if pending {
		s.stopped++
	}
	if c := n.channel(); c != nil && drain(c) {
		pending = true
	}
	return pending
}

// reset is Timer.Reset of a channel Timer.
func (n *node) reset(d time.Duration) bool {
	s := n.s
	when, ns := s.w.deadline(d)
	far := d >= bornPromoted && !n.weak.Load() // to be promoted now, under the lock
	if !far && s.postpone(&n.t.e, when) {
		// Pending and not yet claimed by the driver: no value of this
		// arming was sent on the channel. The Stop or Reset that armed it
		// again took back every earlier one.
		return true
	}
	if !far && s.revive(&n.t.e, when) {
		// Killed by a Stop, which took back any value, and never
		// claimed since: nothing can be in C for an earlier deadline.
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	pending := s.cancelLocked(&n.t.e)
	if c := n.channel(); c != nil && drain(c) {
		pending = true
	}
	if !s.closed {
		s.resets++
		if far {
			n.weaken()
		}
		n.scheduleLocked(when, ns)
	}
	return pending
}

// startGridLocked starts a ticker's grid at clock reading ns: the first
// tick is one period later.
func (n *node) startGridLocked(ns int64) {
	n.next = ticks.Add(ns, n.period)
	n.scheduleLocked(ticks.Ceil(n.next, n.s.w.tick), ns)
}
