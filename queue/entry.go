package queue

import (
	"fmt"
	"math"
	"sync/atomic"
)

// Entry is one timer in a [Wheel]: two links and a deadline, nothing else.
// It is intrusive: a caller that wants no allocation of its own per timer
// embeds an Entry in its timer type and passes it to [Wheel.Insert]. The
// zero Entry is a timer that is not pending.
//
// The links belong to the wheel's owner (see [Wheel]). Those of an entry
// Expire fired stay the wheel's until that Expire returns. Fire may
// file the entry in another wheel, but another goroutine must wait for
// Expire to return. The deadline is an atomic word, which Postpone, Kill
// and Revive change from any goroutine without the owner's lock.
type Entry struct {
	prev, next *Entry       // links in a slot or in the due list; nil when not pending, but in an entry fireDue took off lazily, until it tidies
	when       atomic.Int64 // the state word: see "The when word" below
}

// # The when word
//
// Entry.when is an entry's state, or a list sentinel's code, in one
// int64 that Postpone, Kill and Revive change by compare-and-swap. This
// is the one account of what it holds; code reads and writes it only
// through the names below. Its ranges, from the lowest:
//
//	raw < 0                pending, due at tick ^raw      pendingWord(t), isPending, pendingAt
//	raw == 0               not pending (the zero Entry)   idleWord
//	0 < raw < deadBase     a list sentinel's code ^c      codeWord(c), load
//	deadBase <= raw        dead, killed at tick           deadWord(t), isDead, dead
//	                       raw-deadBase
//	raw == deadBase+maxDead  dead, killed past maxDead: Revive refuses it
//
// A pending deadline is complemented (^t = -t-1), so that the zero Entry
// is not pending and pending is one sign test. It is at or after the tick
// of the slot the entry is filed in: Postpone only moves it later. A
// sentinel's code (dueCode for the due and firing lists, slotCode less
// the slot's number for a slot) lets a cancel that empties a slot find
// which slot it was from the sentinel alone. A dead entry keeps the
// deadline it had, so that Revive can tell whether a new one is no
// earlier. The codes stay below deadBase, which a constant below checks.

const (
	notPending = -1 // what load and When return for an entry that is not pending
	dueCode    = -2 // the code of the due and firing list sentinels
	slotCode   = -3 // the code of the sentinel of slot i at level k is slotCode - (k*levelSlots + i)

	idleWord = ^notPending // the word of an entry that is not pending: 0
)

// deadBase is the least word of a dead entry, above every code. A
// deadline past maxDead is recorded as maxDead, which Revive refuses.
const (
	deadBase = 1 << 20
	maxDead  = math.MaxInt64 - deadBase
)

// The codes of every list, the slots' and the chunks' (see ahead.go),
// stay below deadBase: a uint constant cannot be negative, so this fails
// to compile if they do not.
const _ = uint(deadBase - 1 - ^(slotCode - (numLevels+ringChunks)*levelSlots))

// pendingWord returns the word of an entry pending at tick t.
func pendingWord(t int64) int64 { return ^t }

// isPending reports whether raw is a pending entry's word.
func isPending(raw int64) bool { return raw < 0 }

// pendingAt returns the tick of raw, a pending entry's word.
func pendingAt(raw int64) int64 { return ^raw }

// codeWord returns the word of a list sentinel whose code is c.
func codeWord(c int64) int64 { return ^c }

// deadWord returns the word of an entry killed while pending at tick t.
func deadWord(t int64) int64 { return deadBase + min(t, maxDead) }

// isDead reports whether raw is a dead entry's word.
func isDead(raw int64) bool { return raw >= deadBase }

// dead reports whether raw is a dead entry's word, and the deadline it
// recorded.
func dead(raw int64) (int64, bool) { return raw - deadBase, isDead(raw) }

// load returns e's deadline, notPending, or a sentinel's code. A dead
// entry (see Kill) reads as due at the deadline it had. The earliest
// deadline a walk learns of its slot still holds if Revive makes it
// pending again, which it does only at that deadline or later.
func (e *Entry) load() int64 {
	raw := e.when.Load()
	if d, ok := dead(raw); ok {
		return d
	}
	return ^raw // pendingAt for a pending word; notPending, or the code, for the others
}

// When returns the tick the entry falls due at, or -1 if it is not
// pending. After scheduling, a deadline at or before the wheel's current
// tick reads as that tick. It is safe to call concurrently with the
// wheel's methods.
func (e *Entry) When() int64 {
	if raw := e.when.Load(); isPending(raw) {
		return pendingAt(raw)
	}
	return notPending
}

// Pending reports whether the entry is scheduled and has not fired or been
// cancelled or killed. It is safe to call concurrently with the wheel's
// methods.
func (e *Entry) Pending() bool { return isPending(e.when.Load()) }

// Postpone moves the deadline of a pending entry to tick when, if that is
// no earlier than its deadline now, and reports whether it did. It does
// not re-file the entry: the wheel does when its current tick reaches the
// slot the entry sits in. (Go's runtime and Linux's mod_timer leave a
// timer moved later where it is, too.) It returns false, changing
// nothing, if the entry is not pending or when is earlier. The caller
// then reschedules it the ordinary way.
//
// Postpone is safe to call from any goroutine, with no lock, while the
// wheel runs. The wheel fires an entry only after claiming it with a
// compare-and-swap on its deadline word. Postpone either moves a timer
// that has not fired or reports that it could not.
//
// The downside of this choice is order and wakeups. A postponed entry
// joins the timers of its new deadline only when its old slot comes
// round, behind those scheduled for that deadline in the meantime.
// Equal deadlines fire in schedule order only for entries that were not
// postponed. And Next may report a tick at which nothing is due any more
// (the old deadline), where a driver wakes once to re-file the entry. The
// complexity is O(1): it touches only the entry.
func (e *Entry) Postpone(when int64) bool {
	for {
		raw := e.when.Load()
		if !isPending(raw) || when < pendingAt(raw) {
			return false // not pending, killed, or earlier
		}
		if pendingAt(raw) == when || e.when.CompareAndSwap(raw, pendingWord(when)) {
			return true
		}
	}
}

// Kill stops a pending entry without unlinking it: it marks the entry dead
// and returns the deadline it had, and true. It returns false if the entry
// was not pending. It is safe from any goroutine, with no lock. A dead
// entry never fires. It stays linked, and counted in Len, until the owner
// cancels it ([Wheel.Cancel] removes it and returns false) or the wheel
// reaches its slot and drops it. Until then [Entry.Revive] may make it
// pending again where it lies.
//
// Kill lets a scheduler stop a timer without the lock of the queue that
// holds it. (Go's runtime marks such a timer a zombie, for the processor
// that owns its heap to remove.) A compare-and-swap on the deadline settles
// its race with Expire's claim and with Postpone, so an entry whose Kill
// returned true never fires. The complexity is O(1): it touches only the
// entry.
func (e *Entry) Kill() (int64, bool) {
	for {
		raw := e.when.Load()
		if !isPending(raw) {
			return notPending, false
		}
		if e.when.CompareAndSwap(raw, deadWord(pendingAt(raw))) {
			return pendingAt(raw), true
		}
	}
}

// Revive makes a dead entry pending again at tick when, where it lies,
// if when is no earlier than the deadline it had when killed, and
// reports whether it did. It returns false, changing nothing, if the
// entry is not dead (pending, or dropped by its wheel) or when is
// earlier. The caller then schedules it the ordinary way, after Cancel.
// As after Postpone, the wheel files the entry again when it reaches the
// slot the entry lies in. It is safe to call from any goroutine, as Kill
// is. The complexity is O(1).
func (e *Entry) Revive(when int64) bool {
	for {
		raw := e.when.Load()
		old, ok := dead(raw)
		if !ok || old == maxDead || when < old {
			return false
		}
		if e.when.CompareAndSwap(raw, pendingWord(when)) {
			return true
		}
	}
}

// Dead reports whether the entry was killed and is still linked in its
// wheel (see Kill). It is safe to call concurrently with the wheel's
// methods.
func (e *Entry) Dead() bool {
	_, ok := dead(e.when.Load())
	return ok
}

// Stray reports whether e is a copy of an entry that was pending when it
// was copied: it has links, but no list links to it. A wheel refuses such
// an entry (Cancel and Reschedule panic), since unlinking it would unlink
// the original. Copying an Entry is a mistake go vet reports; Stray lets
// an owner that embeds Entries name the mistake in its own terms. Calls
// must be serialised with the wheel's, as for Cancel. The complexity is
// O(1).
func (e *Entry) Stray() bool { return e.prev != nil && e.prev.next != e }

// linked reports whether e is pending, that is linked into one of the
// wheel's lists, and panics if e is a stray copy (see Stray).
func (e *Entry) linked() bool {
	if e.prev == nil || e.when.Load() == idleWord {
		return false // not pending; if with links, taken off lazily (see Wheel.fireDue)
	}
	if e.prev.next != e {
		panic("timewheel/queue: an Entry copied while pending was passed to the wheel; pass the original (go vet reports the copy)")
	}
	return true
}

// initList makes e an empty circular list: a sentinel pointing at itself,
// whose when holds code.
func (e *Entry) initList(code int64) {
	e.prev, e.next = e, e
	e.when.Store(codeWord(code))
}

// empty reports whether the list whose sentinel is e holds no entries.
func (e *Entry) empty() bool { return e.next == e }

// pushBack links x at the tail of the list whose sentinel is e.
func (e *Entry) pushBack(x *Entry) {
	x.prev, x.next = e.prev, e
	e.prev.next = x
	e.prev = x
}

// unlink removes e from whatever list holds it. If that leaves the list
// empty it returns the list's sentinel, else nil. It does not change e's
// deadline.
func (e *Entry) unlink() (emptied *Entry) {
	p, n := e.prev, e.next
	p.next = n
	n.prev = p
	e.prev, e.next = nil, nil
	if p == n {
		return p // only the sentinel is left
	}
	return nil
}

// spliceBack moves every entry of the list whose sentinel is from to the
// tail of the list whose sentinel is e, leaving from empty.
func (e *Entry) spliceBack(from *Entry) {
	if from.empty() {
		return
	}
	first, last := from.next, from.prev
	first.prev = e.prev
	e.prev.next = first
	last.next = e
	e.prev = last
	from.prev, from.next = from, from
}

// sentinelSlot decodes the level and slot of a slot sentinel; ok is false
// for the due and firing lists.
func (e *Entry) sentinelSlot() (k, i int, ok bool) {
	code := e.load()
	if code > slotCode {
		if code != dueCode {
			panic(fmt.Sprintf("timewheel/queue: list sentinel with code %d", code))
		}
		return 0, 0, false
	}
	n := int(slotCode - code)
	return n / levelSlots, n % levelSlots, true
}
