package expiry

import (
	"reflect"
	"slices"

	"github.com/timewheel/timewheel/internal/lockcheck"
	"github.com/timewheel/timewheel/internal/stack"
)

// event is one callback waiting to be delivered: an eviction, with its
// Reason, or an insert or an update, with why inserted or updated.
type event[K comparable, V any] struct {
	key K
	val V // the value that left; the new value of an insert or update
	old V // the value an update replaced
	why Reason
}

// inserted and updated are the whys of the events of WithOnInsert and
// WithOnUpdate: never a Reason an entry leaves for.
const (
	inserted Reason = 0x40 + iota
	updated
)

// queueChangeLocked queues the callback of an insert (why inserted) or
// an update (why updated, old set) of k to v, as queueLocked does.
func (s *shard[K, V]) queueChangeLocked(why Reason, k K, old, v V) {
	lockcheck.WriteHeld(&s.mu, "shard.queueChangeLocked")
	m := s.m
	m.evMu.Lock()
	m.events = append(m.events, event[K, V]{key: k, val: v, old: old, why: why})
	m.evMu.Unlock()
	m.backlog.Add(1)
	s.queued = true
}

// queueLocked counts an entry that left s, and queues its callback, if
// there is a callback, behind those of every shard: under s.mu, so that
// callbacks come in the order the entries left.
func (s *shard[K, V]) queueLocked(k K, v V, why Reason) {
	lockcheck.WriteHeld(&s.mu, "shard.queueLocked")
	s.left[why]++
	m := s.m
	if m.onEvict != nil {
		m.evMu.Lock()
		m.events = append(m.events, event[K, V]{key: k, val: v, why: why})
		m.evMu.Unlock()
		m.backlog.Add(1)
		s.queued = true
	}
}

// kickLocked reports whether the caller must start delivery: there are
// events and nobody is delivering them. It marks delivery as started, so
// exactly one goroutine delivers at a time and callbacks run in the order
// they were queued. It is called with m.evMu held.
func (m *Map[K, V]) kickLocked() bool {
	lockcheck.Held(&m.evMu, "Map.kickLocked")
	if m.delivering || len(m.events) == 0 {
		return false
	}
	m.delivering = true
	return true
}

// deliver starts delivery, if kick is set (a callback was queued) and no
// goroutine is delivering: inline, or on a new goroutine that exits when
// the queue is empty. It is called without a shard's lock.
func (m *Map[K, V]) deliver(kick bool) {
	if !kick {
		return
	}
	m.evMu.Lock()
	kick = m.kickLocked()
	m.evMu.Unlock()
	switch {
	case !kick:
	case m.inline:
		m.deliverAll()
	default:
		go m.deliverAll()
	}
}

// deliverAll runs queued callbacks, batch by batch, until none is left.
// If a panic handler panics (or a callback calls runtime.Goexit), the
// panic goes on to deliverAll's caller, but delivery is handed back
// first. The callbacks not yet run go back to the front of the queue, and
// delivering is cleared. The next eviction delivers them, and Flush
// and Close do not wait for ever.
func (m *Map[K, V]) deliverAll() {
	var batch []event[K, V]
	next := 0 // batch[next:] have not been run
	done := false
	defer func() {
		if !done {
			m.abandon(batch[next:])
		}
	}()
	for {
		m.evMu.Lock()
		clear(batch)
		batch, m.events = m.events, batch[:0]
		next = 0
		if len(batch) == 0 {
			m.delivering = false
			m.idle.Broadcast()
			m.evMu.Unlock()
			done = true
			return
		}
		m.evMu.Unlock()
		for next < len(batch) {
			next++
			m.backlog.Add(-1)
			m.call(batch[next-1])
		}
	}
}

// abandon ends a delivery that a panic cuts short: rest, the callbacks of
// its batch not yet run, are queued again ahead of the others. Without
// WithInlineCallbacks a new delivery goroutine takes them over; inline,
// they wait for the next goroutine that makes an entry leave.
func (m *Map[K, V]) abandon(rest []event[K, V]) {
	m.evMu.Lock()
	if len(rest) > 0 {
		m.events = slices.Concat(rest, m.events)
	}
	m.delivering = false
	kick := !m.inline && len(m.events) > 0
	m.idle.Broadcast() // waiters look again; delivering may stay false
	m.evMu.Unlock()
	m.deliver(kick)
}

// call runs one callback, recovering a panic for the panic handler.
func (m *Map[K, V]) call(ev event[K, V]) {
	defer func() {
		if r := recover(); r != nil {
			m.panicHandler(r)
		}
	}()
	switch ev.why {
	case inserted:
		m.onInsert(ev.key, ev.val)
	case updated:
		m.onUpdate(ev.key, ev.old, ev.val)
	default:
		m.onEvict(ev.key, ev.val, ev.why)
	}
}

// callFrame is the name of call's frame, and the prefix of its deferred
// function's, as runtime.Frame reports them: one name for every K and V.
var callFrame = reflect.TypeFor[Reason]().PkgPath() + ".(*Map[...]).call"

// inCallback reports whether the caller runs inside an eviction callback
// or a panic handler, of any Map: whether call is on its goroutine's
// stack. There is no goroutine identity to tell one Map's delivery from
// another's, so Close and Flush treat every callback alike, which at
// least makes the outcome the same each time. The complexity is O(depth
// of the stack); Close and Flush alone pay it.
func inCallback() bool { return stack.Has(callFrame) }
