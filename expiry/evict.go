package expiry

// event is one eviction callback waiting to be delivered.
type event[K comparable, V any] struct {
	key K
	val V
	why Reason
}

// queueLocked queues the callback for an entry that left, if there is a
// callback.
func (m *Map[K, V]) queueLocked(k K, v V, why Reason) {
	if m.onEvict != nil {
		m.events = append(m.events, event[K, V]{k, v, why})
	}
}

// kickLocked reports whether the caller must start delivery after
// unlocking: there are events and nobody is delivering them. It marks
// delivery as started, so exactly one goroutine delivers at a time and
// callbacks run in the order they were queued.
func (m *Map[K, V]) kickLocked() bool {
	if m.delivering || len(m.events) == 0 {
		return false
	}
	m.delivering = true
	return true
}

// deliver starts delivery if kick is set: inline, or on a new goroutine
// that exits when the queue is empty. It is called without m.mu.
func (m *Map[K, V]) deliver(kick bool) {
	switch {
	case !kick:
	case m.inline:
		m.deliverAll()
	default:
		go m.deliverAll()
	}
}

// deliverAll runs queued callbacks, batch by batch, until none is left.
func (m *Map[K, V]) deliverAll() {
	var batch []event[K, V]
	for {
		m.mu.Lock()
		clear(batch)
		batch, m.events = m.events, batch[:0]
		if len(batch) == 0 {
			m.delivering = false
			m.idle.Broadcast()
			m.mu.Unlock()
			return
		}
		m.mu.Unlock()
		for _, ev := range batch {
			m.call(ev)
		}
	}
}

// call runs one callback, recovering a panic for the panic handler.
func (m *Map[K, V]) call(ev event[K, V]) {
	defer func() {
		if r := recover(); r != nil {
			m.panicHandler(r)
		}
	}()
	m.onEvict(ev.key, ev.val, ev.why)
}
