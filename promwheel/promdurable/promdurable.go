// Package promdurable exports a durable.Queue to Prometheus: its Stats
// (this replica's attempts) with NewCollector, and its Counts (the whole
// queue's jobs, read from Redis) with NewQueueCollector:
//
//	reg.MustRegister(promdurable.NewCollector("orders", q), promdurable.NewQueueCollector("orders", q))
//
// It is a package of its own in promwheel's module, so that only the
// programs that import it compile durable and its Redis client. Its
// metrics, labelled queue=name, follow promwheel's conventions:
//
//	timewheel_durable_scheduled_total        counter
//	timewheel_durable_claimed_total          counter
//	timewheel_durable_ran_total              counter
//	timewheel_durable_retried_total          counter
//	timewheel_durable_dead_total             counter
//	timewheel_durable_lease_lost_total       counter
//	timewheel_durable_running_attempts       gauge
//	timewheel_durable_late_attempts_total    counter, by le (seconds)
//
// The last counts the attempts whose handler started at most le seconds
// after the job came due, cumulatively, as a histogram's buckets do (the
// Stats keep no sum of lateness, so it is not a histogram); le="+Inf"
// counts every attempt.
//
// NewQueueCollector's gauges are the same on every replica, since each
// reads the one store; alert on max() of them, or register it in one
// process only:
//
//	timewheel_durable_jobs                   gauge, by state (pending, running, dead)
//	timewheel_durable_due_jobs               gauge: claimable now, not yet claimed
//	timewheel_durable_oldest_due_seconds     gauge: how long the earliest due job has waited
//	timewheel_durable_paused                 gauge, by kind: 1 while paused; kind="" is the whole queue
//
// A scrape that cannot read Redis within 5 s fails with the error, so
// that the target shows it instead of stale figures.
package promdurable

import (
	"context"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/timewheel/timewheel/durable"
)

// NewCollector returns a collector of q's Stats, read once per scrape,
// its metrics labelled queue=name. It panics on a nil q.
func NewCollector(name string, q *durable.Queue) prometheus.Collector {
	if q == nil {
		panic("promdurable: NewCollector: nil *durable.Queue")
	}
	c := &collector{q: q, name: name}
	for _, m := range counters {
		c.descs = append(c.descs, c.desc(m.name, m.help))
	}
	c.running = c.desc("timewheel_durable_running_attempts", "Attempts whose handler is running now.")
	c.late = c.desc("timewheel_durable_late_attempts_total", "Attempts whose handler started at most le seconds after the job came due.", "le")
	return c
}

// counters are the collector's counters, in the order of descs.
var counters = []struct {
	name, help string
	value      func(*durable.Stats) uint64
}{
	{"timewheel_durable_scheduled_total", "Jobs Schedule and ScheduleAfter added.", func(s *durable.Stats) uint64 { return s.Scheduled }},
	{"timewheel_durable_claimed_total", "Attempts this process's worker leased.", func(s *durable.Stats) uint64 { return s.Claimed }},
	{"timewheel_durable_ran_total", "Attempts that returned nil and were deleted from the store.", func(s *durable.Stats) uint64 { return s.Ran }},
	{"timewheel_durable_retried_total", "Attempts that failed and left the job due again.", func(s *durable.Stats) uint64 { return s.Retried }},
	{"timewheel_durable_dead_total", "Attempts that failed the job's last attempt: the job is kept dead.", func(s *durable.Stats) uint64 { return s.Dead }},
	{"timewheel_durable_lease_lost_total", "Attempts whose lease had gone when they renewed or ended.", func(s *durable.Stats) uint64 { return s.LeaseLost }},
}

type collector struct {
	q             *durable.Queue
	name          string
	descs         []*prometheus.Desc
	running, late *prometheus.Desc
}

func (c *collector) desc(name, help string, variable ...string) *prometheus.Desc {
	return prometheus.NewDesc(name, help, variable, prometheus.Labels{"queue": c.name})
}

// Describe sends the descriptions of the collector's metrics.
func (c *collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range c.descs {
		ch <- d
	}
	ch <- c.running
	ch <- c.late
}

// Collect reads the queue's Stats once and sends every metric.
func (c *collector) Collect(ch chan<- prometheus.Metric) {
	st := c.q.Stats()
	for i, m := range counters {
		ch <- prometheus.MustNewConstMetric(c.descs[i], prometheus.CounterValue, float64(m.value(&st)))
	}
	ch <- prometheus.MustNewConstMetric(c.running, prometheus.GaugeValue, float64(st.Running))
	var seen uint64
	bounds := durable.LatenessBounds()
	for i, n := range st.Lateness {
		seen += n
		le := "+Inf"
		if i < len(bounds) {
			le = strconv.FormatFloat(bounds[i].Seconds(), 'g', -1, 64)
		}
		ch <- prometheus.MustNewConstMetric(c.late, prometheus.CounterValue, float64(seen), le)
	}
}

// queueTimeout bounds a scrape's read of the queue's figures.
const queueTimeout = 5 * time.Second

// NewQueueCollector returns a collector of q's queue-wide figures
// (durable.Queue.Counts and Paused), read from Redis once per scrape,
// its metrics labelled queue=name. A scrape costs two round trips,
// O(log n) in the jobs held. It panics on a nil q.
func NewQueueCollector(name string, q *durable.Queue) prometheus.Collector {
	if q == nil {
		panic("promdurable: NewQueueCollector: nil *durable.Queue")
	}
	c := &queueCollector{q: q}
	l := prometheus.Labels{"queue": name}
	c.jobs = prometheus.NewDesc("timewheel_durable_jobs", "Jobs in the queue's store, by state: pending, running or dead.", []string{"state"}, l)
	c.due = prometheus.NewDesc("timewheel_durable_due_jobs", "Jobs a worker may claim now and none has: pending ones due, and running ones whose lease ran out.", nil, l)
	c.oldest = prometheus.NewDesc("timewheel_durable_oldest_due_seconds", "How long the earliest of the due jobs has been due, on Redis's clock; 0 if none is.", nil, l)
	c.paused = prometheus.NewDesc("timewheel_durable_paused", "1 for each paused kind; kind=\"\" is the whole queue.", []string{"kind"}, l)
	return c
}

type queueCollector struct {
	q                         *durable.Queue
	jobs, due, oldest, paused *prometheus.Desc
}

// Describe sends the descriptions of the collector's metrics.
func (c *queueCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.jobs
	ch <- c.due
	ch <- c.oldest
	ch <- c.paused
}

// Collect reads the queue's figures from Redis and sends every metric,
// or an invalid metric with the error when Redis does not answer.
func (c *queueCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), queueTimeout)
	defer cancel()
	n, err := c.q.Counts(ctx)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(c.jobs, err)
		return
	}
	paused, err := c.q.Paused(ctx)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(c.paused, err)
		return
	}
	for _, s := range []struct {
		state string
		n     int64
	}{{"pending", n.Pending}, {"running", n.Running}, {"dead", n.Dead}} {
		ch <- prometheus.MustNewConstMetric(c.jobs, prometheus.GaugeValue, float64(s.n), s.state)
	}
	ch <- prometheus.MustNewConstMetric(c.due, prometheus.GaugeValue, float64(n.Due))
	ch <- prometheus.MustNewConstMetric(c.oldest, prometheus.GaugeValue, n.Lateness.Seconds())
	for _, k := range paused {
		ch <- prometheus.MustNewConstMetric(c.paused, prometheus.GaugeValue, 1, k)
	}
}
