package cron

import "time"

// OnEpochGrid returns sched as schedulers that share a Claimer run it:
// "@every d" (and robfig's ConstantDelaySchedule) on the instants whose
// Unix time is a multiple of d, so that every process names the same
// instants whenever it started; any other schedule as it is, calendar
// specs already naming the same instants everywhere. Use it to run a
// schedule of Parse's outside a Scheduler, as durable's periodic
// schedules do. It costs O(1).
func OnEpochGrid(sched Schedule) Schedule {
	if d := constantDelay(sched); d > 0 {
		return gridSchedule{origin: time.Unix(0, 0), every: d}
	}
	return sched
}

// constantDelay returns the period of "@every d" (on a grid or not) or
// of robfig's ConstantDelaySchedule, and 0 for any other schedule.
func constantDelay(sched Schedule) time.Duration {
	if g, ok := sched.(gridSchedule); ok {
		return g.every
	}
	return period(sched)
}
