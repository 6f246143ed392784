package promwheel

import (
	"fmt"
	"reflect"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/timewheel/timewheel/cron"
	"github.com/timewheel/timewheel/expiry"
	"github.com/timewheel/timewheel/idleconn"
)

// ExpiryStatser is what NewExpiryCollector reads: any [expiry.Map], of
// whatever key and value types.
type ExpiryStatser interface {
	Stats() expiry.Stats
}

// NewExpiryCollector returns a collector of m's [expiry.Stats], its
// metrics labelled map=name:
//
//	timewheel_expiry_entries                  gauge
//	timewheel_expiry_buckets                  gauge
//	timewheel_expiry_hits_total               counter
//	timewheel_expiry_misses_total             counter
//	timewheel_expiry_evictions_total{reason}  counter: expired, deleted, replaced, capacity
//	timewheel_expiry_callback_backlog         gauge
//
// It panics if m is nil, or a nil pointer, at once rather than at the
// first scrape.
func NewExpiryCollector(name string, m ExpiryStatser) prometheus.Collector {
	if m == nil {
		panic(fmt.Sprintf("promwheel: NewExpiryCollector called with a nil map for %q", name))
	}
	if v := reflect.ValueOf(m); v.Kind() == reflect.Pointer && v.IsNil() {
		panic(fmt.Sprintf("promwheel: NewExpiryCollector called with a nil map for %q (a nil %T)", name, m))
	}
	t := &table[expiry.Stats]{label: "map", name: name}
	t.gauge("timewheel_expiry_entries", "Entries in the map, including those past their deadline whose bucket has not fired yet.",
		func(s *expiry.Stats) float64 { return float64(s.Entries) })
	t.gauge("timewheel_expiry_buckets", "Expiry buckets of the map, each one pending wheel timer.",
		func(s *expiry.Stats) float64 { return float64(s.Buckets) })
	t.counter("timewheel_expiry_hits_total", "Get calls that found a live entry.",
		func(s *expiry.Stats) float64 { return float64(s.Hits) })
	t.counter("timewheel_expiry_misses_total", "Get calls that found no live entry.",
		func(s *expiry.Stats) float64 { return float64(s.Misses) })
	t.byLabel(prometheus.CounterValue, "timewheel_expiry_evictions_total", "Entries that left the map, by reason.", "reason",
		map[string]func(*expiry.Stats) float64{
			expiry.Expired.String():  func(s *expiry.Stats) float64 { return float64(s.Expired) },
			expiry.Deleted.String():  func(s *expiry.Stats) float64 { return float64(s.Deleted) },
			expiry.Replaced.String(): func(s *expiry.Stats) float64 { return float64(s.Replaced) },
			expiry.Capacity.String(): func(s *expiry.Stats) float64 { return float64(s.Capacity) },
		})
	t.gauge("timewheel_expiry_callback_backlog", "Eviction callbacks queued and not yet started.",
		func(s *expiry.Stats) float64 { return float64(s.Backlog) })
	return &collector[expiry.Stats]{stats: m.Stats, metrics: t.metrics}
}

// NewCronCollector returns a collector of s's [cron.SchedulerStats], its
// metrics labelled scheduler=name:
//
//	timewheel_cron_jobs                 gauge
//	timewheel_cron_running_runs         gauge
//	timewheel_cron_runs_total           counter
//	timewheel_cron_panics_total         counter
//	timewheel_cron_skipped_runs_total   counter
//	timewheel_cron_late_runs_total      counter
//	timewheel_cron_claims_lost_total    counter
//	timewheel_cron_claim_errors_total   counter
//	timewheel_cron_errors_total         counter
//	timewheel_cron_missed_runs_total    counter
//	timewheel_cron_limited_runs_total   counter
//
// It panics if s is nil, at once rather than at the first scrape.
func NewCronCollector(name string, s *cron.Scheduler) prometheus.Collector {
	if s == nil {
		panic(fmt.Sprintf("promwheel: NewCronCollector called with a nil scheduler for %q", name))
	}
	t := &table[cron.SchedulerStats]{label: "scheduler", name: name}
	t.gauge("timewheel_cron_jobs", "Jobs of the scheduler.",
		func(s *cron.SchedulerStats) float64 { return float64(s.Jobs) })
	t.gauge("timewheel_cron_running_runs", "Runs in progress.",
		func(s *cron.SchedulerStats) float64 { return float64(s.Running) })
	t.counter("timewheel_cron_runs_total", "Runs that returned or panicked.",
		func(s *cron.SchedulerStats) float64 { return float64(s.Runs) })
	t.counter("timewheel_cron_panics_total", "Runs that panicked.",
		func(s *cron.SchedulerStats) float64 { return float64(s.Panics) })
	t.counter("timewheel_cron_skipped_runs_total", "Runs dropped because the job's previous run was still going (Skip policy).",
		func(s *cron.SchedulerStats) float64 { return float64(s.Skipped) })
	t.counter("timewheel_cron_late_runs_total", "Runs that started a second or more after the time they were scheduled for.",
		func(s *cron.SchedulerStats) float64 { return float64(s.Late) })
	t.counter("timewheel_cron_claims_lost_total", "Runs another replica claimed (with a Claimer): skipped here.",
		func(s *cron.SchedulerStats) float64 { return float64(s.ClaimsLost) })
	t.counter("timewheel_cron_claim_errors_total", "Claims that failed or timed out (with a Claimer); the ClaimPolicy decided whether the run went ahead.",
		func(s *cron.SchedulerStats) float64 { return float64(s.ClaimErrors) })
	t.counter("timewheel_cron_errors_total", "Runs that returned an error (jobs made with Returning).",
		func(s *cron.SchedulerStats) float64 { return float64(s.Errors) })
	t.counter("timewheel_cron_missed_runs_total", "Missed runs the OnMissed policy dropped, after a stall, a clock step or a Restore.",
		func(s *cron.SchedulerStats) float64 { return float64(s.Missed) })
	t.counter("timewheel_cron_limited_runs_total", "Runs dropped by the scheduler's concurrency limit (LimitSkip).",
		func(s *cron.SchedulerStats) float64 { return float64(s.Limited) })
	return &collector[cron.SchedulerStats]{stats: s.Stats, metrics: t.metrics}
}

// NewListenerCollector returns a collector of l's [idleconn.Stats], its
// metrics labelled listener=name:
//
//	timewheel_idleconn_accepted_total         counter
//	timewheel_idleconn_open_connections       gauge
//	timewheel_idleconn_closed_total{reason}   counter: close, idle
//
// A zero Listener's figures are zeros. It panics if l is nil, at once
// rather than at the first scrape.
func NewListenerCollector(name string, l *idleconn.Listener) prometheus.Collector {
	if l == nil {
		panic(fmt.Sprintf("promwheel: NewListenerCollector called with a nil listener for %q", name))
	}
	t := &table[idleconn.Stats]{label: "listener", name: name}
	t.counter("timewheel_idleconn_accepted_total", "Connections accepted.",
		func(s *idleconn.Stats) float64 { return float64(s.Accepted) })
	t.gauge("timewheel_idleconn_open_connections", "Accepted connections not closed yet.",
		func(s *idleconn.Stats) float64 { return float64(s.Open) })
	t.byLabel(prometheus.CounterValue, "timewheel_idleconn_closed_total", "Accepted connections closed, by Close or for idleness.", "reason",
		map[string]func(*idleconn.Stats) float64{
			"close": func(s *idleconn.Stats) float64 { return float64(s.Closed) },
			"idle":  func(s *idleconn.Stats) float64 { return float64(s.ClosedIdle) },
		})
	return &collector[idleconn.Stats]{stats: l.Stats, metrics: t.metrics}
}
