// Package workload runs the lab's workloads on every contender: the
// structures of package lab (the engine among them), package time and the
// scheduler timewheel.New. A timer queue becomes a contender through
// [Queue], bound to its own handle type, which the compiler checks; package
// lab registers each of its structures that way, one call each. Package
// time and the scheduler are [Time] and [Scheduler]: their clocks are real,
// so they offer schedule, cancel and reschedule, not a [queue.Queue].
//
// It measures each cell (contender, workload, size) with a time-boxed
// loop under a budget. A structure whose cost explodes is reported over
// budget instead of hanging the run. Its results are what cmd/timerlab
// prints and what the benchmarks of package lab run.
//
// One tick is one millisecond. Every workload but far keeps n timers
// pending, due 10 to 60 seconds out (package time and the scheduler: an
// hour more, so that nothing fires while they are measured):
//
//	schedule  Schedule one more timer (the extra ones are cancelled untimed)
//	cancel    Cancel a pending timer (it is scheduled again untimed)
//	churn     Cancel a random pending timer and schedule one: W1
//	refresh   Reschedule a random pending timer to 60 s out, later than any: W2
//	expire    a burst of 1,000 timers due within 100 ms fires in one
//	          Expire; the cost is per timer fired (not for time or timewheel,
//	          whose clocks cannot be driven)
//	far       n timers 10 minutes to a day out, the clock driven in 1 s
//	          steps until all have fired; the cost is per timer, over its
//	          whole life, the steps included (libco's weak case)
//	memory    heap bytes per pending timer: HeapAlloc after filling n,
//	          less before, over n: W4
//
// Workloads are single-goroutine: the scheduler's lock is taken but never
// contended.
//
// Run measures the cells of one workload and size together, in laps of
// one round each, every contender's round in turn. It stops when the
// rounds of every cell have settled. Each cell is the median of its
// rounds, timed on the CPU clock of the lab's thread. The collector is
// held off during the laps (see Run).
//
// Budgets bound the time of filling a station, of each cell and of each
// far cell. A cell over budget stops the contender's larger sizes of that
// workload. A fill or far cell is not run if its time would be far over
// budget, extrapolated from the two sizes before (a power law through
// them).
//
// CountSteps counts the steps each structure takes per operation of the
// same workloads, in a pass of its own after the timed rounds. It runs on
// stations of queues made to count (see Steps and CountedQueue), filled
// with the same seed, for a fixed number of operations. So the counts
// are the same in every run and on every machine. FitSteps fits a growth
// class to them; FitGrowth fits the slope of the times.
package workload
