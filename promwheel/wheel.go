package promwheel

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/timewheel/timewheel"
)

// NewWheelCollector returns a collector of w's [timewheel.Stats], its
// metrics labelled wheel=name:
//
//	timewheel_timers_pending                   gauge
//	timewheel_timers_started_total             counter
//	timewheel_timers_stopped_total             counter
//	timewheel_timers_reset_total               counter
//	timewheel_timers_lazy_reset_total          counter
//	timewheel_timers_fired_total               counter
//	timewheel_timers_collected_total           counter
//	timewheel_timers_discarded_total           counter
//	timewheel_driver_wakeups_total             counter
//	timewheel_driver_empty_wakeups_total       counter
//	timewheel_fire_lateness_seconds            histogram
//	timewheel_shards                           gauge
//	timewheel_executor_queued_callbacks        gauge
//	timewheel_executor_running_callbacks       gauge
//	timewheel_executor_workers_max             gauge
//	timewheel_executor_submitted_callbacks_total counter
//
// The executor's metrics are sent only for a wheel that runs its
// callbacks on its own pool. The lateness histogram's buckets are the
// wheel's (see [timewheel.Lateness]): powers of two of its tick, so that
// wheels with the same tick aggregate; a bucket's le bound is exclusive
// there, which only matters for a fire late by exactly a power of two of
// the tick.
//
// A closed wheel is collected as well: its Stats stay readable. It panics
// if w is nil or a zero Wheel, at once rather than at the first scrape.
func NewWheelCollector(name string, w *timewheel.Wheel) prometheus.Collector {
	if w == nil {
		panic(fmt.Sprintf("promwheel: NewWheelCollector called with a nil wheel for %q", name))
	}
	w.Stats() // a zero Wheel panics here, naming the method
	t := &table[timewheel.Stats]{label: "wheel", name: name}
	t.gauge("timewheel_timers_pending", "Timers and tickers pending on the wheel.",
		func(s *timewheel.Stats) float64 { return float64(s.Pending) })
	t.counter("timewheel_timers_started_total", "Timers and tickers started (AfterFunc, NewTimer, NewTicker, After, Tick, Sleep).",
		func(s *timewheel.Stats) float64 { return float64(s.Started) })
	t.counter("timewheel_timers_stopped_total", "Stop calls that took a pending timer or ticker off the wheel.",
		func(s *timewheel.Stats) float64 { return float64(s.Stopped) })
	t.counter("timewheel_timers_reset_total", "Reset calls of timers and tickers, lazy ones included.",
		func(s *timewheel.Stats) float64 { return float64(s.Reset) })
	t.counter("timewheel_timers_lazy_reset_total", "Resets that moved a pending deadline later without a lock; the driver files each such timer again at its old deadline.",
		func(s *timewheel.Stats) float64 { return float64(s.LazyResets) })
	t.counter("timewheel_timers_fired_total", "Timers fired and ticker ticks sent.",
		func(s *timewheel.Stats) float64 { return float64(s.Fired) })
	t.counter("timewheel_timers_collected_total", "Channel timers and tickers removed because nothing referenced them any more.",
		func(s *timewheel.Stats) float64 { return float64(s.Collected) })
	t.counter("timewheel_timers_discarded_total", "Pending timers dropped by Close.",
		func(s *timewheel.Stats) float64 { return float64(s.Discarded) })
	t.counter("timewheel_driver_wakeups_total", "Times the driver woke to fire due timers.",
		func(s *timewheel.Stats) float64 { return float64(s.Wakeups) })
	t.counter("timewheel_driver_empty_wakeups_total", "Driver wakeups at which nothing was due (lazily reset timers filed again, coarse slots moved down).",
		func(s *timewheel.Stats) float64 { return float64(s.EmptyWakeups) })
	t.gauge("timewheel_shards", "Shards of the wheel, each with its own lock.",
		func(s *timewheel.Stats) float64 { return float64(s.Shards) })

	lateness := t.desc("timewheel_fire_lateness_seconds", "How late timers fired after their deadline tick, by the driver's clock reading at the wake that fired them.")
	pool := &table[timewheel.Stats]{label: "wheel", name: name}
	pool.gauge("timewheel_executor_queued_callbacks", "Callbacks waiting in the wheel's pool for a worker.",
		func(s *timewheel.Stats) float64 { return float64(s.Executor.Queued) })
	pool.gauge("timewheel_executor_running_callbacks", "Workers of the wheel's pool running callbacks.",
		func(s *timewheel.Stats) float64 { return float64(s.Executor.Running) })
	pool.gauge("timewheel_executor_workers_max", "The most workers the wheel's pool runs at once.",
		func(s *timewheel.Stats) float64 { return float64(s.Executor.Limit) })
	pool.counter("timewheel_executor_submitted_callbacks_total", "Callbacks handed to the wheel's pool.",
		func(s *timewheel.Stats) float64 { return float64(s.Executor.Submitted) })

	c := &collector[timewheel.Stats]{stats: w.Stats, metrics: t.metrics, descs: []*prometheus.Desc{lateness}}
	for _, m := range pool.metrics {
		c.descs = append(c.descs, m.desc)
	}
	c.extra = func(s *timewheel.Stats, ch chan<- prometheus.Metric) {
		ch <- latenessHistogram(lateness, s.Lateness)
		if s.Executor.Limit > 0 {
			for _, m := range pool.metrics {
				ch <- prometheus.MustNewConstMetric(m.desc, m.typ, m.value(s))
			}
		}
	}
	return c
}

// latenessHistogram returns l as a Prometheus histogram: cumulative
// counts at each bound, in seconds.
func latenessHistogram(d *prometheus.Desc, l timewheel.Lateness) prometheus.Metric {
	buckets := make(map[float64]uint64, timewheel.LatenessBuckets-1)
	var n uint64
	for i, b := range l.Bounds() {
		n += l.Counts[i]
		buckets[b.Seconds()] = n
	}
	return prometheus.MustNewConstHistogram(d, l.Count(), l.Sum.Seconds(), buckets)
}
