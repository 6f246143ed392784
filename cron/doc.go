// Package cron runs jobs on calendar schedules, each in its own time
// zone, on a timewheel. A schedule is "every Tuesday at 9:00", "the 12th
// of each month at 9:00", any crontab line, or a [Schedule] of one's own.
//
//	s := cron.New()
//	s.Add("report", "0 9 * * TUE", sendReport, cron.InZone("Europe/Berlin"))
//	s.Add("invoices", "0 9 12 * *", billMonth)
//	s.Add("sweep", "@every 10m", sweep)
//	...
//	s.Stop(ctx) // on shutdown: waits for runs in progress
//
// Expressions are parsed by robfig/cron/v3's parser (see [Parse]): the
// five standard fields, an optional leading seconds field, descriptors
// like @daily, and a CRON_TZ= prefix. "@every 1h30m" this package reads
// itself, so that it takes any positive duration, "@every 1500ms" too.
//
// # Driven by the wheel
//
// A job holds one timer of the wheel ([WithWheel]; [timewheel.Default]
// unless told), set for its next run and reset for the one after each time
// it fires. The hierarchical wheel keeps a deadline a month out in a slot
// of its top levels at O(1) cost, and wakes for it only as it nears. (The
// month/week/day wheels of the reference documents do the same.) A
// scheduler has no goroutine of its own.
//
// # The wall clock
//
// A job's time is a time of the wall clock, but a timer waits a duration
// of the monotonic clock. A step of the wall clock (NTP, a manual setting)
// or a suspend of the machine does not move the monotonic clock. A
// scheduler with jobs checks the wall clock once a minute
// ([WithWallClockCheck]). It sets afresh the timers of the jobs due before
// the next check. After a forward step or a resume, a run whose time has
// passed runs within a minute, as its missed-run policy says. After a
// backward step, no run comes early or twice. The check is one wakeup a
// minute, whatever the number of jobs; a scheduler without jobs does not
// wake.
//
// # Time zones and daylight saving
//
// Each job runs in a zone: [InZone] names one ("America/New_York"), else a
// CRON_TZ= prefix, else [WithLocation], else time.Local. Zones are loaded
// from the machine's zone files, as time.LoadLocation does. A program that
// runs where there are none (a scratch container) embeds Go's copy, some
// 450 KB, with import _ "time/tzdata" in its main package. A library
// leaves that choice to the program; an unknown zone's error says so.
//
// When clocks change, jobs run as cron users expect, by the rule of Vixie
// cron. A job at fixed hours and minutes ("30 2 * * *", @daily) runs on
// the wall clock:
//   - At a time that the spring change skips, it runs once, at the change.
//     2:30 on a night that jumps from 2:00 to 3:00 runs at 3:00.
//   - At a time that the autumn change repeats, it runs once, the first
//     time. 1:30 on a night that goes from 2:00 back to 1:00 runs at the
//     first 1:30.
//
// A job whose seconds, minutes or hours field starts with '*' runs on real
// time instead: "*/15 * * * *", "0 */2 * * *", "*/15 1 * * *", @hourly.
// Every 15 minutes stays every 15 minutes across the change, through the
// skipped hour and twice through the repeated one. It runs at every
// instant whose wall clock the spec names. That holds also where clocks
// move by half an hour (Lord Howe) or skip midnight (Havana, Santiago).
//
// # Running jobs
//
// A run gets a goroutine of its own ([WithInline] runs it on the wheel's
// executor instead). A run may fall due while the previous one of the
// same job is still going. The job's [Overlap] policy then decides: Skip
// (the default) drops it, Queue runs it after, Allow runs it beside. A
// panicking job is recovered and reported ([WithPanicHandler]); its later
// runs and the other jobs go on. So is a panic of a [Claimer]'s Claim,
// and of a Schedule's Next once the job is added: see [Claimer] and
// [Scheduler.AddSchedule]. [Scheduler.Stop] stops the timers and
// waits, as long as its context allows, for runs in progress; called from
// a run, it returns at once instead of waiting for its caller.
// The zero Scheduler is ready to use, as New() would make it.
//
// Per job, options on Add and AddSchedule do these:
//   - add a random delay to each run ([WithJitter]);
//   - bound the runs to dates ([WithStartAt], [WithStopAt]) or to a
//     number ([WithLimitRuns]);
//   - count an "@every" period from the end of each run
//     ([WithIntervalFromCompletion]);
//   - choose the rule for a time the spring change skips ([OnSkippedTime]).
//
// [At] and "@at" specs are one-time jobs. Per scheduler, options on New
// bound the runs going at once ([WithConcurrencyLimit]) and hook every run
// ([WithHooks]). A job made by [Returning] returns an error, counted in
// Stats.Errors. [Scheduler.RunNow] runs a job at once, [Job.NextRuns]
// lists its next runs, and [Scheduler.Update] changes its schedule and
// options in one step.
//
// A run found more than its grace period late ([WithGrace], a second by
// default) is missed. (The process was stalled or down, the machine slept
// or the wall clock stepped forward.) The job's [Missed] policy decides
// ([OnMissed]): run the first missed run once (RunOnce, the default), skip
// them (SkipMissed), or make them all up, oldest first, up to MaxCatchUp
// (RunAll). Every time of the schedule that falls due is run, skipped by
// a policy or counted in Stats.Missed.
//
// Four policies can drop a run, each with a "skip" of its own type:
// [Skip] (an [Overlap]: the job's last run is still going, counted in
// Stats.Skipped), [SkipMissed] (a [Missed] policy: the run is late,
// Stats.Missed), [LimitSkip] (a [LimitMode]: the concurrency limit is
// reached, Stats.Limited) and [SkipSkipped] (a [SkippedTime]: a
// spring-forward change skipped the time). The names keep their
// types' words rather than one pattern: each is typed, so a skip given to
// the wrong option (WithOverlap(SkipMissed)) does not compile, and
// renaming them would add four deprecated names for nothing the compiler
// does not already check.
//
// # Across replicas
//
// A service that runs in three replicas, each with the same jobs, would
// run each job three times. [WithClaimer] makes each run happen once. A
// run is named by its job and the instant it was scheduled for, which is
// the same on every replica. Each replica claims it from a store they
// share, and only the replica whose claim succeeds runs it. The claim is
// never released. That is what makes it hold where lock-and-release does
// not. Take a lock for the run and release it after. A job that takes a
// millisecond is done and unlocked before a replica whose clock is a
// second behind fires, and that replica runs it again. A claim is still
// there when the late replica asks, however late, until the claim
// expires, which must be long after any skew.
//
//	c := redisclaim.New(rdb) // module github.com/timewheel/timewheel/cron/redisclaim
//	s := cron.New(cron.WithClaimer(c))
//	s.Add("invoices", "0 9 12 * *", billMonth, cron.OnClaimFailure(cron.AtLeastOnce))
//
// Claims are made on the run's goroutine, with a timeout, and a store
// that fails is a [ClaimPolicy]: skip the run (AtMostOnce, the default)
// or run it anyway (AtLeastOnce). With a claimer, "@every" runs on a grid
// aligned to the Unix epoch, so that replicas started at different times
// name the same instants. A replica that claims a run and dies loses it.
// The single-process scheduler, without a claimer, needs none of this.
//
// # Testing
//
// Jobs are tested on a [clock.Virtual] with a wheel whose executor is
// [timewheel.Inline] and a scheduler made [WithInline]. The clock moves
// only when told, stopping at each run. When Advance returns, every run
// due has returned. A year of schedule takes a quarter of a second, most
// of it the wall-clock check's half a million wakeups; with a check an
// hour, milliseconds:
//
//	clk := clock.NewVirtual(start)
//	w := timewheel.New(timewheel.WithClock(clk), timewheel.WithExecutor(timewheel.Inline()))
//	s := cron.New(cron.WithWheel(w), cron.WithInline(), cron.WithWallClockCheck(time.Hour))
//	s.Add("report", "0 9 * * TUE", record)
//	clk.Advance(365 * 24 * time.Hour) // 52 runs
//
// Without WithInline, runs are on their own goroutines; the decision to
// start, skip or queue a run is still made before Advance returns, and
// Stop waits for the runs. The clock's StepWall and Suspend move its wall
// clock alone, as NTP and a sleeping laptop do, for tests of what a job
// does then.
//
// # Snapshots
//
// [Scheduler.Snapshot] writes each job's next run and [Scheduler.Restore]
// reads them back, so that a restarted process runs what fell due while
// it was down, as each job's missed-run policy says, instead of silently
// skipping it. The format is documented on Snapshot.
package cron
