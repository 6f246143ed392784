package timewheel

import (
	"runtime"
	"time"
	"unsafe"
	"weak"

	"github.com/timewheel/timewheel/internal/ticks"
)

// node is what the wheel holds for a channel Timer or a Ticker in place of
// the object the user holds, so that, as in Go 1.23, a timer or ticker
// nobody can reach any more is collected although it was never stopped.
//
// A node is born holding its channel strongly (in t.C), as most channel
// timers fire or are stopped soon: they never pay for more. A node still
// pending when a garbage collection ends is promoted: from then on it
// points to its channel only weakly, and a cleanup attached to the channel
// removes the node from its shard once the channel is collected (a node
// whose channel is gone when it fires sends nothing and, for a ticker, is
// not armed again). So a forgotten timer is collected by the second
// collection after it was started, and only timers that live through a
// collection pay for the weak pointer and the cleanup, as generational
// collectors make only old objects pay. A goroutine blocked receiving from
// the channel keeps the channel, and so the timer, alive.
type node struct {
	t      Timer              // first: the wheel's link; t.f is nil, which marks a node; t.C is the channel while the node is young
	ch     weak.Pointer[byte] // once promoted: the channel's runtime object
	period int64              // a Ticker's period in nanoseconds, zero for a Timer; guarded by t.s.mu
	next   int64              // a Ticker's grid point pending, nanoseconds since the wheel's epoch; guarded by t.s.mu
	young  bool               // listed in t.s.young; guarded by t.s.mu
}

// newNode returns a young node on shard s for channel c.
func newNode(s *shard, c chan time.Time) *node {
	return &node{t: Timer{s: s, C: c}}
}

// scheduleLocked schedules the node at tick when (see
// shard.scheduleLocked) and, if it holds its channel strongly, lists it
// for promotion at the end of the next collection.
func (n *node) scheduleLocked(when, ns int64) {
	s := n.t.s
	s.scheduleLocked(&n.t.e, when, ns)
	if n.t.C != nil && !n.young {
		n.young = true
		s.young = append(s.young, n)
	}
}

// promoteLocked runs at the end of a collection for a young node: if the
// node is pending, the wheel holds it, and so it makes the wheel's hold on
// the channel weak and attaches the cleanup that removes the node once the
// channel is collected. A node that is not pending stays young, reachable
// only from its Timer or Ticker, until it is scheduled again.
func (n *node) promoteLocked() {
	n.young = false
	if !n.t.e.Pending() {
		return
	}
	c := n.t.C
	p := (*byte)(*(*unsafe.Pointer)(unsafe.Pointer(&c))) // the channel's runtime object
	n.ch = weak.Make(p)
	runtime.AddCleanup(p, (*node).collected, n)
	n.t.C = nil
}

// collected runs, on the runtime's cleanup goroutine, once the node's
// channel has been collected: it takes the node off the wheel, so that a
// forgotten ticker stops costing wakeups and Len counts only timers
// someone can still see fire.
func (n *node) collected() {
	s := n.t.s
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
// collected, and for a ticker schedules the next tick on the grid: the
// first grid point after ns, the driver's clock reading, so that a late
// driver skips ticks instead of bunching them.
func (n *node) expireLocked(ns int64, sent time.Time) {
	c := n.channel()
	if c == nil {
		n.t.s.collected++
		return // nobody can receive: the node is done with
	}
	select {
	case c <- sent:
	default:
	}
	n.t.s.firedLocked(ns)
	if n.period == 0 {
		return
	}
	n.next = ticks.NextOnGrid(n.next, n.period, ns)
	n.t.s.q.Insert(&n.t.e, ticks.Ceil(n.next, n.t.s.w.tick))
}

// startGridLocked starts a ticker's grid at clock reading ns: the first
// tick is one period later.
func (n *node) startGridLocked(ns int64) {
	n.next = ticks.Add(ns, n.period)
	n.scheduleLocked(ticks.Ceil(n.next, n.t.s.w.tick), ns)
}
