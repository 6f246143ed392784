package timewheel

import (
	"sync/atomic"

	"github.com/timewheel/timewheel/internal/lockcheck"
	"github.com/timewheel/timewheel/internal/stripe"
	"github.com/timewheel/timewheel/queue"
)

// # Stopping a timer from another processor
//
// A timer lives on the shard it was started on. The processor of that
// shard takes the shard's lock for every start, and the driver for every
// fire. A goroutine that stops the timer later usually runs on another
// processor: it blocked on the network in between. If it took the shard's
// lock, processors would contend for each other's locks. A waiter that
// parks frees its processor for a goroutine that then moves again: a lock
// convoy.
//
// So a Stop from another processor takes no lock. It kills the timer's
// entry (queue.Entry.Kill), one compare-and-swap on the timer's own
// deadline word. That settles its race with the engine's claim, so a Stop
// that returned true never fires. Then it posts the entry to the shard's
// inbox. The shard buries it under its lock (queue.Wheel.Bury unlinks
// it): on the start after its producer asks, every drainAt posts, or
// when it fires. Go's runtime stops a timer on
// another processor's heap the same way: it marks it a zombie for the
// owner to remove. The shard's Locking block (see shard) places these
// rules among the package's other locks.
//
// Ground rules:
//   - The entry's links belong to the shard's lock. The dead mark is set
//     without it, by Kill alone.
//   - The dead mark is cleared under the lock by Bury, by Cancel, or by
//     the engine when it reaches the entry. It is cleared without the
//     lock by Revive: a Reset from any processor to a deadline no
//     earlier than the one the timer had. Each change of the mark is a
//     compare-and-swap.
//   - An inbox is a ring per processor (its id modulo the number of
//     rings). A producer writes a ring only while it holds the ring's
//     busy flag, pinned to its processor. The consumer reads it only
//     under the shard's lock. So each ring has one writer and one reader
//     at a time. A producer that finds the ring busy or full takes the
//     shard's lock and buries the entry itself.
//   - A posted entry may have been revived, killed again, or buried by
//     the time it is read: Bury acts only on an entry that is dead then.
//   - Killed entries not yet buried are at most ringSize per ring: memory
//     stays bounded whatever the rate of stops.
//   - If the killed timer was the one the shard asked the driver to wake
//     it for, the Stop takes the lock after all. It buries the entry and
//     moves the wake, so that the driver does not wake for nothing.
type inbox struct {
	rings []atomic.Pointer[ring] // by processor id modulo len; allocated on first use
}

// ringSize is the number of killed entries a ring holds until it is
// drained: a bound on the stopped timers a shard keeps linked, per ring.
const ringSize = 64

// ring is a single-producer, single-consumer queue of killed entries.
type ring struct {
	_     [64]byte
	busy  atomic.Bool   // held by the one producer writing the ring
	tail  atomic.Uint64 // entries ever posted; written by the producer holding busy
	seen  uint64        // owned by the producer holding busy: head when it last loaded it
	_     [40]byte
	head  atomic.Uint64 // entries ever drained; written under the shard's mu
	_     [56]byte
	slots [ringSize]*queue.Entry // slot i%ringSize: written by the producer before tail, read under mu
}

// newInbox returns an inbox of n rings.
func newInbox(n int) inbox {
	return inbox{rings: make([]atomic.Pointer[ring], max(n, 1))}
}

// ring returns the ring of processor p, allocating it on first use.
func (b *inbox) ring(p int) *ring {
	slot := &b.rings[uint(p)%uint(len(b.rings))]
	if r := slot.Load(); r != nil {
		return r
	}
	slot.CompareAndSwap(nil, new(ring))
	return slot.Load()
}

// post appends e to r and reports whether it did: false if another
// producer holds r or r is full. Every drainAt entries it sets dirty, for
// the shard's next start to drain the inbox. The caller is pinned to its
// processor.
func (r *ring) post(e *queue.Entry, dirty *atomic.Bool) bool {
	if !r.busy.CompareAndSwap(false, true) {
		return false
	}
	t := r.tail.Load()
	if t-r.seen >= ringSize {
		r.seen = r.head.Load() // a line the consumer writes: loaded only when the ring looks full
	}
	ok := t-r.seen < ringSize
	if ok {
		r.slots[t%ringSize] = e
		r.tail.Store(t + 1)
		if (t+1)%drainAt == 0 && !dirty.Load() {
			dirty.Store(true)
		}
	}
	r.busy.Store(false)
	return ok
}

// posted returns how many entries were ever posted to the inbox: the
// Stops that took no lock, for Stats.
func (b *inbox) posted() uint64 {
	var n uint64
	for i := range b.rings {
		if r := b.rings[i].Load(); r != nil {
			n += r.tail.Load()
		}
	}
	return n
}

// away reports whether the calling goroutine runs on a processor whose
// shard is not s, pinned to it (the caller unpins), and the processor.
// With lazyStops set (by tests), every processor counts as away.
func (s *shard) away() (p int, away bool) {
	p = stripe.ProcPin()
	sh := s.w.shards
	return p, lazyStops || sh[uint(p)%uint(len(sh))] != s
}

// lazyStops makes every Stop and Reset take the path of another
// processor: tests set it to run the lock-free paths on one shard.
var lazyStops = false

// killed is what kill did.
type killed uint8

const (
	// killLocked: nothing. The caller stops the timer under the lock: it
	// runs on the timer's own processor (where the lock is cheap: only
	// that processor and the driver take it), or the timer is a channel
	// timer that was not pending while the engine was expiring timers,
	// whose value may be on its way.
	killLocked killed = iota
	// killStopped: the timer was pending, and now never fires. Stop
	// reports true.
	killStopped
	// killIdle: the timer was not pending, and nothing of it is on its
	// way. Stop reports false (a channel timer's Stop still drains C).
	killIdle
)

// kill stops e lazily if the calling goroutine runs on another processor
// than s's (see killed). chanTimer says whether e is a channel timer's.
func (s *shard) kill(e *queue.Entry, chanTimer bool) killed {
	k, old, posted := s.killPinned(e, chanTimer)
	if k == killStopped && (!posted || s.armed.Load() == old) {
		// A full or busy ring, or the timer the driver is set for: bury
		// it now and, if it was the one, move the driver's wake.
		s.mu.Lock()
		s.awayLocks++
		if !posted {
			s.stopped++
		}
		s.drainAllLocked()
		if !e.Stray() {
			s.q.Bury(e)
		}
		s.settleLocked()
		s.mu.Unlock()
	}
	return k
}

// killPinned is kill's part pinned to the processor: it kills e and posts
// it to the processor's ring, and returns e's deadline before the kill
// and whether the ring took it.
func (s *shard) killPinned(e *queue.Entry, chanTimer bool) (k killed, old int64, posted bool) {
	p, away := s.away()
	defer stripe.ProcUnpin()
	if !away {
		return killLocked, 0, false
	}
	old, ok := e.Kill()
	if !ok {
		if chanTimer && !e.Dead() && s.expiring.Load() {
			return killLocked, 0, false
		}
		return killIdle, 0, false
	}
	return killStopped, old, s.inbox.ring(p).post(e, &s.dirty)
}

// revive makes e, killed by a Stop, pending again at tick when, where it
// lies, and reports whether it did. when must be no earlier than its
// deadline was (see queue.Entry.Revive). A Reset that restarts a timer so
// takes no lock.
func (s *shard) revive(e *queue.Entry, when int64) bool {
	if !e.Revive(when) {
		return false
	}
	s.w.lazy.Add()
	return true
}

// drainLocked drains the inbox if a producer has asked for it (see
// ring.post). A start loads one flag, a line written once per drainAt
// lock-free Stops. Looking at the rings would load lines written on every
// one.
func (s *shard) drainLocked() {
	lockcheck.Held(&s.mu, "shard.drainLocked")
	if s.dirty.Load() {
		s.dirty.Store(false)
		s.drainAllLocked()
	}
}

// drainAt is how many entries a producer posts between its requests to
// drain the inbox. It is a batch, whose cache misses overlap (see
// queue.Wheel.BuryAll). It is a quarter of a ring, so a ring rarely fills
// before its shard's next start.
const drainAt = ringSize / 4

// drainAllLocked buries the entries of every ring of the inbox.
func (s *shard) drainAllLocked() {
	lockcheck.Held(&s.mu, "shard.drainAllLocked")
	buried := false
	for i := range s.inbox.rings {
		if r := s.inbox.rings[i].Load(); r != nil && s.drainRingLocked(r) {
			buried = true
		}
	}
	if buried {
		s.emptiedLocked()
	}
}

// emptiedLocked withdraws the shard's wake if burying left nothing
// pending: an idle wheel never wakes.
func (s *shard) emptiedLocked() {
	lockcheck.Held(&s.mu, "shard.emptiedLocked")
	if s.q.Len() == 0 {
		s.disarmLocked()
	}
}

// drainRingLocked buries the entries posted to r. A copy of a Timer
// (see Timer), stopped lazily, has links that are not its own: it is
// skipped, and the Timer it was copied from stays pending. It reports
// whether r held any entry.
func (s *shard) drainRingLocked(r *ring) bool {
	lockcheck.Held(&s.mu, "shard.drainRingLocked")
	h, t := r.head.Load(), r.tail.Load()
	if h == t {
		return false
	}
	var batch [ringSize]*queue.Entry
	n := 0
	for ; h != t; h++ {
		batch[n] = r.slots[h%ringSize]
		r.slots[h%ringSize] = nil
		n++
	}
	r.head.Store(h)
	s.q.BuryAll(batch[:n])
	return true
}

// settleLocked moves the shard's wake to its next deadline, or withdraws
// it if nothing is pending, unless the driver has claimed the shard for
// a fire, which sets the wake itself when it ends.
func (s *shard) settleLocked() {
	lockcheck.Held(&s.mu, "shard.settleLocked")
	if s.armed.Load() != notArmed {
		s.rearmLocked(s.w.since())
	}
}
