package lab

import (
	"container/heap"
	"fmt"
	"math/bits"
	"unsafe"

	"github.com/timewheel/timewheel/lab/workload"
	"github.com/timewheel/timewheel/queue"
)

// wheelSteps is the engine, [queue.Wheel], with its steps counted from
// outside. The engine carries no counter, so that nothing is added to the
// scheduler's hot path. Instead the lab keeps, beside a real wheel, where
// each pending entry is filed as the wheel's documentation places it
// ("Placement"). An entry sits at the level of the highest six-bit digit
// in which its deadline and the wheel's current tick differ. Its slot's
// start is its deadline with the digits below that level cleared. It
// stays there until Expire reaches that start and moves the slot's
// entries down a level, or fires them from a level-0 slot.
//
// It counts what the lab's other wheels count: an entry linked, unlinked,
// moved down or fired, every slot Expire reaches, and each Expire call.
// TestWheelStepsPlacesAsTheWheel holds the
// placement to the engine's through NextWake, which answers a slot's
// start when the slot holds more than 64 entries of unknown earliest
// deadline.
//
// It is for the counting pass only. fire must not schedule, cancel or
// reschedule: the lab's workloads do not, and the count of a slot that
// fire fills while Expire runs would be missed.
type wheelSteps struct {
	w      *queue.Wheel
	steps  *workload.Steps
	slots  map[wheelSlot]*wheelSlotList // the entries filed in each slot
	order  slotOrder                    // the slots that hold entries, earliest start first
	filing uint64                       // filings so far
}

// wheelEntry is a timer of a wheelSteps: the engine's entry and where the
// lab has it filed.
type wheelEntry struct {
	queue.Entry // first: the wheel hands back &Entry, which is the wheelEntry (see entryOf)
	slot        wheelSlot
	filing      uint64 // which filing put it in slot
}

// entryOf returns the wheelEntry whose Entry e is: every entry of a
// wheelSteps's wheel is one, since only wheelSteps inserts into it.
func entryOf(e *queue.Entry) *wheelEntry { return (*wheelEntry)(unsafe.Pointer(e)) }

var _ = [1]struct{}{}[unsafe.Offsetof(wheelEntry{}.Entry)] // entryOf's cast needs Entry first

// wheelSlot is a slot of the wheel by the tick its start is at and its
// level; level -1 is the due list, or not pending.
type wheelSlot struct {
	start int64
	level int
}

// wheelSlotList holds the entries filed in a slot, each with the filing
// that put it there: those whose last filing it is are still there, live
// of them; the others have left.
type wheelSlotList struct {
	entries []filed
	live    int
}

// filed is an entry as one filing put it in a slot.
type filed struct {
	e      *wheelEntry
	filing uint64
}

func newWheelSteps(s *workload.Steps) queue.Queue[*wheelEntry] {
	return &wheelSteps{w: queue.NewWheel(), steps: s, slots: map[wheelSlot]*wheelSlotList{}}
}

// slotOf returns the slot a deadline goes to when the current tick is now.
func slotOf(when, now int64) wheelSlot {
	if when <= now {
		return wheelSlot{start: now, level: -1}
	}
	k := (bits.Len64(uint64(when^now)) - 1) / 6
	return wheelSlot{start: when &^ (1<<(6*k) - 1), level: k}
}

// file records e, just inserted, as filed at the current tick now.
func (m *wheelSteps) file(e *wheelEntry, now int64) {
	s := slotOf(e.When(), now)
	m.filing++
	e.slot, e.filing = s, m.filing
	if s.level < 0 {
		return
	}
	l := m.slots[s]
	if l == nil {
		l = &wheelSlotList{}
		m.slots[s] = l
		heap.Push(&m.order, s)
	}
	l.entries = append(l.entries, filed{e, e.filing})
	l.live++
}

// drop records that e leaves its slot.
func (m *wheelSteps) drop(e *wheelEntry) {
	if l := m.slots[e.slot]; e.slot.level >= 0 && l != nil {
		l.live--
	}
	e.slot = wheelSlot{level: -1}
}

func (m *wheelSteps) Schedule(when int64) *wheelEntry {
	e := &wheelEntry{}
	m.w.Insert(&e.Entry, when)
	m.file(e, m.w.Now())
	m.steps.Add(1)
	return e
}

func (m *wheelSteps) Cancel(e *wheelEntry) bool {
	m.drop(e)
	m.steps.Add(1)
	return m.w.Cancel(&e.Entry)
}

func (m *wheelSteps) Reschedule(e *wheelEntry, when int64) bool {
	m.drop(e)
	pending := m.w.Reschedule(&e.Entry, when)
	m.file(e, m.w.Now())
	m.steps.Add(2)
	return pending
}

// Expire counts the slots the wheel reaches up to now and the entries it
// moves down, in the order the wheel does, then lets the wheel expire,
// counting each entry it fires.
func (m *wheelSteps) Expire(now int64, fire func(*wheelEntry)) int {
	m.steps.Add(1)
	for len(m.order) > 0 && m.order[0].start <= now {
		s := heap.Pop(&m.order).(wheelSlot)
		l := m.slots[s]
		delete(m.slots, s)
		if l.live == 0 {
			continue // emptied by cancels: the wheel does not reach it
		}
		m.steps.Add(1)
		for _, f := range l.entries {
			switch e := f.e; {
			case e.filing != f.filing: // left the slot
			case s.level == 0:
				e.slot = wheelSlot{start: s.start, level: -1} // fires from the due list
			default:
				m.steps.Add(1) // moved down a level, or to the due list
				if m.file(e, s.start); e.slot.level >= s.level {
					panic(fmt.Sprintf("lab: wheelSteps moved an entry due at %d from level %d to level %d at tick %d", e.When(), s.level, e.slot.level, s.start))
				}
			}
		}
	}
	return m.w.Expire(now, func(e *queue.Entry) {
		m.steps.Add(1)
		fire(entryOf(e))
	})
}

func (m *wheelSteps) Next() (int64, bool) { return m.w.Next() }
func (m *wheelSteps) Len() int            { return m.w.Len() }

// Verify checks the engine's invariants (see queue.Wheel.Verify).
func (m *wheelSteps) Verify() error { return m.w.Verify() }

// slotOrder is a min-heap of slots by start (slots of different levels
// never share a start: see queue.Wheel's Placement).
type slotOrder []wheelSlot

func (o slotOrder) Len() int           { return len(o) }
func (o slotOrder) Less(i, j int) bool { return o[i].start < o[j].start }
func (o slotOrder) Swap(i, j int)      { o[i], o[j] = o[j], o[i] }
func (o *slotOrder) Push(x any)        { *o = append(*o, x.(wheelSlot)) }
func (o *slotOrder) Pop() any {
	old := *o
	x := old[len(old)-1]
	*o = old[:len(old)-1]
	return x
}
