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

// TestWheelNextWakeIsCheap fills one coarse slot and cancels its earliest
// timer again and again: NextWake must stay a lower bound of Next, exact
// or the slot's start, and Expire at that start must make it exact again.
func TestWheelNextWakeIsCheap(t *testing.T) {
	w := queue.NewWheel()
	var entries []*queue.Entry
	for i := range 1000 {
		entries = append(entries, w.Schedule(int64(300_000+i))) // level 3
	}
	for i := range 500 {
		w.Cancel(entries[i])
		wake, _ := w.NextWake()
		next, _ := w.Next()
		if wake > next {
			t.Fatalf("NextWake %d after Next %d", wake, next)
		}
		if err := w.Verify(); err != nil {
			t.Fatal(err)
		}
	}
	w2 := queue.NewWheel()
	entries = entries[:0]
	for i := range 1000 {
		entries = append(entries, w2.Schedule(int64(300_000+i)))
	}
	w2.Next() // remember the earliest
	w2.Cancel(entries[0])
	wake, _ := w2.NextWake()
	if wake != 262_144 { // the level-3 slot's start: 64^3
		t.Fatalf("NextWake = %d after the remembered earliest left a big slot, want the slot start 262144", wake)
	}
	// Each wake moves the timers down a level, until the deadline is exact:
	// at most one wake per level with nothing due.
	for range 3 {
		if n := w2.Expire(wake, func(*queue.Entry) {}); n != 0 {
			t.Fatalf("Expire at the slot start %d fired %d", wake, n)
		}
		if wake, _ = w2.NextWake(); wake == 300_001 {
			return
		}
	}
	t.Fatalf("NextWake = %d after three cascades, want 300001", wake)
}

// TestCancelledBurstKeepsNoHints cascades a burst into one level-0 slot,
// which keeps hints to warm it before it fires, and cancels the whole
// burst: the hints must go with it, or they would pin the cancelled
// entries and grow with every such burst. Verify checks it.
func TestCancelledBurstKeepsNoHints(t *testing.T) {
	w := queue.NewWheel()
	for round := range 3 {
		base := int64(round+1) * 4096
		entries := make([]*queue.Entry, 1000)
		for i := range entries {
			entries[i] = w.Schedule(base + 100) // level 1 from here
		}
		w.Expire(base+64, func(*queue.Entry) { t.Fatal("fired early") }) // cascades them to level 0
		for _, e := range entries {
			w.Cancel(e)
		}
		if err := w.Verify(); err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
	}
}
