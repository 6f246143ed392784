package timewheel

import (
	"math"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"
	"weak"

	"github.com/timewheel/timewheel/internal/lockcheck"
	"github.com/timewheel/timewheel/queue"
)

// shard is one engine with its lock. A wheel has one per processor, or as
// many as WithShards says; a timer belongs to the shard it was started on.
// The wheel's one driver fires the shard at the tick it asks for (armed).
//
// # Locking
//
// Three locks, each guarding its own owner's fields:
//   - shard.mu guards the engine (q), the entries' links and every field
//     marked "guarded by mu", a node's included. Every start takes it, and
//     so do fire and every Stop or Reset that has no lock-free path.
//   - driver.mu guards the driver's clock timer and the tick it is set
//     for (driver.timer, driver.armed).
//   - Pool.mu guards the pool's queue, free list and counts.
//
// The order: a shard's mu comes before the driver's and the pool's. A
// shard calls driver.move with its mu held (armLocked), and takes a chunk
// from the pool with it held (takeSpare). The driver and the pool never
// take a shard's lock while they hold their own, and nothing holds two
// shards' locks at once. Callbacks run with no lock held.
//
// Read without a lock, and why that is safe:
//   - w and inbox never change after newShard.
//   - armed is atomic. It is written under mu, except by the driver's
//     claim, a compare-and-swap to notArmed (driver.fire). The driver
//     reads it to find the earliest wake, and a Stop from another
//     processor to see whether it stopped the timer the driver is set for.
//   - expiring is atomic, written under mu. A channel timer's Stop from
//     another processor reads it: a value may be on its way (shard.kill).
//   - dirty is set by a producer without the lock and cleared under mu.
//   - The inbox's rings and the entries' deadline words: see the ground
//     rules in inbox.go.
//   - batch, out and spare belong to the goroutine that set firing.
//   - driver.armed is atomic, written under driver.mu. driver.move reads
//     it first without the lock, to skip the lock when nothing changes
//     (see move).
//   - The counters kept outside any lock are atomic: driver.wakeups and
//     driver.emptyWakeups, Wheel.lazy.
//
// The lines other processors read are kept apart from those the shard's
// own work writes (checked at compile time at the end of this file).
type shard struct {
	_ [64]byte // keep shards on cache lines of their own

	// Read by other processors' Stops (see Locking above), each on a line
	// that the shard's own work does not write. armed and expiring change
	// once or twice a fire.
	w        *Wheel
	inbox    inbox // timers stopped from other processors, to bury
	_        [64 - 8 - 24]byte
	armed    atomic.Int64 // written under mu, or claimed by the driver; the tick this shard asked the driver to wake it at, or notArmed
	expiring atomic.Bool  // written under mu: fire is in the engine's Expire, sending on channels
	_        [64 - 8 - 4]byte
	dirty    atomic.Bool // set by a producer every drainAt entries it posts, cleared under mu by the start that drains the inbox
	_        [64 - 4]byte

	mu         sync.Mutex
	idle       sync.Cond    // signalled when firing goes false; uses mu
	q          *queue.Wheel // guarded by mu
	firing     bool         // guarded by mu; a goroutine is in fire
	again      bool         // guarded by mu; fire was called while firing
	closed     bool         // guarded by mu
	discarded  int          // guarded by mu; pending timers dropped by close
	batch      []func()     // owned by the goroutine with firing set; callbacks for an executor other than the wheel's pool
	out        chunkList    // owned by the goroutine with firing set; callbacks for the wheel's pool
	spare      *chunk       // owned by the goroutine with firing set; an empty chunk for out, or nil
	nursery    []*node      // guarded by mu; young nodes scheduled since the last ageLocked (see node)
	survivors  []*node      // guarded by mu; young nodes pending at the last ageLocked, to promote at the next
	promoting  []*node      // guarded by mu; survivors still pending at the last ageLocked, for promoteLocked
	spareNodes []*node      // guarded by mu; promoting's other buffer
	awayLocks  uint64       // guarded by mu; Stops from other processors that took mu (see inbox.go)

	// Counters for Stats.
	started   uint64                  // guarded by mu; timers and tickers started
	stopped   uint64                  // guarded by mu; taken off by Stop
	resets    uint64                  // guarded by mu; Resets that took the lock
	collected uint64                  // guarded by mu; nodes whose channel was collected
	lateness  [LatenessBuckets]uint64 // guarded by mu; fires by lateness bucket
	lateSum   int64                   // guarded by mu; lateness of every fire, nanoseconds
	late      lateCache               // guarded by mu; the last fire's lateness
	_         [64]byte
}

const notArmed = math.MaxInt64

func newShard(w *Wheel, rings int) *shard {
	s := &shard{w: w, q: queue.NewWheel(), inbox: newInbox(rings)}
	s.armed.Store(notArmed)
	s.idle.L = &s.mu
	return s
}

// start starts a new timer, d from now, unless the wheel is closed. The
// timer is e, an AfterFunc Timer's entry, or, with e nil, n, the node of a
// channel Timer or of a Ticker (whose grid starts now). It is the one way
// into a shard for every kind of timer.
func (s *shard) start(e *queue.Entry, n *node, d time.Duration) {
	when, ns := s.w.deadline(d)
	s.startAt(e, n, when, ns)
}

// startAt is start, for a deadline tick computed from clock reading ns
// (see Wheel.deadline).
func (s *shard) startAt(e *queue.Entry, n *node, when, ns int64) {
	s.mu.Lock()
	s.drainLocked()
	if !s.closed {
		s.started++
		switch {
		case e != nil:
			s.scheduleLocked(e, when, ns)
		case n.ticker:
			n.startGridLocked(ns)
		default:
			n.scheduleLocked(when, ns)
		}
	}
	s.unlockAndPromote()
}

// unlockAndPromote unlocks mu and, if ageLocked left nodes to promote,
// promotes them (see promoteLocked), with mu released while it makes
// their specials. (On a goroutine of their own, the specials cost as
// much: the runtime's locks for them are shared, and BenchmarkChanPatterns
// saw no gain.)
func (s *shard) unlockAndPromote() {
	if len(s.promoting) > 0 {
		s.promoteLocked()
	}
	s.mu.Unlock()
}

// postpone moves e, if pending, to tick when without taking the lock, and
// reports whether it did. when must be no earlier than e's deadline (see
// queue.Entry.Postpone). If it did not, the caller reschedules e under the
// lock.
func (s *shard) postpone(e *queue.Entry, when int64) bool {
	old := e.When()
	if !e.Postpone(when) {
		return false
	}
	if when != old {
		// Counted only when the deadline moves: a refresh within the
		// tick the timer is already due at, the common case at high
		// rates, changes nothing and costs no atomic add.
		s.w.lazy.Add()
	}
	return true
}

// scheduleLocked inserts e due at tick when; ns is the clock reading when
// was computed from. It moves the driver earlier if e is now the first
// timer due. It does too if e made a slot big enough to be moved down
// ahead of time (see queue.Wheel.Ahead).
func (s *shard) scheduleLocked(e *queue.Entry, when, ns int64) {
	lockcheck.Held(&s.mu, "shard.scheduleLocked")
	s.q.Insert(e, when)
	when = e.When()
	if ahead, _ := s.q.Ahead(); ahead < when {
		when = ahead
	}
	if when < s.armed.Load() {
		s.armLocked(when, ns)
	}
}

// cancelLocked removes e if pending and reports whether it was. When the
// shard empties it withdraws its wake. When e was the timer it asked the
// driver to wake it for, it asks for the next one instead. So the driver
// never wakes for nothing.
func (s *shard) cancelLocked(e *queue.Entry) bool {
	lockcheck.Held(&s.mu, "shard.cancelLocked")
	when := e.When()
	if !s.q.Cancel(e) {
		return false
	}
	switch {
	case s.q.Len() == 0:
		s.disarmLocked()
	case when == s.armed.Load():
		s.rearmLocked(s.w.since())
	}
	return true
}

// rearmLocked sets the driver for the engine's NextWake, or stops it if
// nothing is pending; ns is a clock reading no later than now. NextWake
// answers in O(1), at the cost of some wakes with nothing due: Wheel's
// doc lists them.
func (s *shard) rearmLocked(ns int64) {
	lockcheck.Held(&s.mu, "shard.rearmLocked")
	next, ok := s.q.NextWake()
	if !ok {
		s.disarmLocked()
		return
	}
	if next != s.armed.Load() {
		s.armLocked(next, ns)
	}
}

// armLocked asks the wheel's driver to fire this shard at tick when. ns
// is a clock reading no later than now, from which the driver's sleep is
// computed. An earlier reading only makes it wake later, never early.
func (s *shard) armLocked(when, ns int64) {
	lockcheck.Held(&s.mu, "shard.armLocked")
	s.w.driver.move(s, s.armed.Swap(when), when, ns)
}

// disarmLocked withdraws the shard's wake.
func (s *shard) disarmLocked() {
	lockcheck.Held(&s.mu, "shard.disarmLocked")
	if old := s.armed.Swap(notArmed); old != notArmed {
		s.w.driver.move(s, old, notArmed, 0)
	}
}

// fire, called by the driver, expires every timer due by now. It asks the
// driver to wake it at the next deadline and hands the due callbacks to
// the executor, in order. Only one goroutine fires a shard at a time; a
// call that finds another firing asks it to go round again. A callback
// that panics through an inline executor leaves the shard able to fire
// again (see recoverFire). fire reports whether it expired any timer, or
// left the firing to another goroutine.
func (s *shard) fire() (fired bool) {
	s.mu.Lock()
	if s.firing || s.closed {
		s.again = true
		s.mu.Unlock()
		return true
	}
	s.firing = true
	s.mu.Unlock()
	var (
		batch    []func() // being dispatched
		ran      int      // how many of batch the executor has returned from
		now      int64    // the tick expired last
		finished bool
	)
	defer func() {
		if !finished {
			s.recoverFire(batch[min(ran+1, len(batch)):], now)
		}
	}()
	for {
		s.mu.Lock()
		s.again = false
		s.drainAllLocked() // so that the wake set below is for a timer still pending
		ns := s.w.since()
		now = ns / int64(s.w.tick)
		sent := s.w.clock.Now()
		s.expiring.Store(true)
		if s.q.Expire(now, func(e *queue.Entry) { s.expireLocked(e, ns, sent) }) > 0 {
			fired = true
		}
		s.expiring.Store(false)
		s.armed.Store(notArmed) // the driver has fired: whatever is next needs it set anew
		if !s.closed {
			s.rearmLocked(ns)
		}
		batch, ran = s.batch, 0
		s.batch = nil // taken: a panic in dispatch must not leave it to run again
		out := s.out
		s.out = chunkList{} // taken by the pool
		s.mu.Unlock()
		if out.n > 0 {
			if c := s.w.pool.executeAll(out, s.spare == nil); c != nil {
				s.spare = c
			}
		}
		s.w.dispatch(batch, &ran)
		clear(batch)
		s.mu.Lock()
		s.batch = batch[:0]
		if !s.again || s.closed {
			// Deciding to stop and clearing firing in one critical section:
			// a fire that finds firing set is then sure to be seen here.
			s.firing = false
			s.idle.Broadcast()
			finished = true
			s.mu.Unlock()
			return fired
		}
		s.mu.Unlock()
	}
}

// recoverFire runs, with mu not held, as a callback's panic leaves fire.
// It keeps rest, the callbacks of the batch after the one that panicked,
// for the next fire to dispatch first, and sets the driver for that fire.
// Then it lets the shard fire again. Close counts kept callbacks as
// discarded.
func (s *shard) recoverFire(rest []func(), now int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.firing = false
	s.idle.Broadcast()
	if s.closed {
		return
	}
	if len(rest) > 0 {
		s.batch = append(rest[:0:0], rest...)
	}
	if len(rest) > 0 || s.again {
		// Kept callbacks, or a driver call that found this one firing and
		// only asked it to go round again. The driver has fired and is not
		// pending, whatever armed says: set it for now, when the clock
		// next moves.
		s.again = false
		s.armLocked(now, s.w.since())
	}
}

// The casts in expireLocked rely on an Entry being at offset 0 of a
// Timer, and a Timer at offset 0 of a node. These fail to compile (index
// out of range) if a field is put before them.
var (
	_ = [1]struct{}{}[unsafe.Offsetof(Timer{}.e)]
	_ = [1]struct{}{}[unsafe.Offsetof(node{}.t)]
)

// expireLocked handles one timer the engine has expired at clock reading
// ns (nanoseconds since the epoch).
func (s *shard) expireLocked(e *queue.Entry, ns int64, sent time.Time) {
	lockcheck.Held(&s.mu, "shard.expireLocked")
	t := (*Timer)(unsafe.Pointer(e)) // e is the first field of a Timer
	if t.f != nil {
		if p := s.w.pool; p != nil {
			if s.out.full() {
				s.out.link(s.takeSpare(p))
			}
			s.out.push(t.f)
		} else {
			s.batch = append(s.batch, t.f)
		}
		s.firedLocked(ns)
		return
	}
	(*node)(unsafe.Pointer(t)).expireLocked(ns, sent) // f nil: t is the first field of a node
}

// takeSpare returns an empty chunk for out: the shard's spare, if it
// has one, else one of p's.
func (s *shard) takeSpare(p *Pool) *chunk {
	c := s.spare
	if c == nil {
		return p.spare()
	}
	s.spare = nil
	return c
}

// ageLocked runs when the nursery is full: it hands the survivors still
// pending to promoteLocked, which the caller's unlockAndPromote runs,
// and keeps the nursery's pending nodes as the next survivors (see node).
// O(youngBatch).
func (s *shard) ageLocked() {
	lockcheck.Held(&s.mu, "shard.ageLocked")
	for i, n := range s.survivors {
		if n.t.e.Pending() {
			s.promoting = append(s.promoting, n) // still young: not listed again meanwhile
		} else {
			n.young = false
		}
		s.survivors[i] = nil
	}
	s.survivors = s.survivors[:0]
	for i, n := range s.nursery {
		if n.t.e.Pending() {
			s.survivors = append(s.survivors, n)
		} else {
			n.young = false // reachable from its Timer alone: it is listed again if scheduled again
		}
		s.nursery[i] = nil
	}
	s.nursery = s.nursery[:0]
}

// promoteLocked promotes the nodes ageLocked or promote left in
// promoting, until there are none. It makes their weak pointers and
// cleanups, the costly part, with mu released: until it takes mu again,
// each node holds its channel strongly, so the channel cannot be
// collected under it. O(nodes).
func (s *shard) promoteLocked() {
	lockcheck.Held(&s.mu, "shard.promoteLocked")
	var buf [2 * youngBatch]weak.Pointer[byte]
	for len(s.promoting) > 0 {
		batch := s.promoting
		s.promoting = s.spareNodes[:0]
		s.spareNodes = nil
		s.mu.Unlock()
		weaks := buf[:]
		if len(batch) > len(buf) {
			weaks = make([]weak.Pointer[byte], len(batch))
		}
		// Last first. The runtime keeps a span's specials in a list sorted
		// by address, and each one made walks it from the lowest. The
		// batch's channels were mostly made one after another, in
		// address order: made from the last down, a special walks past
		// none of the batch's own (10–12% less time for After dropped,
		// BenchmarkChanPatterns).
		for i := len(batch) - 1; i >= 0; i-- {
			weaks[i] = batch[i].special()
		}
		s.mu.Lock()
		for i, n := range batch {
			n.commitLocked(weaks[i])
			batch[i] = nil
		}
		if s.spareNodes == nil {
			s.spareNodes = batch[:0]
		}
	}
}

// promote runs once at the end of each garbage collection: it promotes
// every young node that is pending (see node), so that a forgotten timer
// is collected within the next collections. O(youngBatch).
func (s *shard) promote() {
	s.mu.Lock()
	for _, young := range [...]*[]*node{&s.nursery, &s.survivors} {
		for i, n := range *young {
			if n.t.e.Pending() {
				s.promoting = append(s.promoting, n)
			} else {
				n.young = false
			}
			(*young)[i] = nil
		}
		*young = (*young)[:0]
	}
	s.promoteLocked() // on the runtime's cleanup goroutine already
	s.mu.Unlock()
}

// close drops the shard's pending timers and withdraws its wake. If wait
// is set, it waits for a fire in progress to finish. (Close from a
// callback must not: the fire may be its own.)
func (s *shard) close(wait bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	s.drainAllLocked()
	s.discarded = s.q.Len()
	s.q.Expire(math.MaxInt64, func(*queue.Entry) {})
	s.disarmLocked()
	for wait && s.firing {
		s.idle.Wait()
	}
	clear(s.nursery) // nothing is pending: nothing to promote
	s.nursery = s.nursery[:0]
	clear(s.survivors)
	s.survivors = s.survivors[:0]
	for _, n := range s.promoting {
		n.young = false
	}
	clear(s.promoting)
	s.promoting = s.promoting[:0]
	// Callbacks kept after a panic (see recoverFire) never run now.
	s.discarded += len(s.batch)
	clear(s.batch)
	s.batch = s.batch[:0]
}

// The lines other processors read: checked at compile time (index out of
// range) so that a field added above them cannot move them.
var (
	_ = [1]struct{}{}[unsafe.Offsetof(shard{}.w)-64]
	_ = [1]struct{}{}[unsafe.Offsetof(shard{}.armed)-128]
	_ = [1]struct{}{}[unsafe.Offsetof(shard{}.dirty)-192]
	_ = [1]struct{}{}[unsafe.Offsetof(shard{}.mu)-256]
)
