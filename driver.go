package timewheel

import (
	"sync"
	"sync/atomic"

	"github.com/timewheel/timewheel/clock"
	"github.com/timewheel/timewheel/internal/lockcheck"
	"github.com/timewheel/timewheel/internal/ticks"
)

// driver is a wheel's one callback timer of its clock, shared by the
// shards. Each shard asks it for a wake at its earliest tick (move), and
// it sleeps until the earliest of those. So shards waiting for the same
// tick wake once between them, and an idle wheel does not wake at all.
// When it fires, it fires every shard that is due: one on its own
// goroutine, each other on a goroutine of its own (see wake). On a clock
// other than the real one, it fires them one after the other on its own
// goroutine. Then a test's Advance returns with every due callback run by
// an inline executor. Its lock comes after the shards' (see shard).
type driver struct {
	w      *Wheel
	mu     sync.Mutex
	timer  clock.Timer  // guarded by mu; nil until first set
	armed  atomic.Int64 // written under mu: tick the timer is set for, notArmed, or resetting; read without it by move
	shards []*shard

	wakeups, emptyWakeups atomic.Uint64 // for Stats
}

// resetting is driver.armed while resetLocked looks for the shards'
// earliest wake: no tick, so that move's fast paths take the lock then.
const resetting = notArmed - 1

// move tells the driver shard s's wake moved from tick old to tick when
// (either may be notArmed); ns is a clock reading no later than now. The
// driver is set earlier if when is earlier than its tick. If it was set
// for old, it is set for the shards' earliest, so it never wakes for
// nothing. It is called with the shard's lock held (see shard), after
// the shard's armed was swapped from old to when.
//
// Three cases need no change, and take no lock, so that shards on several
// processors do not queue for it:
//   - a wake moved earlier, to no earlier than the driver's tick: it
//     wakes by then, and sets itself for the shard's wake after;
//   - a wake withdrawn or moved later, from later than the driver's tick:
//     the driver is set for another shard's wake, which still stands;
//   - the same from the driver's tick, while another shard waits for it
//     (or for an earlier one, which is setting the driver).
//
// Each reads armed after the shard's swap. A resetLocked that scanned the
// shard before the swap stored resetting before its scan, so the read
// sees resetting or what it stored after: either takes the lock. (Go's
// atomics are sequentially consistent.) The driver's fire stores
// notArmed before it scans, which fails every test too. Of two shards
// that leave the driver's tick at once, each swaps its own armed before
// it reads the other's, so at least one sees the other gone, and takes
// the lock.
func (d *driver) move(s *shard, old, when, ns int64) {
	switch a := d.armed.Load(); {
	case when < old && a <= when, when > old && a < old:
		return // resetting and notArmed fail both tests: old and when cannot both be notArmed
	case when > old && a == old && d.othersBy(s, a):
		return
	}
	d.mu.Lock()
	switch a := d.armed.Load(); {
	case when < a:
		d.setLocked(when, ns)
	case old == a && old != notArmed:
		d.resetLocked()
	}
	d.mu.Unlock()
}

// othersBy reports whether a shard other than s waits for tick a or an
// earlier one. O(shards).
func (d *driver) othersBy(s *shard, a int64) bool {
	for _, o := range d.shards {
		if o != s && o.armed.Load() <= a {
			return true
		}
	}
	return false
}

// resetLocked sets the driver for the earliest tick any shard waits for,
// or stops it if none does. O(shards). It stores resetting while it
// looks (see move).
func (d *driver) resetLocked() {
	lockcheck.Held(&d.mu, "driver.resetLocked")
	was := d.armed.Swap(resetting)
	next := int64(notArmed)
	for _, s := range d.shards {
		next = min(next, s.armed.Load())
	}
	switch {
	case next == notArmed:
		d.armed.Store(notArmed)
		d.timer.Stop() // made by New, so never nil
	case next != was:
		d.setLocked(next, d.w.since())
	default:
		d.armed.Store(was)
	}
}

func (d *driver) setLocked(when, ns int64) {
	lockcheck.Held(&d.mu, "driver.setLocked")
	d.armed.Store(when)
	sleep := ticks.Until(when, ns, d.w.tick)
	d.timer.Reset(sleep)
}

// fire is the clock timer's callback. It fires the shards due by now and
// sets itself for the earliest tick of those that are not; a shard it
// fires sets it again for its own next tick. A compare-and-swap of a
// shard's wake tick claims it, so a shard is handed to one goroutine per
// wake.
func (d *driver) fire() {
	d.wakeups.Add(1)
	d.mu.Lock()
	d.armed.Store(notArmed)
	d.mu.Unlock()
	defer func() {
		// Also when a callback panics through an inline executor: the
		// shards not reached yet are still waiting for a wake.
		d.mu.Lock()
		d.resetLocked()
		d.mu.Unlock()
	}()
	now := d.w.since() / int64(d.w.tick)
	var (
		mine  *shard
		k     *wake // the goroutines firing the other due shards, if any
		fired bool  // a shard fired by this goroutine fired something
	)
	for _, s := range d.shards {
		if a := s.armed.Load(); a <= now && s.armed.CompareAndSwap(a, notArmed) {
			switch {
			case !d.w.parallel:
				fired = s.fire() || fired // a test clock: every due callback has run when Advance returns
			case mine != nil:
				k = d.goFire(k, mine)
				mine = s
			default:
				mine = s
			}
		}
	}
	if mine != nil {
		fired = mine.fire() || fired
	}
	switch {
	case k != nil:
		k.done(fired)
	case !fired:
		d.emptyWakeups.Add(1)
	}
}

// wake is a driver wake whose due shards fire on several goroutines: the
// last to finish counts the wake as empty if none of them fired anything.
type wake struct {
	d    *driver
	left atomic.Int32 // goroutines still firing, plus one for the driver's
	busy atomic.Bool  // a shard fired something
}

// goFire fires s on a goroutine of its own as part of the wake k, which
// it makes if k is nil, and returns k.
func (d *driver) goFire(k *wake, s *shard) *wake {
	if k == nil {
		k = &wake{d: d}
		k.left.Store(1)
	}
	k.left.Add(1)
	go func() { k.done(s.fire()) }()
	return k
}

// done ends one goroutine's part of the wake; busy says whether it fired
// anything.
func (k *wake) done(busy bool) {
	if busy {
		k.busy.Store(true)
	}
	if k.left.Add(-1) == 0 && !k.busy.Load() {
		k.d.emptyWakeups.Add(1)
	}
}
