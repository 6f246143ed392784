package cron_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/timewheel/timewheel"
	"github.com/timewheel/timewheel/clock"
	"github.com/timewheel/timewheel/cron"
	"github.com/timewheel/timewheel/internal/misusetest"
)

func nop(context.Context, time.Time) {}

var jan1 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// A zero Scheduler, var or new, is a Scheduler made by New(): on the
// default wheel, in time.Local.
func TestMisuseZeroScheduler(t *testing.T) {
	for _, zero := range []struct {
		name string
		make func() *cron.Scheduler
	}{
		{"var", func() *cron.Scheduler { var s cron.Scheduler; return &s }},
		{"new", func() *cron.Scheduler { return new(cron.Scheduler) }},
	} {
		t.Run(zero.name, func(t *testing.T) {
			misusetest.Run(t, []misusetest.Case{
				{Name: "Add", Call: func(t *testing.T) error {
					s := zero.make()
					before := time.Now()
					j, err := s.Add("hourly", "@every 1h", nop)
					after := time.Now()
					if err != nil {
						return err
					}
					defer s.Stop(context.Background())
					if next := j.Next(); next.Before(before.Add(time.Hour)) || next.After(after.Add(time.Hour)) || j.Location() != time.Local {
						t.Errorf("next run at %v in %v, want an hour after Add, in Local", next, j.Location())
					}
					return nil
				}},
				{Name: "AddSchedule", Call: func(t *testing.T) error {
					s := zero.make()
					defer s.Stop(context.Background())
					_, err := s.AddSchedule("hourly", scheduleFunc(func(t time.Time) time.Time { return t.Add(time.Hour) }), nop)
					return err
				}},
				{Name: "Job Jobs Remove Stats", Call: func(t *testing.T) error {
					s := zero.make()
					if j, ok := s.Job("x"); j != nil || ok || len(s.Jobs()) != 0 || s.Remove("x") || s.Stats() != (cron.SchedulerStats{}) {
						t.Errorf("a zero Scheduler has jobs")
					}
					if err := s.RunNow("x"); !errors.Is(err, cron.ErrNoJob) {
						t.Errorf("RunNow on a zero Scheduler: %v", err)
					}
					if _, err := s.Update("x", "@every 1h"); !errors.Is(err, cron.ErrNoJob) {
						t.Errorf("Update on a zero Scheduler: %v", err)
					}
					return nil
				}},
				{Name: "Stop", Call: func(t *testing.T) error {
					s := zero.make()
					if err := s.Stop(context.Background()); err != nil {
						return err
					}
					_, err := s.Add("late", "@every 1h", nop)
					if !errors.Is(err, cron.ErrStopped) {
						t.Errorf("Add after Stop of a zero Scheduler: %v", err)
					}
					return nil
				}},
				{Name: "Snapshot and Restore", Call: func(t *testing.T) error {
					s := zero.make()
					var buf bytes.Buffer
					if err := s.Snapshot(&buf); err != nil {
						return err
					}
					return zero.make().Restore(&buf)
				}},
			})
		})
	}
}

// A zero Job, var or new, belongs to no scheduler: no run, no counts.
func TestMisuseZeroJob(t *testing.T) {
	for _, j := range []*cron.Job{new(cron.Job), {}} {
		misusetest.Check(t, misusetest.Case{Name: "zero Job", Call: func(t *testing.T) error {
			if j.Name() != "" || j.Location() != time.UTC || !j.Next().IsZero() || j.Stats() != (cron.Stats{}) || j.NextRuns(3) != nil {
				t.Errorf("zero Job: name %q, location %v, next %v, stats %+v", j.Name(), j.Location(), j.Next(), j.Stats())
			}
			return nil
		}})
	}
}

// Nil arguments: a nil Context waits without limit, as
// context.Background(); a nil option, reader, writer, func, schedule,
// wheel, location, handler, logger or claimer panics.
func TestMisuseNil(t *testing.T) {
	f := newFixture(t, jan1)
	misusetest.Run(t, []misusetest.Case{
		{Name: "Stop(nil)", Call: func(t *testing.T) error {
			f := newGoroutineFixture(t, jan1)
			release := make(chan struct{})
			f.s.Add("slow", "@every 1m", func(context.Context, time.Time) { <-release })
			f.clk.Advance(time.Minute)
			// Stop(nil) on another goroutine, its panic, if any, brought back here.
			done := make(chan func() error)
			go func() {
				defer func() {
					if p := recover(); p != nil {
						done <- func() error { panic(p) }
					}
				}()
				err := f.s.Stop(nil)
				done <- func() error { return err }
			}()
			close(release)
			return (<-done)()
		}},
		{Name: "Snapshot(nil)", Panic: "cron: Snapshot called with a nil io.Writer",
			Call: func(t *testing.T) error { return f.s.Snapshot(nil) }},
		{Name: "Restore(nil)", Panic: "cron: Restore called with a nil io.Reader",
			Call: func(t *testing.T) error { return f.s.Restore(nil) }},
		// Typed nils used to die with a nil dereference in the library.
		{Name: "Snapshot(nil *bytes.Buffer)", Panic: "cron: Snapshot called with a nil io.Writer (a nil *bytes.Buffer)",
			Call: func(t *testing.T) error { return f.s.Snapshot((*bytes.Buffer)(nil)) }},
		{Name: "Restore(nil *bytes.Reader)", Panic: "cron: Restore called with a nil io.Reader (a nil *bytes.Reader)",
			Call: func(t *testing.T) error { return f.s.Restore((*bytes.Reader)(nil)) }},
		{Name: "New(nil)", Panic: "cron: New: option 1 is nil", Call: func(t *testing.T) error {
			return cron.New(cron.WithWheel(f.w), nil).Stop(context.Background())
		}},
		{Name: "Add with a nil JobOption", Panic: "cron: Add: job option 0 is nil", Call: func(t *testing.T) error {
			_, err := f.s.Add("nil-option", "@every 1m", nop, nil)
			return err
		}},
		{Name: "Update with a nil JobOption", Panic: "cron: Update: job option 1 is nil", Call: func(t *testing.T) error {
			_, err := f.s.Update("nil-option", "@every 1m", cron.WithGrace(0), nil)
			return err
		}},
		{Name: "Add(nil func)", Panic: `cron: Add: nil func for job "x"`,
			Call: func(t *testing.T) error { _, err := f.s.Add("x", "@every 1m", nil); return err }},
		{Name: "AddSchedule(nil schedule)", Panic: `cron: AddSchedule: nil schedule or func for job "x"`,
			Call: func(t *testing.T) error { _, err := f.s.AddSchedule("x", nil, nop); return err }},
		{Name: "AddSchedule(nil func)", Panic: `cron: AddSchedule: nil schedule or func for job "x"`,
			Call: func(t *testing.T) error {
				_, err := f.s.AddSchedule("x", scheduleFunc(func(t time.Time) time.Time { return t.Add(time.Hour) }), nil)
				return err
			}},
		{Name: "WithWheel(nil)", Panic: "cron: WithWheel: nil wheel",
			Call: func(t *testing.T) error { cron.WithWheel(nil); return nil }},
		{Name: "WithWheel(zero Wheel)", Panic: "timewheel: Now called on a zero Wheel; make one with New",
			Call: func(t *testing.T) error {
				_, err := cron.New(cron.WithWheel(new(timewheel.Wheel))).Add("x", "@every 1m", nop)
				return err
			}},
		{Name: "WithLocation(nil)", Panic: "cron: WithLocation: nil location",
			Call: func(t *testing.T) error { cron.WithLocation(nil); return nil }},
		{Name: "WithPanicHandler(nil)", Panic: "cron: WithPanicHandler: nil handler",
			Call: func(t *testing.T) error { cron.WithPanicHandler(nil); return nil }},
		{Name: "WithClaimer(nil)", Panic: "cron: WithClaimer: nil claimer",
			Call: func(t *testing.T) error { cron.WithClaimer(nil); return nil }},
		// It used to be accepted, and the first run's claim killed the
		// process with a nil dereference on the run's goroutine.
		{Name: "WithClaimer(nil claimFunc)", Panic: "cron: WithClaimer: nil claimer (a nil cron_test.claimFunc)",
			Call: func(t *testing.T) error { cron.WithClaimer(claimFunc(nil)); return nil }},
		{Name: "WithClaimErrorHandler(nil)", Panic: "cron: WithClaimErrorHandler: nil handler",
			Call: func(t *testing.T) error { cron.WithClaimErrorHandler(nil); return nil }},
		{Name: "Parse(spec, nil)", Call: func(t *testing.T) error {
			sched, err := cron.Parse("0 9 * * *", nil)
			if err == nil {
				if at := sched.Next(jan1.In(time.Local)); at.Hour() != 9 || at.Location() != time.Local {
					t.Errorf("Parse with a nil location: next at %v, want 9:00 Local", at)
				}
			}
			return err
		}},
	})
}

// Every method of a nil *Scheduler or *Job panics, naming itself. They
// used to die with a nil dereference.
func TestMisuseNilReceivers(t *testing.T) {
	var s *cron.Scheduler
	var j *cron.Job
	misusetest.Run(t, []misusetest.Case{
		{Name: "Scheduler.Add", Panic: "cron: Add called on a nil *Scheduler",
			Call: func(t *testing.T) error { _, err := s.Add("x", "@every 1m", nop); return err }},
		{Name: "Scheduler.AddSchedule", Panic: "cron: AddSchedule called on a nil *Scheduler",
			Call: func(t *testing.T) error {
				_, err := s.AddSchedule("x", scheduleFunc(func(t time.Time) time.Time { return t.Add(time.Hour) }), nop)
				return err
			}},
		{Name: "Scheduler.Job", Panic: "cron: Job called on a nil *Scheduler",
			Call: func(t *testing.T) error { s.Job("x"); return nil }},
		{Name: "Scheduler.Jobs", Panic: "cron: Jobs called on a nil *Scheduler",
			Call: func(t *testing.T) error { s.Jobs(); return nil }},
		{Name: "Scheduler.Remove", Panic: "cron: Remove called on a nil *Scheduler",
			Call: func(t *testing.T) error { s.Remove("x"); return nil }},
		{Name: "Scheduler.Stop", Panic: "cron: Stop called on a nil *Scheduler",
			Call: func(t *testing.T) error { return s.Stop(context.Background()) }},
		{Name: "Scheduler.Stats", Panic: "cron: Stats called on a nil *Scheduler",
			Call: func(t *testing.T) error { s.Stats(); return nil }},
		{Name: "Scheduler.Snapshot", Panic: "cron: Snapshot called on a nil *Scheduler",
			Call: func(t *testing.T) error { return s.Snapshot(new(bytes.Buffer)) }},
		{Name: "Scheduler.Restore", Panic: "cron: Restore called on a nil *Scheduler",
			Call: func(t *testing.T) error { return s.Restore(new(bytes.Buffer)) }},
		{Name: "Scheduler.Update", Panic: "cron: Update called on a nil *Scheduler",
			Call: func(t *testing.T) error { _, err := s.Update("x", "@every 1m"); return err }},
		{Name: "Scheduler.UpdateSchedule", Panic: "cron: UpdateSchedule called on a nil *Scheduler",
			Call: func(t *testing.T) error { _, err := s.UpdateSchedule("x", cron.At(jan1)); return err }},
		{Name: "Scheduler.RunNow", Panic: "cron: RunNow called on a nil *Scheduler",
			Call: func(t *testing.T) error { return s.RunNow("x") }},
		{Name: "Job.NextRuns", Panic: "cron: NextRuns called on a nil *Job",
			Call: func(t *testing.T) error { j.NextRuns(1); return nil }},
		{Name: "Job.Name", Panic: "cron: Name called on a nil *Job",
			Call: func(t *testing.T) error { j.Name(); return nil }},
		{Name: "Job.Location", Panic: "cron: Location called on a nil *Job",
			Call: func(t *testing.T) error { j.Location(); return nil }},
		{Name: "Job.Next", Panic: "cron: Next called on a nil *Job",
			Call: func(t *testing.T) error { j.Next(); return nil }},
		{Name: "Job.Stats", Panic: "cron: Stats called on a nil *Job",
			Call: func(t *testing.T) error { j.Stats(); return nil }},
	})
}

// restoreAfter takes a snapshot of a scheduler, does end, and restores it.
func restoreAfter(end func(f *fixture)) func(t *testing.T) error {
	return func(t *testing.T) error {
		f := newFixture(t, jan1)
		var buf bytes.Buffer
		f.s.Snapshot(&buf)
		end(f)
		return f.s.Restore(&buf)
	}
}

// Stop twice, and every method after Stop or on a closed wheel.
func TestMisuseAfterStop(t *testing.T) {
	misusetest.Run(t, []misusetest.Case{
		{Name: "Stop twice", Call: func(t *testing.T) error {
			f := newFixture(t, jan1)
			f.s.Stop(context.Background())
			return f.s.Stop(context.Background())
		}},
		{Name: "Add after Stop", Is: cron.ErrStopped, Msg: `cron: scheduler stopped (job "late")`,
			Call: func(t *testing.T) error {
				f := newFixture(t, jan1)
				f.s.Stop(context.Background())
				_, err := f.s.Add("late", "@every 1m", nop)
				return err
			}},
		{Name: "AddSchedule after Stop", Is: cron.ErrStopped, Msg: `cron: scheduler stopped (job "late")`,
			Call: func(t *testing.T) error {
				f := newFixture(t, jan1)
				f.s.Stop(context.Background())
				_, err := f.s.AddSchedule("late", scheduleFunc(func(t time.Time) time.Time { return t.Add(time.Hour) }), nop)
				return err
			}},
		{Name: "Restore after Stop", Is: cron.ErrStopped, Msg: "cron: scheduler stopped",
			Call: restoreAfter(func(f *fixture) { f.s.Stop(context.Background()) })},
		{Name: "Snapshot, Remove, Next and Stats after Stop", Call: func(t *testing.T) error {
			f := newFixture(t, jan1)
			j, _ := f.s.Add("job", "@every 1m", nop)
			f.clk.Advance(time.Minute)
			f.s.Stop(context.Background())
			if !j.Next().IsZero() || j.Stats().Runs != 1 || f.s.Stats().Runs != 1 {
				t.Errorf("after Stop: next %v, %+v", j.Next(), j.Stats())
			}
			var buf bytes.Buffer
			if err := f.s.Snapshot(&buf); err != nil {
				return err
			}
			if !f.s.Remove("job") {
				t.Error("Remove after Stop found no job")
			}
			return nil
		}},
		{Name: "Add on a closed wheel", Is: timewheel.ErrClosed,
			Msg: `cron: scheduler stopped: timewheel: wheel closed (job "late")`,
			Call: func(t *testing.T) error {
				f := newFixture(t, jan1)
				f.w.Close()
				_, err := f.s.Add("late", "@every 1m", nop)
				if !errors.Is(err, cron.ErrStopped) {
					t.Errorf("Add on a closed wheel: %v does not wrap ErrStopped", err)
				}
				return err
			}},
		{Name: "Next on a closed wheel", Call: func(t *testing.T) error {
			f := newFixture(t, jan1)
			j, err := f.s.Add("job", "@every 1m", nop)
			f.w.Close()
			if !j.Next().IsZero() {
				t.Errorf("Next = %v on a closed wheel, a run that never comes", j.Next())
			}
			return err
		}},
		{Name: "Restore on a closed wheel", Is: timewheel.ErrClosed, Msg: "cron: scheduler stopped: timewheel: wheel closed",
			Call: restoreAfter(func(f *fixture) { f.w.Close() })},
	})
}

// Durations and policies at their extremes.
func TestMisuseExtremes(t *testing.T) {
	f := newFixture(t, jan1)
	add := func(spec string) func(t *testing.T) error {
		return func(t *testing.T) error {
			_, err := f.s.Add("x", spec, nop)
			f.s.Remove("x")
			return err
		}
	}
	misusetest.Run(t, []misusetest.Case{
		{Name: "@every 0s", Is: cron.ErrSpec, Msg: `cron: invalid spec "@every 0s": the duration must be positive (job "x")`, Call: add("@every 0s")},
		{Name: "@every -1s", Is: cron.ErrSpec, Msg: `cron: invalid spec "@every -1s": the duration must be positive (job "x")`, Call: add("@every -1s")},
		{Name: "@every min", Is: cron.ErrSpec, Msg: `cron: invalid spec "@every -2562047h47m16.854775808s": the duration must be positive (job "x")`,
			Call: add("@every " + time.Duration(math.MinInt64).String())},
		{Name: "@every past max", Is: cron.ErrSpec, Msg: `cron: invalid spec "@every 2562048h": time: invalid duration "2562048h" (job "x")`, Call: add("@every 2562048h")},
		{Name: "@every alone", Is: cron.ErrSpec, Msg: `cron: invalid spec "@every": @every takes one duration, such as "@every 1h30m" (job "x")`, Call: add("@every")},
		{Name: "@every twice", Is: cron.ErrSpec, Msg: `cron: invalid spec "@every 1s 2s": @every takes one duration, such as "@every 1h30m" (job "x")`, Call: add("@every 1s 2s")},
		{Name: "@every no unit", Is: cron.ErrSpec, Msg: `cron: invalid spec "@every 5": time: missing unit in duration "5" (job "x")`, Call: add("@every 5")},
		{Name: "@every max", Is: cron.ErrNever, Msg: `cron: schedule never fires (job "x")`, Call: add("@every " + time.Duration(math.MaxInt64).String())},
		{Name: "WithClaimTimeout(0)", Panic: "cron: WithClaimTimeout called with non-positive timeout 0s",
			Call: func(t *testing.T) error { cron.WithClaimTimeout(0); return nil }},
		{Name: "WithClaimTimeout(min)", Panic: "cron: WithClaimTimeout called with non-positive timeout -2562047h47m16.854775808s",
			Call: func(t *testing.T) error { cron.WithClaimTimeout(math.MinInt64); return nil }},
		{Name: "WithClaimTimeout(max)", Call: func(t *testing.T) error { cron.WithClaimTimeout(math.MaxInt64); return nil }},
		{Name: "WithOverlap(9)", Panic: "cron: WithOverlap called with unknown policy Overlap(9); use Skip, Queue or Allow",
			Call: func(t *testing.T) error { cron.WithOverlap(9); return nil }},
		{Name: "WithClaimPolicy(9)", Panic: "cron: WithClaimPolicy called with unknown policy ClaimPolicy(9); use AtMostOnce or AtLeastOnce",
			Call: func(t *testing.T) error { cron.WithClaimPolicy(9); return nil }},
		{Name: "OnClaimFailure(9)", Panic: "cron: OnClaimFailure called with unknown policy ClaimPolicy(9); use AtMostOnce or AtLeastOnce",
			Call: func(t *testing.T) error { cron.OnClaimFailure(9); return nil }},
		{Name: "WithWallClockCheck(-1s)", Panic: "cron: WithWallClockCheck: negative period -1s",
			Call: func(t *testing.T) error { cron.WithWallClockCheck(-time.Second); return nil }},
		{Name: "OnMissed(9)", Panic: "cron: OnMissed called with unknown policy Missed(9); use RunOnce, SkipMissed or RunAll",
			Call: func(t *testing.T) error { cron.OnMissed(9); return nil }},
		{Name: "WithGrace(-1s)", Panic: "cron: WithGrace: negative grace period -1s",
			Call: func(t *testing.T) error { cron.WithGrace(-time.Second); return nil }},
		{Name: "WithJitter(-1s)", Panic: "cron: WithJitter: negative jitter -1s",
			Call: func(t *testing.T) error { cron.WithJitter(-time.Second); return nil }},
		{Name: "WithLimitRuns(-1)", Panic: "cron: WithLimitRuns: negative limit -1",
			Call: func(t *testing.T) error { cron.WithLimitRuns(-1); return nil }},
		{Name: "WithLimitRuns(0) is no limit", Call: func(t *testing.T) error {
			g := newFixture(t, jan1)
			g.add("j", "@every 1m", cron.WithLimitRuns(0))
			g.clk.Advance(10 * time.Minute)
			if st := g.s.Stats(); st.Runs != 10 {
				return fmt.Errorf("%d runs in 10 minutes, want 10", st.Runs)
			}
			return nil
		}},
		{Name: "WithLogger(nil)", Panic: "cron: WithLogger: nil logger",
			Call: func(t *testing.T) error { cron.WithLogger(nil); return nil }},
		{Name: "WithStartAt(zero)", Panic: "cron: WithStartAt: zero time",
			Call: func(t *testing.T) error { cron.WithStartAt(time.Time{}); return nil }},
		{Name: "WithStopAt(zero)", Panic: "cron: WithStopAt: zero time",
			Call: func(t *testing.T) error { cron.WithStopAt(time.Time{}); return nil }},
		{Name: "OnSkippedTime(9)", Panic: "cron: OnSkippedTime called with unknown rule SkippedTime(9); use RunAtChange or SkipSkipped",
			Call: func(t *testing.T) error { cron.OnSkippedTime(9); return nil }},
		{Name: "WithConcurrencyLimit(-1)", Panic: "cron: WithConcurrencyLimit: negative limit -1",
			Call: func(t *testing.T) error { cron.WithConcurrencyLimit(-1, cron.LimitWait); return nil }},
		{Name: "WithConcurrencyLimit(0) is no bound", Call: func(t *testing.T) error {
			g := newFixture(t, jan1, cron.WithConcurrencyLimit(0, cron.LimitSkip))
			g.add("j", "@every 1m")
			g.clk.Advance(10 * time.Minute)
			if st := g.s.Stats(); st.Runs != 10 || st.Limited != 0 {
				return fmt.Errorf("Stats %+v, want 10 runs and none limited", st)
			}
			return nil
		}},
		{Name: "WithConcurrencyLimit mode 9", Panic: "cron: WithConcurrencyLimit called with unknown mode LimitMode(9); use LimitWait or LimitSkip",
			Call: func(t *testing.T) error { cron.WithConcurrencyLimit(1, 9); return nil }},
		{Name: "Returning(nil)", Panic: "cron: Returning: nil func",
			Call: func(t *testing.T) error { cron.Returning(nil); return nil }},
		{Name: "NextRuns(-1)", Panic: "cron: NextRuns called with negative count -1",
			Call: func(t *testing.T) error {
				j, err := f.s.Add("n", "@every 1h", nop)
				defer f.s.Remove("n")
				if err == nil {
					j.NextRuns(-1)
				}
				return err
			}},
		{Name: "UpdateSchedule(nil)", Panic: `cron: UpdateSchedule: nil schedule for job "x"`,
			Call: func(t *testing.T) error { _, err := f.s.UpdateSchedule("x", nil); return err }},
		{Name: "@at alone", Is: cron.ErrSpec, Msg: `cron: invalid spec "@at": @at takes one RFC 3339 time, such as "@at 2026-03-01T09:00:00+01:00" (job "x")`, Call: add("@at")},
		{Name: "String of unknown rules", Call: func(t *testing.T) error {
			if a, b, c := cron.Missed(9).String(), cron.SkippedTime(9).String(), cron.LimitMode(9).String(); a != "Missed(9)" || b != "SkippedTime(9)" || c != "LimitMode(9)" {
				t.Errorf("unknown rules print as %q, %q and %q", a, b, c)
			}
			return nil
		}},
		{Name: "String of unknown policies", Call: func(t *testing.T) error {
			if o, c := cron.Overlap(9).String(), cron.ClaimPolicy(9).String(); o != "Overlap(9)" || c != "ClaimPolicy(9)" {
				t.Errorf("unknown policies print as %q and %q", o, c)
			}
			return nil
		}},
		{Name: `InZone("")`, Call: func(t *testing.T) error {
			// time.LoadLocation("") is UTC; the scheduler's zone is another.
			f := newFixture(t, jan1, cron.WithLocation(zone(t, "Asia/Tokyo")))
			j, err := f.s.Add("x", "0 9 * * *", nop, cron.InZone(""))
			if err == nil && (j.Location() != time.UTC || !j.Next().Equal(jan1.Add(9*time.Hour))) {
				t.Errorf(`InZone(""): in %v, next %v; want UTC, as time.LoadLocation("")`, j.Location(), j.Next())
			}
			return err
		}},
		{Name: "CRON_TZ= with no zone", Call: func(t *testing.T) error {
			f := newFixture(t, jan1, cron.WithLocation(zone(t, "Asia/Tokyo")))
			j, err := f.s.Add("x", "CRON_TZ= 0 9 * * *", nop)
			if err == nil && (j.Location() != time.UTC || !j.Next().Equal(jan1.Add(9*time.Hour))) {
				t.Errorf(`"CRON_TZ= ": in %v, next %v; want UTC, as time.LoadLocation("")`, j.Location(), j.Next())
			}
			return err
		}},
		{Name: `InZone("") and CRON_TZ=`, Is: cron.ErrSpec,
			Msg: `cron: invalid spec "CRON_TZ=Asia/Tokyo 0 9 * * *": it names time zone "Asia/Tokyo" and another zone was given (job "x")`,
			Call: func(t *testing.T) error {
				_, err := f.s.Add("x", "CRON_TZ=Asia/Tokyo 0 9 * * *", nop, cron.InZone(""))
				return err
			}},
	})
}

// @every takes any positive duration, sub-second too, on an exact grid
// from the time the job is added; each run fires at the first tick of the
// wheel at or after its instant, so a period shorter than the tick runs
// at most once a tick, on grid instants.
func TestEverySubSecond(t *testing.T) {
	start := jan1.Add(123456789 * time.Nanosecond) // off every grid
	for _, tc := range []struct {
		spec  string
		until time.Duration
		at    []time.Duration // the runs' instants, after start
	}{
		{"@every 1500ms", 6 * time.Second, []time.Duration{1500 * time.Millisecond, 3 * time.Second, 4500 * time.Millisecond, 6 * time.Second}},
		{"@every 100ms", 350 * time.Millisecond, []time.Duration{100 * time.Millisecond, 200 * time.Millisecond, 300 * time.Millisecond}},
		{"@every 1.25s", 5 * time.Second, []time.Duration{1250 * time.Millisecond, 2500 * time.Millisecond, 3750 * time.Millisecond, 5 * time.Second}},
		// The wheel's tick is 1ms, counted from the wheel's creation at
		// start: 400µs, 800µs fire at the first tick, and the next run
		// is the first grid instant after it.
		{"@every 400us", 3 * time.Millisecond, []time.Duration{400 * time.Microsecond, 1200 * time.Microsecond, 2400 * time.Microsecond}},
		{"@every 1ns", 2 * time.Millisecond, []time.Duration{time.Nanosecond, time.Millisecond + time.Nanosecond}},
	} {
		t.Run(tc.spec, func(t *testing.T) {
			f := newFixture(t, start)
			r := &recorder{clk: f.clk}
			if _, err := f.s.Add("every", tc.spec, r.run); err != nil {
				t.Fatal(err)
			}
			f.clk.AdvanceTo(start.Add(tc.until))
			var want []time.Time
			for _, d := range tc.at {
				want = append(want, start.Add(d))
			}
			wantTimes(t, tc.spec, r.take(), want)
		})
	}
}

// Stop called on a run's goroutine does not wait, since the run it would
// wait for could be its caller: it stops the scheduler, cancels the runs'
// context and returns at once, an error wrapping ErrInRun with the runs
// still going, the caller's included. A Stop from outside waits for them.
func TestStopFromJob(t *testing.T) {
	for _, tc := range []struct {
		name   string
		inline bool
		jobs   int // jobs that call Stop, running at once
		msg    string
	}{
		{"goroutine", false, 1, "cron: Stop called from a run, which it cannot wait for: 1 runs still going"},
		{"inline", true, 1, "cron: Stop called from a run, which it cannot wait for: 1 runs still going"},
		{"two jobs at once", false, 2, "cron: Stop called from a run, which it cannot wait for: 2 runs still going"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f := newGoroutineFixture(t, jan1)
				if tc.inline {
					f = newFixture(t, jan1)
				}
				var running, stopping sync.WaitGroup
				running.Add(tc.jobs)
				stopping.Add(tc.jobs)
				stopped := make(chan error, tc.jobs)
				for i := range tc.jobs {
					f.s.Add(fmt.Sprint("stopper", i), "@every 1m", func(ctx context.Context, _ time.Time) {
						running.Done()
						running.Wait() // every stopper is running
						stopped <- f.s.Stop(context.Background())
						stopping.Done()
						stopping.Wait() // every stopper has stopped
						if ctx.Err() == nil {
							t.Error("a run that called Stop: its context is not done")
						}
					})
				}
				go f.clk.Advance(time.Minute)
				synctest.Wait()
				if len(stopped) != tc.jobs {
					t.Fatalf("%d of %d Stops called from jobs returned", len(stopped), tc.jobs)
				}
				for range tc.jobs {
					misusetest.Check(t, misusetest.Case{Name: "Stop from a job", Is: cron.ErrInRun, Msg: tc.msg,
						Call: func(*testing.T) error { return <-stopped }})
				}
				if err := f.s.Stop(context.Background()); err != nil {
					t.Errorf("Stop after: %v", err)
				}
				if st := f.s.Stats(); st.Runs != tc.jobs || st.Running != 0 {
					t.Errorf("after Stop from outside: %+v", st)
				}
			})
		})
	}
}

// Stop from the panic handler, from a Claimer's Claim and from the claim
// error handler, all on the run's goroutine, returns at once; so does a
// Stop of another scheduler from a job, nil if that scheduler has no run
// going.
func TestStopFromCallbacks(t *testing.T) {
	inRun := "cron: Stop called from a run, which it cannot wait for: 1 runs still going"
	for _, tc := range []struct {
		name  string
		opts  func(s **cron.Scheduler, result chan error) []cron.Option
		job   func(s **cron.Scheduler, result chan error) cron.Func
		is    error
		msg   string
		after cron.Stats // the scheduler's, once stopped from outside
	}{
		{"panic handler", func(s **cron.Scheduler, result chan error) []cron.Option {
			return []cron.Option{cron.WithPanicHandler(func(string, any) { result <- (*s).Stop(context.Background()) })}
		}, func(**cron.Scheduler, chan error) cron.Func {
			return func(context.Context, time.Time) { panic("boom") }
		}, cron.ErrInRun, inRun, cron.Stats{Runs: 1, Panics: 1}},
		{"Claim", func(s **cron.Scheduler, result chan error) []cron.Option {
			return []cron.Option{cron.WithClaimer(claimFunc(func(context.Context, string, time.Time) (bool, error) {
				result <- (*s).Stop(context.Background())
				return true, nil
			}))}
		}, noJob, cron.ErrInRun, inRun, cron.Stats{Runs: 1}},
		{"claim error handler", func(s **cron.Scheduler, result chan error) []cron.Option {
			return []cron.Option{cron.WithClaimer(claimFunc(func(context.Context, string, time.Time) (bool, error) { return false, errDown })),
				cron.WithClaimErrorHandler(func(string, time.Time, error) { result <- (*s).Stop(context.Background()) })}
		}, noJob, cron.ErrInRun, inRun, cron.Stats{ClaimErrors: 1}},
		{"another scheduler, idle", nil, func(s **cron.Scheduler, result chan error) cron.Func {
			return func(context.Context, time.Time) {
				other := cron.New(cron.WithWheel(timewheel.New(timewheel.WithClock(clock.NewVirtual(jan1)))))
				result <- other.Stop(context.Background())
			}
		}, nil, "", cron.Stats{Runs: 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var s *cron.Scheduler
				result := make(chan error, 1)
				var opts []cron.Option
				if tc.opts != nil {
					opts = tc.opts(&s, result)
				}
				f := newGoroutineFixture(t, jan1, opts...)
				s = f.s
				f.s.Add("job", "@every 1m", tc.job(&s, result))
				f.clk.Advance(time.Minute)
				synctest.Wait()
				select {
				case err := <-result:
					misusetest.Check(t, misusetest.Case{Name: "Stop", Is: tc.is, Msg: tc.msg, Call: func(*testing.T) error { return err }})
				default:
					t.Fatal("Stop did not return")
				}
				if err := f.s.Stop(context.Background()); err != nil {
					t.Errorf("Stop from outside: %v", err)
				}
				if st := f.s.Stats().Stats; st != tc.after {
					t.Errorf("stats %+v, want %+v", st, tc.after)
				}
			})
		})
	}
}

func noJob(**cron.Scheduler, chan error) cron.Func { return nop }

type claimFunc func(ctx context.Context, job string, at time.Time) (bool, error)

func (f claimFunc) Claim(ctx context.Context, job string, at time.Time) (bool, error) {
	return f(ctx, job, at)
}

// A Claim or a Schedule's Next that panics, called for a run, is
// recovered as a panicking job is: the panic goes to the panic handler
// and the scheduler goes on, inline and on goroutines alike. Both used to
// panic out of the wheel's executor, or end the process from a run's
// goroutine.
func TestMisusePanicsOfUserCode(t *testing.T) {
	for _, inline := range []bool{true, false} {
		newF := newGoroutineFixture
		if inline {
			newF = newFixture
		}
		rec := &panicRecorder{}
		handler := rec.option()
		// flaky is a Claimer whose first Claim panics.
		flaky := func() cron.Option {
			var n atomic.Int32
			return cron.WithClaimer(claimFunc(func(context.Context, string, time.Time) (bool, error) {
				if n.Add(1) == 1 {
					panic("claim boom")
				}
				return true, nil
			}))
		}
		// check stops f, waiting for its runs, and checks the job's stats
		// and what the panic handler got.
		check := func(t *testing.T, f *fixture, j *cron.Job, st cron.Stats, want ...string) {
			t.Helper()
			if err := f.s.Stop(context.Background()); err != nil {
				t.Error(err)
			}
			if got := j.Stats(); got != st {
				t.Errorf("stats %+v, want %+v", got, st)
			}
			if panics := rec.take(); fmt.Sprint(panics) != fmt.Sprint(want) {
				t.Errorf("panic handler got %q, want %q", panics, want)
			}
		}
		mode := fmt.Sprint("inline=", inline, " ")
		misusetest.Run(t, []misusetest.Case{
			{Name: mode + "Claim panics, at most once: the run is skipped, the next one runs", Call: func(t *testing.T) error {
				f := newF(t, jan1, handler, flaky())
				// Allow: on goroutines, the first run may still be going.
				j, err := f.s.Add("job", "@every 1m", nop, cron.WithOverlap(cron.Allow))
				f.clk.Advance(2 * time.Minute)
				check(t, f, j, cron.Stats{Runs: 1, ClaimErrors: 1}, "job: claim boom")
				return err
			}},
			{Name: mode + "Claim panics, at least once: the run goes ahead", Call: func(t *testing.T) error {
				f := newF(t, jan1, handler, flaky(), cron.WithClaimPolicy(cron.AtLeastOnce))
				// Allow: on goroutines, the first run may still be going.
				j, err := f.s.Add("job", "@every 1m", nop, cron.WithOverlap(cron.Allow))
				f.clk.Advance(2 * time.Minute)
				check(t, f, j, cron.Stats{Runs: 2, ClaimErrors: 1}, "job: claim boom")
				return err
			}},
			{Name: mode + "Next panics after a run: the run goes ahead, the job's runs end", Call: func(t *testing.T) error {
				f := newF(t, jan1, handler)
				k := 0
				j, err := f.s.AddSchedule("p", nextPanicsAfterFirst(&k), nop)
				f.clk.Advance(5 * time.Minute)
				if !j.Next().IsZero() || k != 2 {
					t.Errorf("after Next panicked: Next %v, Next called %d times", j.Next(), k)
				}
				check(t, f, j, cron.Stats{Runs: 1}, "p: next boom")
				return err
			}},
		})
	}
	misusetest.Run(t, []misusetest.Case{
		{Name: "Next panics in AddSchedule: the caller gets the panic, no job is added", Panic: "next boom",
			Call: func(t *testing.T) error {
				f := newFixture(t, jan1)
				defer func() {
					if _, ok := f.s.Job("p"); ok {
						t.Error("a job whose Next panicked in AddSchedule was added")
					}
				}()
				_, err := f.s.AddSchedule("p", scheduleFunc(func(time.Time) time.Time { panic("next boom") }), nop)
				return err
			}},
		{Name: "no panic handler: the panics are logged", Call: func(t *testing.T) error {
			var buf bytes.Buffer
			f := newGoroutineFixture(t, jan1, cron.WithLogger(slog.New(slog.NewTextHandler(&buf, nil))),
				cron.WithClaimer(claimFunc(func(context.Context, string, time.Time) (bool, error) { panic("claim boom") })))
			k := 0
			_, err := f.s.AddSchedule("p", nextPanicsAfterFirst(&k), nop)
			f.clk.Advance(time.Minute)
			f.s.Stop(context.Background())
			for _, want := range []string{`msg="cron: Claim panicked" job=p panic="claim boom"`, `msg="cron: Schedule.Next panicked" job=p panic="next boom"`} {
				if !strings.Contains(buf.String(), want) {
					t.Errorf("log lacks %s:\n%s", want, buf.String())
				}
			}
			return err
		}},
	})
}

// A job and a Schedule may call the scheduler's methods: Remove itself,
// add a job, read its Next, Stats, Jobs, take a snapshot.
func TestCallbacksCallBack(t *testing.T) {
	f := newFixture(t, jan1)
	var calls []string
	j, _ := f.s.Add("once", "@every 1m", func(context.Context, time.Time) {
		j, _ := f.s.Job("once")
		var buf bytes.Buffer
		err := f.s.Snapshot(&buf)
		calls = append(calls, fmt.Sprint(j.Next().Sub(jan1), " ", j.Stats().Runs, " ", len(f.s.Jobs()), " ", err, " ", f.s.Remove("once")))
		if _, err := f.s.Add("later", "@every 1h", nop); err != nil {
			t.Error(err)
		}
	})
	peek := scheduleFunc(func(t time.Time) time.Time {
		calls = append(calls, fmt.Sprint("Next sees ", len(f.s.Jobs()), " jobs, ", f.s.Stats().Runs, " runs"))
		return t.Add(90 * time.Second)
	})
	done := make(chan struct{})
	go func() {
		defer close(done)
		f.s.AddSchedule("peek", peek, nop)
		f.clk.Advance(2 * time.Minute)
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second): // a watchdog: a deadlock fails here, never a slow machine
		t.Fatal("a Schedule's Next that calls the scheduler deadlocked")
	}
	if got, want := strings.Join(calls, "; "), "Next sees 1 jobs, 0 runs; 2m0s 0 2 <nil> true; Next sees 2 jobs, 1 runs"; got != want {
		t.Errorf("calls: %q, want %q", got, want)
	}
	if !j.Next().IsZero() || len(f.s.Jobs()) != 2 {
		t.Errorf("after the job removed itself: next %v, jobs %d", j.Next(), len(f.s.Jobs()))
	}
}

// nextPanicsAfterFirst is a schedule of one run a minute after it is
// added, whose Next panics "next boom" from its second call on; *k counts
// the calls.
func nextPanicsAfterFirst(k *int) cron.Schedule {
	return scheduleFunc(func(t time.Time) time.Time {
		if *k++; *k > 1 {
			panic("next boom")
		}
		return t.Add(time.Minute)
	})
}
