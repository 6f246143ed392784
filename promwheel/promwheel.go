// Package promwheel exports the Stats of timewheel's wheels and
// applications to Prometheus, as collectors for a prometheus.Registerer:
//
//	reg.MustRegister(promwheel.NewWheelCollector("default", timewheel.Default()))
//	http.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
//
// Each collector reads its Stats once per scrape, and labels its metrics
// with the name it was given (the wheel label for a wheel), so that
// several wheels, maps, schedulers or listeners share one registry. The
// metric names follow Prometheus' conventions: counters end in _total,
// durations are in seconds, and each help text says what the figure is;
// docs/operating.md says what values to worry about. It is a
// module of its own, so that the timewheel module needs nothing but the
// standard library.
//
// The constructors panic on a nil wheel, map, scheduler or listener (and
// on a zero Wheel) when called, not at the first scrape. Registering one
// collector twice, or two collectors of one kind under the same name, is
// refused by the registry with its own error; the same object under two
// names is collected twice, as two label values.
package promwheel

import (
	"maps"
	"slices"

	"github.com/prometheus/client_golang/prometheus"
)

// metric is one metric of a collector: its description, its type, and
// how to read its value from the Stats S.
type metric[S any] struct {
	desc  *prometheus.Desc
	typ   prometheus.ValueType
	value func(*S) float64
	// labels are the values of the variable labels, if the desc has some.
	labels []string
}

// collector is a prometheus.Collector of the metrics of one Stats S, read
// by stats at each scrape.
type collector[S any] struct {
	stats   func() S
	metrics []metric[S]
	extra   func(*S, chan<- prometheus.Metric) // metrics not of the table, such as a histogram
	descs   []*prometheus.Desc                 // extra's
}

// Describe sends the descriptions of every metric the collector may send.
func (c *collector[S]) Describe(ch chan<- *prometheus.Desc) {
	seen := map[*prometheus.Desc]bool{}
	for _, m := range c.metrics {
		if !seen[m.desc] {
			seen[m.desc] = true
			ch <- m.desc
		}
	}
	for _, d := range c.descs {
		ch <- d
	}
}

// Collect reads the Stats once and sends every metric.
func (c *collector[S]) Collect(ch chan<- prometheus.Metric) {
	st := c.stats()
	for _, m := range c.metrics {
		ch <- prometheus.MustNewConstMetric(m.desc, m.typ, m.value(&st), m.labels...)
	}
	if c.extra != nil {
		c.extra(&st, ch)
	}
}

// table builds the metrics of a collector under one constant label.
type table[S any] struct {
	label, name string
	metrics     []metric[S]
}

func (t *table[S]) desc(name, help string, variable ...string) *prometheus.Desc {
	return prometheus.NewDesc(name, help, variable, prometheus.Labels{t.label: t.name})
}

func (t *table[S]) add(typ prometheus.ValueType, name, help string, value func(*S) float64) {
	t.metrics = append(t.metrics, metric[S]{desc: t.desc(name, help), typ: typ, value: value})
}

// counter adds a counter; name ends in _total.
func (t *table[S]) counter(name, help string, value func(*S) float64) {
	t.add(prometheus.CounterValue, name, help, value)
}

// gauge adds a gauge.
func (t *table[S]) gauge(name, help string, value func(*S) float64) {
	t.add(prometheus.GaugeValue, name, help, value)
}

// byLabel adds one metric with a variable label, one series per value of
// the label.
func (t *table[S]) byLabel(typ prometheus.ValueType, name, help, label string, values map[string]func(*S) float64) {
	d := t.desc(name, help, label)
	for _, v := range slices.Sorted(maps.Keys(values)) {
		t.metrics = append(t.metrics, metric[S]{desc: d, typ: typ, value: values[v], labels: []string{v}})
	}
}
