package workload

import (
	"time"

	"github.com/timewheel/timewheel"
	"github.com/timewheel/timewheel/lab"
	"github.com/timewheel/timewheel/queue"
)

// Contender is one row of the lab: a structure of package lab, package
// time, or the scheduler.
type Contender struct {
	// Name is the row's name: a lab structure's name, "time" or
	// "timewheel".
	Name string
	// Origin says what it is and where it comes from.
	Origin string
	// Structure is the lab structure, or nil for package time and the
	// scheduler.
	Structure *lab.Structure

	clockless bool // its clock cannot be driven: no expire, no far
	ops       func() opener
}

// opener makes stations of one handle type; see bindQueue.
type opener interface {
	// open fills a new queue with n timers, measuring the heap it takes
	// if mem, and reports false if the fill deadline passed first.
	open(n int, seed uint64, fill time.Time, mem bool) (st Station, bytesPerTimer float64, ok bool)
	// far runs the far workload on a new queue, timing it with sw, and
	// reports false if deadline passed first.
	far(n int, seed uint64, deadline time.Time, sw Stopwatch) bool
	farWith(plan farPlan, n int, seed uint64, deadline time.Time, sw Stopwatch) bool
}

// Supports reports whether the workload makes sense for c: package time
// and the scheduler have no expire or far workload, since their clocks
// are real.
func (c Contender) Supports(k Kind) bool {
	return !c.clockless || k != Expire && k != Far
}

// Contenders returns every contender: the lab's structures in the order
// of lab.Structures, then package time and the scheduler.
func Contenders() []Contender {
	var cs []Contender
	for _, s := range lab.Structures() {
		s := s
		cs = append(cs, Contender{Name: s.Name, Origin: s.Origin, Structure: &s, ops: structureOpener(s)})
	}
	return append(cs,
		Contender{Name: "time", Origin: "package time: AfterFunc, Stop, Reset", clockless: true,
			ops: func() opener { return bindQueue(func() queue.Queue[*time.Timer] { return &timeQueue{} }) }},
		Contender{Name: "timewheel", Origin: "the scheduler: timewheel.New(), AfterFunc, Stop, Reset", clockless: true,
			ops: func() opener {
				return bindQueue(func() queue.Queue[*timewheel.Timer] { return &schedulerQueue{w: timewheel.New()} })
			}},
	)
}

// structureOpener binds a lab structure to its handle type.
func structureOpener(s lab.Structure) func() opener {
	switch s.New().(type) {
	case queue.Queue[*lab.UnorderedTimer]:
		return func() opener { return bindStructure[*lab.UnorderedTimer](s) }
	case queue.Queue[*lab.SortedTimer]:
		return func() opener { return bindStructure[*lab.SortedTimer](s) }
	case queue.Queue[*lab.HeapTimer]:
		return func() opener { return bindStructure[*lab.HeapTimer](s) }
	case queue.Queue[*lab.Heap4Timer]:
		return func() opener { return bindStructure[*lab.Heap4Timer](s) }
	case queue.Queue[*lab.RBTimer]:
		return func() opener { return bindStructure[*lab.RBTimer](s) }
	case queue.Queue[*lab.SkipTimer]:
		return func() opener { return bindStructure[*lab.SkipTimer](s) }
	case queue.Queue[*lab.LibcoTimer]:
		return func() opener { return bindStructure[*lab.LibcoTimer](s) }
	case queue.Queue[*lab.RoundsTimer]:
		return func() opener { return bindStructure[*lab.RoundsTimer](s) }
	case queue.Queue[*lab.NodeTimer]:
		return func() opener { return bindStructure[*lab.NodeTimer](s) }
	case queue.Queue[*queue.Entry]:
		return func() opener { return bindStructure[*queue.Entry](s) }
	case queue.Queue[*lab.LinuxTimer]:
		return func() opener { return bindStructure[*lab.LinuxTimer](s) }
	}
	panic("workload: no handle type for lab structure " + s.Name)
}

func bindStructure[H comparable](s lab.Structure) opener {
	return bindQueue(func() queue.Queue[H] { return s.New().(queue.Queue[H]) })
}

// clocklessOffset puts the timers of package time and the scheduler an
// hour further out than the workloads say, so that none fires while it is
// measured.
const clocklessOffset = time.Hour

func noop() {}

// timeQueue is package time behind the queue interface: a tick is a
// millisecond from now. It has no Expire, Next or Len.
type timeQueue struct{}

func (*timeQueue) Schedule(when int64) *time.Timer {
	return time.AfterFunc(clocklessOffset+time.Duration(when)*time.Millisecond, noop)
}
func (*timeQueue) Cancel(t *time.Timer) bool { return t.Stop() }
func (*timeQueue) Reschedule(t *time.Timer, when int64) bool {
	return t.Reset(clocklessOffset + time.Duration(when)*time.Millisecond)
}
func (*timeQueue) Expire(int64, func(*time.Timer)) int {
	panic("workload: package time has no Expire")
}
func (*timeQueue) Next() (int64, bool) { return 0, false }
func (*timeQueue) Len() int            { return 0 }

// schedulerQueue is the scheduler behind the queue interface, like
// timeQueue. Close closes its wheel.
type schedulerQueue struct{ w *timewheel.Wheel }

func (q *schedulerQueue) Schedule(when int64) *timewheel.Timer {
	return q.w.AfterFunc(clocklessOffset+time.Duration(when)*time.Millisecond, noop)
}
func (q *schedulerQueue) Cancel(t *timewheel.Timer) bool { return t.Stop() }
func (q *schedulerQueue) Reschedule(t *timewheel.Timer, when int64) bool {
	return t.Reset(clocklessOffset + time.Duration(when)*time.Millisecond)
}
func (q *schedulerQueue) Expire(int64, func(*timewheel.Timer)) int {
	panic("workload: the scheduler's clock is real; it has no Expire")
}
func (q *schedulerQueue) Next() (int64, bool) { return 0, false }
func (q *schedulerQueue) Len() int            { return q.w.Len() }
func (q *schedulerQueue) Close()              { q.w.Close() }
