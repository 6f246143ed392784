package timewheel

import (
	"runtime"
	"time"
	"unsafe"
	"weak"

	"github.com/timewheel/timewheel/internal/lockcheck"
	"github.com/timewheel/timewheel/internal/ticks"
)

// node is what the wheel holds for a channel Timer or a Ticker, in place
// of the object the user holds. So, as in Go 1.23, a timer or ticker
// nobody can reach any more is collected although it was never stopped.
//
// A node is born young: it holds its channel strongly (in t.C), and costs
// nothing more than its allocation. Most timers are stopped or fire
// while young, and never pay for more. A node still pending after its
// shard has scheduled youngBatch to twice youngBatch more young nodes,
// or when a garbage collection ends, is promoted, as generational
// collectors make only old objects pay. From then on it points to its
// channel only weakly, and a cleanup attached to the channel removes the
// node from its shard once the channel is collected. (A node whose
// channel is gone when it fires sends nothing and, for a ticker, is not
// armed again.)
//
// The weak pointer and the cleanup are two runtime specials, which cost
// about three times the rest of NewTimer (BenchmarkChanFloor): a timer
// dropped while pending pays them, one stopped or fired young does not.
// One special alone cannot do, as tried on 2026-11-29:
//   - A cleanup alone would leave the node pointing to freed memory
//     until the cleanup runs.
//   - A weak pointer alone needs a sweep of the promoted nodes after each
//     collection. The runtime runs it too late: 20,000 heap objects of
//     10,000 forgotten timers were left after three collections, in most
//     runs.
//   - A finalizer alone would be safe, and made a dropped After 40%
//     faster. But the runtime runs every finalizer on one goroutine,
//     slower than cleanups, and keeps each channel until its own has
//     run: up to 22,861 heap objects of 10,000 were left, once in 250
//     runs, and over 1,000 in 4% of them.
//
// A forgotten timer or ticker, of any duration, goes within three
// back-to-back collections, as Go's own test of this asks: the first
// frees its channel, the cleanup unlinks the node, the second frees the
// node. A young one is promoted at the end of the first (there are at
// most twice youngBatch of them per shard). A goroutine blocked
// receiving from the channel keeps the channel, and so the timer, alive.
type node struct {
	t      Timer              // first: the wheel's link; t.f is nil, which marks a node; t.C is the channel while the node is young; t.p is the *shard the timer was started on
	ch     weak.Pointer[byte] // once promoted: the channel's runtime object
	chp    uintptr            // the channel's address, to tell it from another (holds); not a reference
	owner  uintptr            // the address of the Timer or Ticker the user holds, to tell it from a copy (it does not keep it alive); 0 for After's
	young  bool               // listed in s.nursery, s.survivors or s.promoting; guarded by s.mu
	ticker bool               // the node is a tickerNode's; never changes
}

// tickerNode is a Ticker's node: a timer's node has no period or grid, and
// takes 80 bytes where this takes 96 (TestNodeSizes).
type tickerNode struct {
	node         // first, so that a *node of a ticker is its *tickerNode
	period int64 // in nanoseconds; guarded by s.mu
	next   int64 // the grid point pending, nanoseconds since the wheel's epoch; guarded by s.mu
}

// grid returns the tickerNode of a ticker's node (n.ticker set).
func (n *node) grid() *tickerNode { return (*tickerNode)(unsafe.Pointer(n)) }

// youngBatch is how many young nodes a shard schedules between two
// promotions (see node). A node is promoted once it is still pending
// after youngBatch to twice youngBatch more, so a timer stopped or fired
// within that many pays no special. It bounds the channels a shard
// holds strongly: a forgotten young timer's channel is not collected
// until its node is promoted.
const youngBatch = 64

// The casts between a channel and its runtime object (newNode,
// special, channel) rely on a channel being one pointer: this fails to compile
// (index out of range) if it is not.
var _ = [1]struct{}{}[unsafe.Sizeof(make(chan time.Time))-unsafe.Sizeof(unsafe.Pointer(nil))]

// newNode returns a node on shard s for channel c, a ticker's of the
// given period or a timer's (period 0).
func newNode(s *shard, c chan time.Time, period time.Duration) *node {
	var n *node
	if period > 0 {
		tn := &tickerNode{period: int64(period)}
		n = &tn.node
		n.ticker = true
	} else {
		n = new(node)
	}
	n.t.C = c
	n.t.p = unsafe.Pointer(s)
	n.chp = *(*uintptr)(unsafe.Pointer(&c))
	return n
}

// shard returns the shard the node's timer was started on.
func (n *node) shard() *shard { return (*shard)(n.t.p) }

// scheduleLocked schedules the node at tick when (see
// shard.scheduleLocked) and, if it holds its channel strongly, lists it
// for promotion.
func (n *node) scheduleLocked(when, ns int64) {
	lockcheck.Held(&n.shard().mu, "node.scheduleLocked")
	s := n.shard()
	s.scheduleLocked(&n.t.e, when, ns)
	if n.t.C != nil && !n.young {
		n.young = true
		s.nursery = append(s.nursery, n)
		if len(s.nursery) == youngBatch {
			s.ageLocked()
		}
	}
}

// special makes the weak pointer to the node's channel and attaches the
// cleanup that takes the node off the wheel once the channel is
// collected. The node holds the channel strongly meanwhile. It needs no
// lock: chp never changes.
func (n *node) special() weak.Pointer[byte] {
	p := *(**byte)(unsafe.Pointer(&n.chp))
	runtime.AddCleanup(p, (*node).collected, n)
	return weak.Make(p)
}

// commitLocked promotes the node with the weak pointer special made:
// from now on it holds its channel only through it. A node stopped
// since is promoted all the same: its special is made.
func (n *node) commitLocked(ch weak.Pointer[byte]) {
	lockcheck.Held(&n.shard().mu, "node.commitLocked")
	n.young = false
	if n.t.C == nil {
		return // promoted already
	}
	n.ch = ch
	n.t.C = nil
}

// collected runs on a runtime cleanup goroutine once the node's channel
// has been collected. It takes the node off the wheel, so that a
// forgotten ticker stops costing wakeups, and Len counts only timers
// someone can still see fire.
func (n *node) collected() {
	s := n.shard()
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

// holds reports whether c, the channel of the Timer or Ticker a caller
// holds, is the node's. If it is, the caller keeps the channel alive, and
// may use it without the lock. (A caller could have set the field C to
// another channel.)
func (n *node) holds(c <-chan time.Time) bool {
	return *(*uintptr)(unsafe.Pointer(&c)) == n.chp
}

// expireLocked sends the time on the node's channel, unless it has been
// collected. For a ticker, it schedules the next tick on the grid: the
// first grid point after ns, the driver's clock reading. So a late driver
// skips ticks instead of bunching them.
func (n *node) expireLocked(ns int64, sent time.Time) {
	lockcheck.Held(&n.shard().mu, "node.expireLocked")
	c := n.channel()
	if c == nil {
		n.shard().collected++
		return // nobody can receive: the node is done with
	}
	select {
	case c <- sent:
	default:
	}
	n.shard().firedLocked(ns)
	if !n.ticker {
		return
	}
	g := n.grid()
	g.next = ticks.NextOnGrid(g.next, g.period, ns)
	n.shard().q.Insert(&n.t.e, ticks.Ceil(g.next, n.shard().w.tick))
}

// stop takes the node off the wheel and takes back an unreceived value,
// for Timer.Stop and Ticker.Stop, and reports whether it did either. held
// is the channel of the Timer or Ticker stopped.
func (n *node) stop(held <-chan time.Time) bool {
	s := n.shard()
	k := s.kill(&n.t.e, true)
	if k != killLocked && n.holds(held) {
		stopped := k == killStopped
		// From another processor, with no value on its way (see
		// inbox.go). The caller holds the channel, so it is drained
		// without the lock: a ticker's may hold a tick, a timer's its
		// fired value.
		if drain(held) {
			stopped = true
		}
		return stopped
	}
	// Under the lock: on the timer's own processor, with a value maybe on
	// its way, or for a Timer whose C its owner set to another channel
	// (which kill may have stopped already).
	s.mu.Lock()
	defer s.mu.Unlock()
	pending := s.cancelLocked(&n.t.e)
	if pending {
		s.stopped++
	}
	if c := n.channel(); c != nil && drain(c) || k == killStopped {
		pending = true
	}
	return pending
}

// reset is Timer.Reset of a channel Timer.
func (n *node) reset(d time.Duration) bool {
	s := n.shard()
	when, ns := s.w.deadline(d)
	// A d of zero or less is due at the current tick, which a fire in
	// progress may have read the clock for before this call: it would
	// send a time older than the call. So it takes the lock, which a fire
	// holds from its clock reading to its last send.
	if d > 0 && s.postpone(&n.t.e, when) {
		// Pending and not yet claimed by the driver: no value of this
		// arming was sent on the channel. The Stop or Reset that armed it
		// again took back every earlier one.
		return true
	}
	if d > 0 && s.revive(&n.t.e, when) {
		// Killed by a Stop, which took back any value, and never
		// claimed since: nothing can be in C for an earlier deadline.
		return false
	}
	s.mu.Lock()
	pending := s.cancelLocked(&n.t.e)
	if c := n.channel(); c != nil && drain(c) {
		pending = true
	}
	if !s.closed {
		s.resets++
		n.scheduleLocked(when, ns)
	}
	s.unlockAndPromote()
	return pending
}

// startGridLocked starts a ticker's grid at clock reading ns: the first
// tick is one period later.
func (n *node) startGridLocked(ns int64) {
	lockcheck.Held(&n.shard().mu, "node.startGridLocked")
	g := n.grid()
	g.next = ticks.Add(ns, g.period)
	n.scheduleLocked(ticks.Ceil(g.next, n.shard().w.tick), ns)
}
