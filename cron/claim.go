package cron

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"math/big"
	"time"
)

// Claimer decides which of several schedulers that run the same jobs, one
// per replica of a service, runs each run. A run is named by the job's
// name and the instant it was scheduled for; every replica asks to claim
// it, and the one whose Claim returns true runs it. A claim is never
// released: a replica whose clock is late by seconds, or that fires after
// the winner's run has long returned, finds the run taken. See
// [WithClaimer].
//
// Claim claims the run of job scheduled at at. It returns true if this
// caller is the first to claim it, false if another caller did, and an
// error if it cannot tell, for which the scheduler's [ClaimPolicy]
// decides. at is the same instant on every replica, but its location is
// the job's: keep it in UTC or as Unix time, since a wall clock reading
// can repeat when clocks are set back. Claim must return soon after ctx
// is done; the scheduler gives it a deadline ([WithClaimTimeout]).
//
// A claim must outlive the skew between the replicas' clocks, and the
// time after which a replica that restarts catches up a missed run
// ([Scheduler.Restore]); it may be forgotten after that.
//
// A Claim that panics is recovered, as a job that panics is, and the
// scheduler goes on. The value goes to the panic handler
// ([WithPanicHandler]; by default logged with its stack). The claim counts
// as failed: in Stats.ClaimErrors, not Panics, and without a call to the
// claim error handler. The job's ClaimPolicy decides whether the run goes
// ahead.
//
// Implementations must be safe for concurrent use. On SQL, Claim is one
// statement, claimed if it inserted one row:
//
//	INSERT INTO cron_runs (job, at) VALUES ($1, $2) ON CONFLICT DO NOTHING
//
// On etcd, it is a transaction that puts the key if its create revision
// is 0, with a lease for the expiry. The module
// github.com/timewheel/timewheel/cron/redisclaim claims on Redis.
type Claimer interface {
	Claim(ctx context.Context, job string, at time.Time) (bool, error)
}

// DefaultClaimTimeout is how long a run waits for its claim unless
// WithClaimTimeout says otherwise. A claim on a healthy store on the same
// network takes well under a millisecond. Past two seconds, the run's
// ClaimPolicy decides.
const DefaultClaimTimeout = 2 * time.Second

// ClaimPolicy says what a scheduler does with a run whose claim failed:
// the Claimer returned an error, or did not answer within the claim
// timeout. The error goes to the handler of [WithClaimErrorHandler] and
// is counted in Stats.ClaimErrors either way; later runs are claimed
// afresh.
type ClaimPolicy uint8

const (
	// AtMostOnce skips the run (the default): no run of the job happens
	// twice, and while the store is down none happens at all.
	AtMostOnce ClaimPolicy = iota
	// AtLeastOnce runs the run anyway: no run is lost to a failing store,
	// and while it is down each replica runs it.
	AtLeastOnce
)

// String returns "at most once" or "at least once".
func (p ClaimPolicy) String() string {
	switch p {
	case AtMostOnce:
		return "at most once"
	case AtLeastOnce:
		return "at least once"
	}
	return fmt.Sprintf("ClaimPolicy(%d)", uint8(p))
}

// claim reports whether this scheduler is to run j's run at at: always,
// without a Claimer; else if the claim succeeded, or failed under
// AtLeastOnce before Stop gave up. It is called on the run's goroutine,
// never with s.mu held, and waits for the Claimer at most the claim
// timeout. A Claim that panics is a failed claim whose panic goes to the
// panic handler.
func (s *Scheduler) claim(j *Job, set *jobSet, at time.Time) bool {
	if s.claimer == nil {
		return true
	}
	at = at.In(set.loc)
	won, err := s.ask(j, at)
	if err == errClaimPanicked { // counted and reported
		return set.claimPolicy == AtLeastOnce && s.ctx.Err() == nil
	}
	if err == nil {
		if !won {
			s.count(j, Stats{ClaimsLost: 1})
		}
		return won
	}
	s.count(j, Stats{ClaimErrors: 1})
	s.claimErr(j.name, at, err)
	// A claim cut short because Stop gave up waiting starts no run.
	return set.claimPolicy == AtLeastOnce && s.ctx.Err() == nil
}

// errClaimPanicked is what ask returns for a Claim that panicked.
var errClaimPanicked = errors.New("cron: Claim panicked")

// ask asks the Claimer for j's run at at, in the job's zone. If Claim
// panics, ask counts a claim error, gives the panic to the panic handler
// and returns errClaimPanicked.
func (s *Scheduler) ask(j *Job, at time.Time) (won bool, err error) {
	ctx, cancel := context.WithTimeout(s.ctx, s.claimTimeout)
	defer cancel()
	defer func() {
		if r := recover(); r != nil {
			won, err = false, errClaimPanicked
			s.count(j, Stats{ClaimErrors: 1})
			s.reportPanic(j.name, "Claim", r, nil)
		}
	}()
	return s.claimer.Claim(ctx, j.name, at)
}

// logClaimError returns the default claim error handler: it logs the
// error at level Warn through l, or slog.Default() if l is nil.
func logClaimError(l *slog.Logger) func(job string, at time.Time, err error) {
	return func(job string, at time.Time, err error) {
		logger(l).Warn("cron: claim failed", "job", job, "at", at, "err", err)
	}
}

// gridSchedule runs every d on a grid through origin: at the instants
// origin + k·d, for every integer k. "@every d" runs on it, through the
// time the job was added. With a Claimer it runs through the Unix epoch,
// so that replicas started at different times, or whose clocks are
// skewed, name the same instants.
type gridSchedule struct {
	origin time.Time
	every  time.Duration
}

// Next returns the first instant of the grid after t, in t's location.
func (g gridSchedule) Next(t time.Time) time.Time {
	return t.Add(g.every - g.offset(t))
}

// count is passed for the grid: first is one of its instants.
func (g gridSchedule) count(first, now time.Time, _ *time.Location) (int, time.Time) {
	if now.Before(first) {
		return 0, first
	}
	return int(now.Sub(first)/g.every) + 1, g.Next(now)
}

// offset returns how far t lies past the last instant of the grid at or
// before it, in [0, every).
func (g gridSchedule) offset(t time.Time) time.Duration {
	if span := t.Sub(g.origin); span != math.MinInt64 && span != math.MaxInt64 {
		r := span % g.every
		if r < 0 {
			r += g.every
		}
		return r
	}
	return g.offsetFar(t) // t.Sub saturated: t lies more than 292 years from origin
}

// offsetFar is offset for any t, in arbitrary precision.
func (g gridSchedule) offsetFar(t time.Time) time.Duration {
	span := new(big.Int).Sub(big.NewInt(t.Unix()), big.NewInt(g.origin.Unix()))
	span.Mul(span, big.NewInt(int64(time.Second)))
	span.Add(span, big.NewInt(int64(t.Nanosecond()-g.origin.Nanosecond())))
	return time.Duration(span.Mod(span, big.NewInt(int64(g.every))).Int64()) // Euclidean: in [0, every)
}

// onGrid returns sched, or for "@every d" the grid of d through now, or
// with a Claimer through the Unix epoch. With a Claimer, a constant delay
// of robfig's (Every, given to AddSchedule) runs on the epoch's grid too.
func (s *Scheduler) onGrid(sched Schedule, now time.Time) Schedule {
	origin := now.Round(0)
	if s.claimer != nil {
		origin = time.Unix(0, 0)
	}
	d := constantDelay(sched)
	if _, every := sched.(everySchedule); !every && (s.claimer == nil || d <= 0) {
		return sched
	}
	return gridSchedule{origin: origin, every: d}
}
