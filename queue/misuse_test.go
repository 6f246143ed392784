package queue_test

import (
	"testing"

	"github.com/timewheel/timewheel/queue"
)

// recovered runs f and returns what it panicked with, or nil.
func recovered(f func()) (r any) {
	defer func() { r = recover() }()
	f()
	return nil
}

// copyOf returns a copy of *p, the mistake go vet reports where it sees
// the type; here it cannot.
func copyOf[T any](p *T) *T {
	c := new(T)
	*c = *p
	return c
}

// TestMisuse: nil arguments, entries copied while pending and timers of
// another queue panic naming the package and the mistake, where they used
// to dereference nil or unlink the original (a wrong Len ever after).
func TestMisuse(t *testing.T) {
	for _, c := range []struct {
		name string
		want string
		call func()
	}{
		{"Insert nil", "timewheel/queue: Insert of a nil *Entry", func() { queue.NewWheel().Insert(nil, 1) }},
		{"Cancel nil", "timewheel/queue: Cancel of a nil *Entry", func() { queue.NewWheel().Cancel(nil) }},
		{"Reschedule nil", "timewheel/queue: Reschedule of a nil *Entry", func() { queue.NewWheel().Reschedule(nil, 1) }},
		{"Expire nil", "timewheel/queue: Expire with a nil fire func", func() { queue.NewWheel().Expire(1, nil) }},
		{"Cancel of a copy", "timewheel/queue: an Entry copied while pending was passed to the wheel; pass the original (go vet reports the copy)", func() {
			w := queue.NewWheel()
			e := w.Schedule(5)
			w.Schedule(5)
			c := copyOf(e)
			defer func() {
				if w.Len() != 2 || w.Verify() != nil {
					t.Errorf("after the copy was refused: Len %d, Verify %v", w.Len(), w.Verify())
				}
			}()
			w.Cancel(c)
		}},
		{"Reschedule of a copy", "timewheel/queue: an Entry copied while pending was passed to the wheel; pass the original (go vet reports the copy)", func() {
			w := queue.NewWheel()
			e := w.Schedule(5)
			c := copyOf(e)
			w.Reschedule(c, 9)
		}},
		{"Cancel foreign", "timewheel/queue: Cancel of an Entry pending in another Wheel (due at tick 5); each entry belongs to the wheel it was inserted into", func() {
			a, b := queue.NewWheel(), queue.NewWheel()
			b.Schedule(5)
			e := b.Schedule(5)
			defer func() {
				if a.Len() != 0 || b.Len() != 2 || a.Verify() != nil || b.Verify() != nil {
					t.Errorf("after the foreign entry was refused: Len %d and %d, Verify %v and %v", a.Len(), b.Len(), a.Verify(), b.Verify())
				}
			}()
			a.Cancel(e)
		}},
		{"Reschedule foreign", "timewheel/queue: Reschedule of an Entry pending in another Wheel (due at tick 300); each entry belongs to the wheel it was inserted into", func() {
			a, b := queue.NewWheel(), queue.NewWheel()
			a.Schedule(300)
			a.Schedule(7)
			e := b.Schedule(300) // alone in its slot of b; a's slot for tick 300 has an entry of its own
			b.Schedule(9)
			defer func() {
				if a.Len() != 2 || b.Len() != 2 || a.Verify() != nil || b.Verify() != nil {
					t.Errorf("after the foreign entry was refused: Len %d and %d, Verify %v and %v", a.Len(), b.Len(), a.Verify(), b.Verify())
				}
			}()
			a.Reschedule(e, 9)
		}},
		{"Reference.Cancel nil", "timewheel/queue: Reference.Cancel of a nil *RefTimer", func() { queue.NewReference().Cancel(nil) }},
		{"Reference.Cancel foreign", "timewheel/queue: Reference.Cancel of a timer pending in another Reference (at tick 7)", func() {
			a, b := queue.NewReference(), queue.NewReference()
			b.Schedule(1)
			b.Schedule(2)
			a.Cancel(b.Schedule(7))
		}},
		{"Reference.Reschedule nil", "timewheel/queue: Reference.Reschedule of a nil *RefTimer", func() { queue.NewReference().Reschedule(nil, 1) }},
		{"Reference.Reschedule foreign", "timewheel/queue: Reference.Reschedule of a timer pending in another Reference (at tick 7)", func() {
			a, b := queue.NewReference(), queue.NewReference()
			b.Schedule(1)
			a.Reschedule(b.Schedule(7), 3)
		}},
		{"Reference.Expire nil", "timewheel/queue: Reference.Expire with a nil fire func", func() { queue.NewReference().Expire(1, nil) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := recovered(c.call); got != c.want {
				t.Fatalf("panic %v; want %q", got, c.want)
			}
		})
	}
}

// TestZeroValues: a zero Wheel and a zero Reference are empty queues, and
// a zero Entry or RefTimer is a timer that is not pending.
func TestZeroValues(t *testing.T) {
	var w queue.Wheel
	if _, ok := w.Next(); ok || w.Len() != 0 || w.Verify() != nil {
		t.Fatal("a zero Wheel is not empty")
	}
	if ahead, ok := w.Ahead(); ok {
		t.Fatalf("a zero Wheel has work ahead at %d", ahead)
	}
	var e queue.Entry
	if e.Pending() || e.Stray() || w.Cancel(&e) {
		t.Fatal("a zero Entry is pending")
	}
	w.Insert(&e, 3)
	if n := w.Expire(3, func(*queue.Entry) {}); n != 1 {
		t.Fatalf("a zero Wheel fired %d of 1", n)
	}
	var r queue.Reference
	var rt queue.RefTimer
	if r.Cancel(&rt) {
		t.Fatal("a zero RefTimer is pending")
	}
	r.Schedule(2)
	if n := r.Expire(2, func(*queue.RefTimer) {}); n != 1 || r.Len() != 0 {
		t.Fatalf("a zero Reference fired %d of 1", n)
	}
}
