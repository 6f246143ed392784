package expiry

import (
	"fmt"
	"reflect"
	"strconv"
	"time"

	"github.com/timewheel/timewheel/internal/lockcheck"
	"github.com/timewheel/timewheel/internal/ticks"
)

// Atomic read-modify-write of one key. Every method here holds the key's
// shard's write lock from its read of the key's entry to its write. No
// other write of the key (Set, Delete, another of these, an expiry) comes
// between the read and the write. Gets do not wait for it: they see the
// entry as it was before or as it is after.

// ComputeOp says what [Map.Compute] does with the key's entry once its
// function returns.
type ComputeOp uint8

const (
	// Keep leaves the entry as it was; a key without a live entry stays
	// without one. It is the zero ComputeOp.
	Keep ComputeOp = iota
	// Write stores the value returned for Compute's ttl, as Set does:
	// the entry's deadline becomes now plus the ttl.
	Write
	// Update stores the value returned and keeps the entry's deadline
	// and ttl, as [Map.Update] does; a key without a live entry gets a
	// new one for Compute's ttl.
	Update
	// Remove deletes the entry, as Delete does (its callback says
	// Deleted); a key without a live entry stays without one.
	Remove
)

var computeOpNames = [...]string{Keep: "Keep", Write: "Write", Update: "Update", Remove: "Remove"}

// String returns the op's name: "Keep", "Write", "Update" or "Remove".
func (op ComputeOp) String() string {
	if int(op) < len(computeOpNames) {
		return computeOpNames[op]
	}
	return "ComputeOp(" + strconv.Itoa(int(op)) + ")"
}

// Compute calls f with k's live value and true, or the zero V and false.
// Then it does what the op f returns says: [Keep] the entry as it is,
// [Write] the value f returns for ttl, [Update] it keeping the entry's
// deadline, or [Remove] the entry. It returns k's value after that and
// true, or the zero V and false if k is left without a live entry. A
// value that replaces another gets the callback Replaced for the old one,
// as Set's does; a removed one Deleted. Compute returns an error:
//   - wrapping ErrTTL, repeating ttl, if ttl is not positive, even if f
//     would not write;
//   - ErrClosed on a closed map, or one wrapping ErrClosed and
//     timewheel.ErrClosed on a closed wheel (f is not called then);
//   - wrapping ErrTooHeavy, changing nothing, if f writes a value heavier
//     than the map's maximum weight.
//
// f runs once per call, on the caller's goroutine, with k's shard
// write-locked. No write of k, or of the other keys of its shard, happens
// while it runs. Gets and Touches of k see the entry as it was before f
// or as Compute leaves it, never a state in between. f must therefore be
// short, and must not call the map, for any key, except with Get, TTL or
// All. The locks are not reentrant: a call that takes k's shard's lock
// (Set, Delete, Compute, GetOrLoad, Touch on contention...) waits for f
// for ever. Compute cannot see it coming (see GetOrLoad). If f panics,
// nothing is changed, the lock is released, and the panic goes on to the
// caller. An op that is none of the four panics, naming it, and changes
// nothing.
//
// Compute neither counts a hit or a miss nor renews a sliding entry. It
// allocates an entry when it stores a new key, or a value not stored in
// place (see Set). The complexity is O(1) plus f, plus O(log B) with a
// capacity when it opens or closes a bucket.
func (m *Map[K, V]) Compute(k K, ttl time.Duration, f func(old V, found bool) (V, ComputeOp)) (V, bool, error) {
	m.init()
	var zero V
	if ttl <= 0 {
		return zero, false, fmt.Errorf("%w %v", ErrTTL, ttl)
	}
	if f == nil {
		panic("expiry: Compute called with a nil function")
	}
	m.checkNewKey("Compute", k)
	if err := m.w.Err(); err != nil {
		return zero, false, fmt.Errorf("%w: %w", ErrClosed, err)
	}
	var v V
	var ok bool
	var err error
	m.access(k, func(fd found[K, V]) { v, ok, err = fd.s.computeLocked(fd, k, ttl, f) })
	return v, ok, err
}

// computeLocked is Compute on what the access path found of k. A live
// entry stays live while the lock is held: only a writer moves a deadline
// earlier, and Touches only move it later.
func (s *shard[K, V]) computeLocked(fd found[K, V], k K, ttl time.Duration, f func(V, bool) (V, ComputeOp)) (v V, ok bool, err error) {
	lockcheck.WriteHeld(&s.mu, "shard.computeLocked")
	if s.closed {
		return v, false, ErrClosed
	}
	e, h, now := fd.e, fd.h, fd.now
	var old V
	if fd.live {
		old = e.val
	}
	nv, op := f(old, fd.live)
	if op == Write || op == Update {
		if err := s.m.tooHeavy(k, nv); err != nil {
			return v, false, err
		}
	}
	switch op {
	case Keep:
		if fd.live {
			v, ok = old, true
		}
		return v, ok, nil
	case Write:
		s.setLocked(e, k, h, nv, ttl, ticks.Add(now, int64(ttl)), now)
	case Update:
		if fd.live {
			s.updateLocked(e, h, nv, e.freeze(), now)
		} else {
			s.setLocked(e, k, h, nv, ttl, ticks.Add(now, int64(ttl)), now)
		}
	case Remove:
		if e != nil {
			s.removeLocked(e, h, s.whyGone(e.freeze(), now))
		}
		return v, false, nil
	default:
		panic(fmt.Sprintf("expiry: Compute's function returned %v, which is none of Keep, Write, Update and Remove", op))
	}
	return nv, true, nil
}

// whyGone is the Reason of an entry a caller removes, frozen at deadline
// d: Deleted if it was live at now, Expired if only its timer had not
// run.
func (s *shard[K, V]) whyGone(d, now int64) Reason {
	if d > now {
		return Deleted
	}
	return Expired
}

// GetOrSet returns k's live value and true, as Get does; or, if k has none,
// stores v under k for ttl, as Set does, and returns v and false. Of
// concurrent GetOrSets of one absent key, exactly one stores its v, and the
// others return it. It returns an error wrapping ErrTTL if ttl is not
// positive, whether or not k has a value. When it would store v, it returns
// the errors Set returns. A hit costs what Get costs, takes no lock, and
// counts a hit (with [WithSliding], renews the entry); a miss counts a
// miss, then takes k's shard's lock and costs what Set costs. The
// complexity is O(1), plus O(log B) with a capacity when it opens or closes
// a bucket.
func (m *Map[K, V]) GetOrSet(k K, v V, ttl time.Duration) (V, bool, error) {
	m.init()
	if ttl <= 0 {
		var zero V
		return zero, false, fmt.Errorf("%w %v", ErrTTL, ttl)
	}
	m.checkNewKey("GetOrSet", k)
	if got, ok := m.get(k); ok {
		return got, true, nil
	}
	return m.setIfAbsent(k, v, ttl)
}

// SetIfAbsent stores v under k for ttl, as Set does, if k has no live
// entry, and reports whether it did; if k has one, it changes nothing
// and reports false. Of concurrent SetIfAbsents of one absent key,
// exactly one reports true. Its errors are GetOrSet's, with false. It
// takes k's shard's lock, and counts no hit or miss. The complexity is
// O(1), plus O(log B) with a capacity when it opens or closes a bucket.
func (m *Map[K, V]) SetIfAbsent(k K, v V, ttl time.Duration) (bool, error) {
	m.init()
	if ttl <= 0 {
		return false, fmt.Errorf("%w %v", ErrTTL, ttl)
	}
	m.checkNewKey("SetIfAbsent", k)
	_, loaded, err := m.setIfAbsent(k, v, ttl)
	return !loaded && err == nil, err
}

// setIfAbsent stores v under k for ttl if k has no live entry, under the
// lock, and returns v and false; or k's live value and true.
func (m *Map[K, V]) setIfAbsent(k K, v V, ttl time.Duration) (V, bool, error) {
	if err := m.w.Err(); err != nil {
		var zero V
		return zero, false, fmt.Errorf("%w: %w", ErrClosed, err)
	}
	if err := m.tooHeavy(k, v); err != nil {
		var zero V
		return zero, false, err
	}
	got, loaded := v, false
	var err error
	m.access(k, func(f found[K, V]) {
		switch {
		case f.s.closed:
			got, err = *new(V), ErrClosed
		case f.live:
			got, loaded = f.e.val, true
		default:
			f.s.setLocked(f.e, k, f.h, v, ttl, ticks.Add(f.now, int64(ttl)), f.now)
		}
	})
	return got, loaded, err
}

// GetAndDelete removes k's entry, as Delete does, and returns the value it
// had and true if it was live. It returns the zero V and false if k had no
// live entry; one past its deadline leaves with Reason Expired, as with
// Delete. It counts no hit or miss. The complexity is O(1), plus O(log B)
// with a capacity when it closes a bucket.
func (m *Map[K, V]) GetAndDelete(k K) (V, bool) {
	m.init()
	m.checkKey("GetAndDelete", k)
	return m.delete(k)
}

// delete removes k's entry and returns its value and true if it was live.
func (m *Map[K, V]) delete(k K) (v V, wasLive bool) {
	m.access(k, func(f found[K, V]) {
		if f.e != nil {
			why := f.s.whyGone(f.e.freeze(), f.now)
			if wasLive = why == Deleted; wasLive {
				v = f.e.val
			}
			f.s.removeLocked(f.e, f.h, why)
		}
	})
	return v, wasLive
}

// Update stores v under k, keeping the deadline and the ttl of k's live
// entry, and reports true. It stores nothing and reports false if k has
// no live entry, or if v is heavier than the map's maximum weight. The
// old value's callback says Replaced. It writes a value whose life was
// fixed when it was made (a token refreshed in place, a counter in a
// fixed window). Set, taking a ttl, cannot do that without a race. Update
// takes k's shard's lock, and allocates as Set does. The complexity is O(1).
func (m *Map[K, V]) Update(k K, v V) bool {
	m.init()
	m.checkKey("Update", k)
	if m.tooHeavy(k, v) != nil {
		return false
	}
	ok := false
	m.access(k, func(f found[K, V]) {
		if ok = f.live; ok {
			f.s.updateLocked(f.e, f.h, v, f.e.freeze(), f.now)
		}
	})
	return ok
}

// CompareAndSwap stores new under k, keeping the entry's deadline and ttl
// as Update does, if k's live value equals old, and reports whether it
// did. Values are compared as Go's == compares them. CompareAndSwap
// panics, naming the type, if old's cannot be compared (a slice, a map, a
// func, or an interface holding one), as sync.Map's does. It takes k's
// shard's lock. The complexity is O(1).
func (m *Map[K, V]) CompareAndSwap(k K, old, new V) bool {
	m.init()
	m.checkKey("CompareAndSwap", k)
	checkComparable("CompareAndSwap", old)
	if m.tooHeavy(k, new) != nil {
		return false
	}
	ok := false
	m.access(k, func(f found[K, V]) {
		if ok = f.live && equal(f.e.val, old); ok {
			f.s.updateLocked(f.e, f.h, new, f.e.freeze(), f.now)
		}
	})
	return ok
}

// CompareAndDelete removes k's entry, as Delete does, if its live value
// equals old, and reports whether it did. It compares, and panics, as
// CompareAndSwap does. It takes k's shard's lock. The complexity is
// O(1), plus O(log B) with a capacity when it closes a bucket.
func (m *Map[K, V]) CompareAndDelete(k K, old V) bool {
	m.init()
	m.checkKey("CompareAndDelete", k)
	checkComparable("CompareAndDelete", old)
	ok := false
	m.access(k, func(f found[K, V]) {
		if ok = f.live && equal(f.e.val, old); ok {
			f.s.removeLocked(f.e, f.h, f.s.whyGone(f.e.freeze(), f.now))
		}
	})
	return ok
}

// checkComparable panics, naming op and the type, if v cannot be compared
// with ==.
func checkComparable[V any](op string, v V) {
	t := reflect.TypeFor[V]()
	if !t.Comparable() {
		panic(fmt.Sprintf("expiry: %s called on a Map whose values, of type %v, are not comparable", op, t))
	}
	if keyKindOf(t) == anyKeys { // it holds an interface, which may hold a slice
		if rv := reflect.ValueOf(any(v)); rv.IsValid() && !rv.Comparable() {
			panic(fmt.Sprintf("expiry: %s called with a value holding an incomparable type: %#v", op, v))
		}
	}
}

// equal reports whether a == b; the caller has checked that b is
// comparable, which makes the comparison safe whatever a holds (two
// interfaces of different dynamic types are unequal without panicking).
func equal[V any](a, b V) bool { return any(a) == any(b) }
