package workload

import (
	"runtime"
	"time"

	"github.com/timewheel/timewheel"
	"github.com/timewheel/timewheel/queue"
)

// Contender is one row of the lab: a timer queue (a structure of package
// lab, the engine among them), package time, or the scheduler. Make one
// with [Queue]; [Time] and [Scheduler] are the other two.
type Contender struct {
	// Name is the row's name: a lab structure's name, "time" or
	// "timewheel".
	Name string
	// Origin says what it is and where it comes from.
	Origin string
	// Claims are the costs claimed for a queue; nil for package time and
	// the scheduler.
	Claims *Claims
	// Caveat is what a user of it must know besides its costs, said of
	// it ("fires late by design, …"), or "".
	Caveat string

	clockless bool    // its clock cannot be driven: no expire, no far
	ops       opener  // its workloads, bound to its handle type
	counter   Counter // its queues that count their steps; nil if it has none
}

// Claims are the costs the reference documents claim for a structure's
// schedule, cancel and expire.
type Claims struct {
	Schedule, Cancel, Expire Claim
}

// Claim is the cost a source gives one operation of a structure.
type Claim struct {
	// Cost is the cost as the source writes it: "O(lg n)", "O(k log n)",
	// "O(n/512) per tick".
	Cost string
	// Source names where it comes from: a reference document ("004"), or
	// "doc" for the structure's own documentation where no document
	// speaks of it.
	Source string
	// Class is what the claim predicts for the lab's workload, in n: per
	// operation, and for expire per timer fired, k timers being due
	// (O(k log n) is O(log n)). The steps are held to it.
	Class Class
	// Why is what the lab knows of why the steps may disagree with the
	// claim, in one line; the report prints it beside a disagreement.
	Why string
}

// Get returns the claim for workload k: schedule, cancel or expire; the
// zero Claim for the others.
func (cs Claims) Get(k Kind) Claim {
	switch k {
	case Schedule:
		return cs.Schedule
	case Cancel:
		return cs.Cancel
	case Expire:
		return cs.Expire
	}
	return Claim{}
}

// Queue returns the contender for a timer queue: newQueue returns an empty
// one, with handles of type H, and counted, if not nil, makes queues of
// the same structure that count their steps (see CountSteps). It runs
// every workload. The compiler checks the queue against H, so a
// contender cannot be bound to the wrong handle type.
func Queue[H comparable](name, origin string, claims Claims, newQueue func() queue.Queue[H], counted Counter) Contender {
	return Contender{Name: name, Origin: origin, Claims: &claims, ops: bound[H]{newQueue: newQueue}, counter: counted}
}

// realTimers are timers on the real clock: package time and the
// scheduler. Their clock cannot be driven, so unlike a [queue.Queue] they
// have no Expire, Next or Len, and run no expire or far workload.
type realTimers[H comparable] interface {
	timers[H]
	// Close releases the timers, pending those of pending.
	Close(pending []H)
}

// clockless returns the contender for timers on the real clock.
func clockless[H comparable](name, origin string, newTimers func() realTimers[H]) Contender {
	return Contender{Name: name, Origin: origin, clockless: true, ops: bound[H]{newReal: newTimers}}
}

// Time returns package time as a contender: AfterFunc, Stop, Reset.
func Time() Contender {
	return clockless("time", "package time: AfterFunc, Stop, Reset",
		func() realTimers[*time.Timer] { return timeTimers{} })
}

// Scheduler returns the scheduler as a contender: a wheel of
// timewheel.New, AfterFunc, Stop, Reset.
func Scheduler() Contender {
	return clockless("timewheel", "the scheduler: timewheel.New(), AfterFunc, Stop, Reset",
		func() realTimers[*timewheel.Timer] { return schedulerTimers{timewheel.New()} })
}

// Supports reports whether the workload makes sense for c: package time
// and the scheduler have no expire or far workload, since their clocks
// are real.
func (c Contender) Supports(k Kind) bool {
	return !c.clockless || k != Expire && k != Far
}

// clocklessOffset puts the timers of package time and the scheduler an
// hour further out than the workloads say, so that none fires while it is
// measured.
const clocklessOffset = time.Hour

// delay is tick when as a delay on a real clock: a tick is a millisecond
// from now, and clocklessOffset more.
func delay(when int64) time.Duration {
	return clocklessOffset + time.Duration(when)*time.Millisecond
}

func noop() {}

// timeTimers is package time: a tick is a millisecond from now.
type timeTimers struct{}

func (timeTimers) Schedule(when int64) *time.Timer           { return time.AfterFunc(delay(when), noop) }
func (timeTimers) Cancel(t *time.Timer) bool                 { return t.Stop() }
func (timeTimers) Reschedule(t *time.Timer, when int64) bool { return t.Reset(delay(when)) }

// Close stops the pending timers, or they would wait in the runtime for
// an hour, and yields. The runtime drops stopped timers from its heap
// when it next schedules, and until then they are not garbage.
func (timeTimers) Close(pending []*time.Timer) {
	for _, t := range pending {
		t.Stop()
	}
	runtime.Gosched()
}

// schedulerTimers is the scheduler, like timeTimers. Close closes its
// wheel.
type schedulerTimers struct{ w *timewheel.Wheel }

func (s schedulerTimers) Schedule(when int64) *timewheel.Timer {
	return s.w.AfterFunc(delay(when), noop)
}
func (schedulerTimers) Cancel(t *timewheel.Timer) bool                 { return t.Stop() }
func (schedulerTimers) Reschedule(t *timewheel.Timer, when int64) bool { return t.Reset(delay(when)) }
func (s schedulerTimers) Close([]*timewheel.Timer)                     { s.w.Close() }
