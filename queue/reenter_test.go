package queue_test

import (
	"testing"

	"pgregory.net/rapid"

	"github.com/timewheel/timewheel/queue"
)

// reenterModel is TestFireMayReenterAnywhere's oracle: two wheels, and
// for each entry the wheel it is pending in (-1 if none) and its
// deadline there.
type reenterModel struct {
	ws    [2]*queue.Wheel
	es    []*queue.Entry
	in    []int
	when  []int64
	index map[*queue.Entry]int
}

// check fails t if an entry is Stray or its Pending or When disagrees
// with the model; with links set (outside Expire), also if an entry not
// pending holds a link.
func (m *reenterModel) check(t *rapid.T, where string, links bool) {
	for i, e := range m.es {
		if e.Stray() {
			t.Fatalf("%s: entry %d is Stray", where, i)
		}
		if e.Pending() != (m.in[i] >= 0) || m.in[i] >= 0 && e.When() != m.when[i] {
			t.Fatalf("%s: entry %d: Pending %v, When %d; want deadline %d in wheel %d", where, i, e.Pending(), e.When(), m.when[i], m.in[i])
		}
		if prev, next := e.Links(); links && m.in[i] < 0 && (prev != nil || next != nil) {
			t.Fatalf("%s: entry %d is not pending and holds links", where, i)
		}
	}
}

// op draws one operation on one entry, in the wheel it is pending in or
// either if none, runs it and checks its result.
func (m *reenterModel) op(t *rapid.T) {
	i := rapid.IntRange(0, len(m.es)-1).Draw(t, "entry")
	wi := m.in[i]
	if wi < 0 {
		wi = rapid.IntRange(0, 1).Draw(t, "wheel")
	}
	w, e := m.ws[wi], m.es[i]
	now := w.Now()
	when := now + rapid.Int64Range(-2, 70).Draw(t, "ahead") // due now, this slot's level, or the next
	pending := m.in[i] >= 0
	switch rapid.IntRange(0, 3).Draw(t, "op") {
	case 0:
		if got := w.Cancel(e); got != pending {
			t.Fatalf("Cancel(%d) = %v, pending %v", i, got, pending)
		}
		m.in[i] = -1
	case 1:
		if got := w.Reschedule(e, when); got != pending {
			t.Fatalf("Reschedule(%d) = %v, pending %v", i, got, pending)
		}
		m.in[i], m.when[i] = wi, max(when, now)
	case 2:
		if !pending {
			w.Insert(e, when)
			m.in[i], m.when[i] = wi, max(when, now)
		}
	case 3:
		if ok := e.Postpone(when); ok != (pending && when >= m.when[i]) {
			t.Fatalf("Postpone(%d, %d) = %v, pending %v with deadline %d", i, when, ok, pending, m.when[i])
		} else if ok {
			m.when[i] = when
		}
	}
}

// fire is the callback of wheel wi's Expire: it checks that e was pending
// there and due, then changes any entries in either wheel, those due in
// the same call included.
func (m *reenterModel) fire(t *rapid.T, wi int, e *queue.Entry) {
	i := m.index[e]
	if now := m.ws[wi].Now(); m.in[i] != wi || m.when[i] > now {
		t.Fatalf("entry %d fired by wheel %d at tick %d, pending in wheel %d with deadline %d", i, wi, now, m.in[i], m.when[i])
	}
	m.in[i] = -1
	m.check(t, "in fire", false)
	for range rapid.IntRange(0, 3).Draw(t, "ops in fire") {
		m.op(t)
	}
	if rapid.IntRange(0, 9).Draw(t, "verify in fire") == 0 {
		for _, w := range m.ws {
			if err := w.Verify(); err != nil {
				t.Fatalf("in fire: %v", err)
			}
		}
	}
	m.check(t, "after ops in fire", false)
}

// TestFireMayReenterAnywhere: an Expire callback that cancels,
// reschedules, inserts and postpones any entries, those about to fire in
// the same call included, and moves entries that fired to another wheel:
// every entry fires once per schedule, in the wheel it was pending in,
// never early, a cancelled one never; Stray is false for every entry
// throughout, an entry not pending holds no links once Expire returns,
// and Verify passes.
func TestFireMayReenterAnywhere(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		m := &reenterModel{ws: [2]*queue.Wheel{queue.NewWheel(), queue.NewWheel()}, index: map[*queue.Entry]int{}}
		for i := range 16 {
			e := new(queue.Entry)
			m.es, m.in, m.when = append(m.es, e), append(m.in, -1), append(m.when, 0)
			m.index[e] = i
		}
		verify := func(where string) {
			for _, w := range m.ws {
				if err := w.Verify(); err != nil {
					t.Fatalf("%s: %v", where, err)
				}
			}
			m.check(t, where, true)
		}
		for range rapid.IntRange(1, 40).Draw(t, "steps") {
			if rapid.Bool().Draw(t, "expire") {
				wi := rapid.IntRange(0, 1).Draw(t, "expire wheel")
				w := m.ws[wi]
				w.Expire(w.Now()+rapid.Int64Range(0, 130).Draw(t, "advance"), func(e *queue.Entry) { m.fire(t, wi, e) })
			} else {
				m.op(t)
			}
			verify("between steps")
		}
		// Drain: every entry still pending fires, once.
		for wi, w := range m.ws {
			for round := 0; w.Len() > 0; round++ {
				if round == 100 {
					t.Fatalf("wheel %d: %d entries still pending after 100 rounds of 64 ticks", wi, w.Len())
				}
				w.Expire(w.Now()+64, func(e *queue.Entry) {
					i := m.index[e]
					if m.in[i] != wi || m.when[i] > w.Now() {
						t.Fatalf("entry %d fired by wheel %d at tick %d, pending in wheel %d with deadline %d", i, wi, w.Now(), m.in[i], m.when[i])
					}
					m.in[i] = -1
				})
			}
		}
		verify("drained")
	})
}
