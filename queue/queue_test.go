package queue_test

import (
	"testing"

	"pgregory.net/rapid"

	"github.com/timewheel/timewheel/queue"
	"github.com/timewheel/timewheel/queue/queuetest"
)

func newWheel() queue.Queue[*queue.Entry]        { return queue.NewWheel() }
func newReference() queue.Queue[*queue.RefTimer] { return queue.NewReference() }

func TestConformance(t *testing.T) {
	t.Run("engine=wheel", func(t *testing.T) { queuetest.Run(t, newWheel, queuetest.Options{}) })
	t.Run("engine=reference", func(t *testing.T) { queuetest.Run(t, newReference, queuetest.Options{}) })
}

func TestWheelAgainstReference(t *testing.T) {
	rapid.Check(t, queuetest.Property(newWheel, queuetest.Options{}))
}

func FuzzWheel(f *testing.F) {
	f.Add([]byte{0, 1, 5, 5, 0, 2, 9, 9, 3, 1, 0, 40, 1, 0, 0, 1, 3, 6, 255, 255})
	f.Add([]byte{0, 7, 0, 0, 0, 6, 1, 2, 2, 3, 4, 5, 3, 6, 255, 255, 3, 7, 0, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		queuetest.Check(t, newWheel, queuetest.Options{}, queuetest.OpsFromBytes(data))
	})
}

// TestWheelFireMayReenter checks that fire can schedule, cancel and
// reschedule timers, including those Expire is about to fire.
func TestWheelFireMayReenter(t *testing.T) {
	w := queue.NewWheel()
	a := w.Schedule(10)
	b := w.Schedule(10)
	c := w.Schedule(10)
	var order []string
	var later *queue.Entry
	w.Expire(10, func(e *queue.Entry) {
		switch e {
		case a:
			order = append(order, "a")
			if !w.Cancel(b) {
				t.Error("Cancel(b) inside fire = false, want true")
			}
			later = w.Schedule(12)
			w.Reschedule(a, 11)
		case c:
			order = append(order, "c")
		default:
			t.Errorf("fired an unexpected entry due at %d", e.When())
		}
		if err := w.Verify(); err != nil {
			t.Fatal(err)
		}
	})
	if got := len(order); got != 2 || order[0] != "a" || order[1] != "c" {
		t.Fatalf("fired %v, want [a c]", order)
	}
	if n := w.Expire(12, func(*queue.Entry) {}); n != 2 || later.Pending() || a.Pending() {
		t.Fatalf("second Expire fired %d, want a and the new timer", n)
	}
}

// TestWheelNextNeverAtACascade checks that Next reports a deadline, not the
// start of a coarse slot: a driver sleeping until Next never wakes with
// nothing due.
func TestWheelNextNeverAtACascade(t *testing.T) {
	w := queue.NewWheel()
	w.Schedule(5000) // level 2 holds 4096..262143
	w.Schedule(4200)
	for {
		next, ok := w.Next()
		if !ok {
			break
		}
		if n := w.Expire(next, func(*queue.Entry) {}); n == 0 {
			t.Fatalf("woke at Next() = %d and nothing was due", next)
		}
	}
}
