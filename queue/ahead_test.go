package queue_test

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"pgregory.net/rapid"

	"github.com/timewheel/timewheel/queue"
	"github.com/timewheel/timewheel/queue/queuetest"
)

// burstBases are ticks around the boundaries that decide where a burst's
// timers sit and when they are moved ahead: level 1 (64), level 2 (4096)
// and level 3 (262144), and between.
var burstBases = []int64{3, 50, 64, 100, 4000, 4096, 5000, 8190, 9000, 12288, 262100, 262144, 300000}

// aheadOps draws operations that pile timers into one to three bursts,
// each due within a few ticks of a base, with cancels, reschedules and
// expires of mixed steps between: what makes a wheel move slots ahead of
// time, and then reach them, in every order.
func aheadOps(t *rapid.T) []queuetest.Op {
	bases := rapid.SliceOfN(rapid.SampledFrom(burstBases), 1, 3).Draw(t, "bases")
	width := rapid.SampledFrom([]int64{1, 3, 70, 200}).Draw(t, "width")
	steps := []int64{0, 1, 2, 5, 17, 63, 64, 500, 4096, 10_000, 300_000}
	var ops []queuetest.Op
	now := int64(0)
	target := func() int64 {
		return rapid.SampledFrom(bases).Draw(t, "base") + rapid.Int64Range(0, width-1).Draw(t, "jitter") - now
	}
	for range rapid.IntRange(1, 300).Draw(t, "n") {
		switch kind := rapid.IntRange(0, 9).Draw(t, "kind"); {
		case kind < 5:
			ops = append(ops, queuetest.Op{Kind: queuetest.OpSchedule, Arg: target()})
		case kind == 5:
			ops = append(ops, queuetest.Op{Kind: queuetest.OpCancel, Pick: rapid.IntRange(0, 1<<20).Draw(t, "pick")})
		case kind == 6:
			ops = append(ops, queuetest.Op{Kind: queuetest.OpReschedule, Arg: target(), Pick: rapid.IntRange(0, 1<<20).Draw(t, "pick")})
		default:
			step := rapid.SampledFrom(steps).Draw(t, "step")
			ops = append(ops, queuetest.Op{Kind: queuetest.OpExpire, Arg: step})
			now += step
		}
	}
	return ops
}

// aheadWheel draws a wheel that moves slots ahead after one to four
// timers, one to 64 at a time, so that few timers reach every path.
func aheadWheel(t *rapid.T) func() queue.Queue[*queue.Entry] {
	big := rapid.SampledFrom([]int32{1, 2, 4}).Draw(t, "big")
	slice := rapid.SampledFrom([]int{1, 3, 64}).Draw(t, "slice")
	return func() queue.Queue[*queue.Entry] { return queue.NewWheelAhead(big, slice) }
}

// TestAheadAgainstReference holds a wheel that moves slots ahead of time
// against the reference queue, with Verify after every operation: bursts
// moved ahead in slices, interleaved with schedules, cancels and
// reschedules into the slots being moved and the chunks they fill, and
// expires that reach them part way: nothing early, late, lost or doubled,
// the same order and the same Next.
func TestAheadAgainstReference(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		queuetest.Check(t, aheadWheel(t), queuetest.Options{}, aheadOps(t))
	})
}

// TestAheadRandomOps runs the conformance suite's random operations (all
// scales, the whole int64 range) on wheels that move every slot ahead.
func TestAheadRandomOps(t *testing.T) {
	for _, big := range []int32{1, 3} {
		t.Run(fmt.Sprintf("big=%d", big), func(t *testing.T) {
			newQueue := func() queue.Queue[*queue.Entry] { return queue.NewWheelAhead(big, 2) }
			queuetest.Run(t, newQueue, queuetest.Options{})
			rapid.Check(t, queuetest.Property(newQueue, queuetest.Options{}))
		})
	}
}

func FuzzWheelAhead(f *testing.F) {
	f.Add([]byte{0, 3, 5, 5, 0, 3, 5, 6, 3, 2, 0, 40, 3, 2, 1, 0, 1, 3, 6, 255})
	f.Add([]byte{0, 2, 0, 9, 0, 2, 0, 9, 3, 2, 0, 2, 2, 2, 0, 9, 3, 3, 7, 7})
	f.Fuzz(func(t *testing.T, data []byte) {
		newQueue := func() queue.Queue[*queue.Entry] { return queue.NewWheelAhead(1, 2) }
		queuetest.Check(t, newQueue, queuetest.Options{}, queuetest.OpsFromBytes(data))
	})
}

// TestBurstFiresInStartOrder drives a default wheel as the scheduler
// does, waking at NextWake, through bursts of 5,000 timers due within a
// few ticks, started 100, 5,000 and 300,000 ticks ahead (with a 1 ms
// tick: 0.1 s, 5 s, 5 min), each placed astride the boundaries that
// matter. Every timer must fire at its tick, timers of one tick in the
// order they were started, and the slots must have been moved ahead of
// time: the wakes before the burst that fire nothing are few, bounded by
// the slices the work takes, and none falls inside the burst.
func TestBurstFiresInStartOrder(t *testing.T) {
	const n, window = 5000, 7
	for _, c := range []struct {
		base, lead int64
	}{
		{0, 100}, {4000, 100}, {0, 5000}, {4096 - 2500, 5000}, {8192 - 4, 5000}, {0, 300_000}, {262144 - 3 - 300_000 + 1<<20, 300_000},
	} {
		t.Run(fmt.Sprintf("base=%d/lead=%d", c.base, c.lead), func(t *testing.T) {
			w := queue.NewWheel()
			w.Expire(c.base, func(*queue.Entry) {})
			start := c.base + c.lead
			entries := make([]*queue.Entry, n)
			index := make(map[*queue.Entry]int, n)
			wake := int64(1 << 62)
			for i := range entries {
				entries[i] = w.Schedule(start + int64(i*3)%window)
				index[entries[i]] = i
				wake = min(wake, entries[i].When())
				if ahead, ok := w.Ahead(); ok {
					wake = min(wake, ahead)
				}
			}
			var fired []int
			early := 0
			for next, ok := wake, true; ok; next, ok = w.NextWake() {
				got := w.Expire(next, func(e *queue.Entry) {
					i := index[e]
					if due := start + int64(i*3)%window; due != next {
						t.Fatalf("entry %d due at %d fired at %d", i, due, next)
					}
					fired = append(fired, i)
				})
				if err := w.Verify(); err != nil {
					t.Fatal(err)
				}
				if got == 0 {
					if next >= start {
						t.Fatalf("woke at %d, inside the burst, and fired nothing", next)
					}
					early++
				}
			}
			if len(fired) != n {
				t.Fatalf("fired %d of %d", len(fired), n)
			}
			if !slices.IsSortedFunc(fired, func(a, b int) int {
				if da, db := start+int64(a*3)%window, start+int64(b*3)%window; da != db {
					return int(da - db)
				}
				return a - b
			}) {
				t.Fatal("fired out of (deadline, start) order")
			}
			// The work ahead: a slice per wake (n/4096 rounded up), plus
			// a wake to reach a level-3 slot; more would be wakes for
			// nothing.
			if limit := n/4096 + 3; early > limit {
				t.Fatalf("%d wakes with nothing due, want at most %d", early, limit)
			}
		})
	}
}

// TestSmallSlotsAreNotMovedAhead: slots of fewer timers than it takes to
// be moved ahead cost no wake: a default wheel reports no work ahead, and
// wakes at the very ticks a wheel that never moves anything ahead does.
func TestSmallSlotsAreNotMovedAhead(t *testing.T) {
	w, never := queue.NewWheel(), queue.NewWheelAhead(1<<30, 1)
	for _, q := range []*queue.Wheel{w, never} {
		for i := range 1000 {
			q.Schedule(int64(5000 + i%7)) // level 2, one slot: below the bar
			q.Schedule(int64(100 + i%7))  // level 1
			q.Schedule(int64(300_000 + i%7))
		}
	}
	if ahead, ok := w.Ahead(); ok {
		t.Fatalf("Ahead = %d with no slot big enough", ahead)
	}
	for next, ok := w.NextWake(); ok; next, ok = w.NextWake() {
		if want, _ := never.NextWake(); next != want {
			t.Fatalf("NextWake = %d, and %d on a wheel that moves nothing ahead", next, want)
		}
		w.Expire(next, func(*queue.Entry) {})
		never.Expire(next, func(*queue.Entry) {})
	}
}

// TestCancelledChunksGo cancels a burst after it was moved ahead, in
// part and then all of it: the chunks and their hints must go with it
// (Verify checks), and the slot must be empty again.
func TestCancelledChunksGo(t *testing.T) {
	w := queue.NewWheelAhead(4, 1000)
	for round := range 3 {
		base := int64(round+1) * 1 << 14
		entries := make([]*queue.Entry, 2000)
		for i := range entries {
			entries[i] = w.Schedule(base + 5000 + int64(i%300)) // level 2 from here
		}
		w.Expire(base+4096, func(*queue.Entry) { t.Fatal("fired early") }) // the slot is now the next at level 2
		for range 3 {
			w.Expire(w.Now()+1, func(*queue.Entry) { t.Fatal("fired early") })
		}
		for i, e := range entries {
			if i%2 == 0 {
				w.Cancel(e)
			}
		}
		if err := w.Verify(); err != nil {
			t.Fatalf("round %d, half cancelled: %v", round, err)
		}
		for _, e := range entries {
			w.Cancel(e)
		}
		if err := w.Verify(); err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		if next, ok := w.Next(); ok {
			t.Fatalf("round %d: Next = %d after cancelling everything", round, next)
		}
	}
}

// TestAheadMovesPostponedEntries: entries of a slot being moved ahead
// that Postpone moved within the slot go to the chunk of their new tick;
// those it moved past the slot are filed again where they belong. Each
// fires at its new deadline, once.
func TestAheadMovesPostponedEntries(t *testing.T) {
	w := queue.NewWheelAhead(2, 100)
	a, b, c := w.Schedule(100), w.Schedule(100), w.Schedule(100) // level 1, slot 64..127
	if ahead, ok := w.Ahead(); !ok || ahead != 1 {
		t.Fatalf("Ahead = %d, %v; want 1, true", ahead, ok)
	}
	b.Postpone(5000) // past the slot, to level 2
	c.Postpone(120)  // within it
	w.Expire(1, func(*queue.Entry) { t.Fatal("fired early") })
	if err := w.Verify(); err != nil {
		t.Fatal(err)
	}
	for _, step := range []struct {
		next int64
		want *queue.Entry
	}{{100, a}, {120, c}, {5000, b}} {
		if next, _ := w.Next(); next != step.next {
			t.Fatalf("Next = %d, want %d", next, step.next)
		}
		var fired []*queue.Entry
		w.Expire(step.next, func(e *queue.Entry) { fired = append(fired, e) })
		if len(fired) != 1 || fired[0] != step.want {
			t.Fatalf("Expire(%d) fired %d entries, want the one due then", step.next, len(fired))
		}
		if err := w.Verify(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestAheadNextWhileMoving: while a big slot is part moved (chunks
// filled, entries left in its list), Next stays exact and NextWake a
// lower bound of it: the next slice, or the slot's start when the list
// left is too long to walk in O(1).
func TestAheadNextWhileMoving(t *testing.T) {
	w := queue.NewWheelAhead(2, 3)
	for i := range 100 {
		w.Schedule(int64(5009 - i%10)) // level 2, the next slot: moved at once
	}
	for now := int64(1); now < 40; now++ {
		w.Expire(now, func(*queue.Entry) { t.Fatal("fired early") })
		if err := w.Verify(); err != nil {
			t.Fatal(err)
		}
		next, _ := w.Next()
		wake, _ := w.NextWake()
		if next != 5000 || wake > next || wake <= now {
			t.Fatalf("at %d: Next = %d, NextWake = %d; want 5000 and a tick in (%d, 5000]", now, next, wake, now)
		}
	}
}

// TestAheadAtTheEndOfTime moves the last level-1 and level-2 slots of the
// int64 range ahead, whose ends are past math.MaxInt64: the work ends
// after a few wakes, and every timer fires at its tick.
func TestAheadAtTheEndOfTime(t *testing.T) {
	for _, from := range []int64{math.MaxInt64 - 8000, math.MaxInt64 - 100} {
		w := queue.NewWheelAhead(1, 3)
		w.Expire(from, func(*queue.Entry) {})
		whens := []int64{math.MaxInt64 - 90, math.MaxInt64 - 3, math.MaxInt64, math.MaxInt64}
		for _, when := range whens {
			w.Schedule(when)
		}
		fired, empty := 0, 0
		for next, ok := w.NextWake(); ok; next, ok = w.NextWake() {
			if w.Expire(next, func(e *queue.Entry) {
				if want := whens[fired]; next != want {
					t.Fatalf("from %d: timer %d due at %d fired at %d", from, fired, want, next)
				}
				fired++
			}) == 0 {
				if empty++; empty > 4 {
					t.Fatalf("from %d: woke %d times with nothing due; the work ahead never ends", from, empty)
				}
			}
			if err := w.Verify(); err != nil {
				t.Fatalf("from %d: %v", from, err)
			}
			if next == math.MaxInt64 {
				break
			}
		}
		if fired != len(whens) {
			t.Fatalf("from %d: fired %d of %d", from, fired, len(whens))
		}
	}
}
