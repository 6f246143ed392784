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
// It points to its channel only weakly; a cleanup attached to the channel
// removes the node from its shard once the channel is collected, and a
// node whose channel is gone when it fires sends nothing and, for a
// ticker, is not armed again. A goroutine blocked receiving from the
// channel keeps the channel, and so the timer, alive.
type node struct {
	t  Timer              // first: the wheel's link; t.f and t.C are nil, which marks a node
	ch weak.Pointer[byte] // the channel's runtime object
	// A Ticker's grid, guarded by t.s.mu; period is zero for a Timer.
	period int64 // nanoseconds
	next   int64 // the grid point pending, nanoseconds since the wheel's epoch
}

// newNode returns a node on shard s for channel c, with the cleanup that
// removes it from the wheel once c is collected.
func newNode(s *shard, c chan time.Time) *node {
	p := (*byte)(*(*unsafe.Pointer)(unsafe.Pointer(&c))) // the channel's runtime object
	n := &node{t: Timer{s: s}, ch: weak.Make(p)}
	runtime.AddCleanup(p, (*node).collected, n)
	return n
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

// expireLocked sends the time on the node's channel, unless it has been
// collected, and for a ticker schedules the next tick on the grid: the
// first grid point after ns, the driver's clock reading, so that a late
// driver skips ticks instead of bunching them.
func (n *node) expireLocked(ns int64, sent time.Time) {
	p := n.ch.Value()
	if p == nil {
		n.t.s.collected++
		return // nobody can receive: the node is done with
	}
	c := *(*chan time.Time)(unsafe.Pointer(&p))
	select {
	case c <- sent:
	default:
	}
	n.t.s.firedLocked(ns)
	if n.period == 0 {
		return
	}
	if ns >= n.next {
		k := (ns-n.next)/n.period + 1 // periods to the first grid point after ns
		if k > (1<<63-1-n.next)/n.period {
			n.next = 1<<63 - 1 // the grid has run off the end of time
		} else {
			n.next += n.period * k
		}
	}
	n.t.s.q.Insert(&n.t.e, ticks.Ceil(n.next, n.t.s.w.tick))
}

// startGridLocked starts a ticker's grid at clock reading ns: the first
// tick is one period later.
func (n *node) startGridLocked(ns int64) {
	n.next = ticks.Add(ns, n.period)
	n.t.s.scheduleLocked(&n.t.e, ticks.Ceil(n.next, n.t.s.w.tick), ns)
}
