package promwheel_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/timewheel/timewheel"
	"github.com/timewheel/timewheel/clock"
	"github.com/timewheel/timewheel/cron"
	"github.com/timewheel/timewheel/expiry"
	"github.com/timewheel/timewheel/idleconn"
	"github.com/timewheel/timewheel/promwheel"
)

var epoch = time.Date(2026, 11, 24, 0, 0, 0, 0, time.UTC)

// scrape serves reg with promhttp on a loopback listener, fetches
// /metrics over HTTP and parses the text format.
func scrape(t *testing.T, reg *prometheus.Registry) map[string]*dto.MetricFamily {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorHandling: promhttp.PanicOnError}))
	srv := &http.Server{Handler: mux}
	go srv.Serve(ln)
	defer srv.Shutdown(context.Background())
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := client.Get("http://" + ln.Addr().String() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
		body, _ := io.ReadAll(resp.Body)
		t.Fatalf("Content-Type %q: %s", ct, body)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return families
}

// sample returns the value of the sample of family name whose labels
// include want, and fails the test if there is none.
func sample(t *testing.T, families map[string]*dto.MetricFamily, name string, want ...string) *dto.Metric {
	t.Helper()
	f := families[name]
	if f == nil {
		t.Fatalf("no metric %s", name)
	}
next:
	for _, m := range f.Metric {
		have := map[string]string{}
		for _, l := range m.Label {
			have[l.GetName()] = l.GetValue()
		}
		for i := 0; i < len(want); i += 2 {
			if have[want[i]] != want[i+1] {
				continue next
			}
		}
		return m
	}
	t.Fatalf("no sample of %s with labels %v", name, want)
	return nil
}

// value returns the value of a counter or gauge sample.
func value(t *testing.T, families map[string]*dto.MetricFamily, name string, labels ...string) float64 {
	t.Helper()
	m := sample(t, families, name, labels...)
	switch {
	case m.Counter != nil:
		return m.Counter.GetValue()
	case m.Gauge != nil:
		return m.Gauge.GetValue()
	}
	t.Fatalf("%s is neither a counter nor a gauge", name)
	return 0
}

// TestWheelCollector: the values scraped over HTTP after a known sequence
// of operations on a virtual clock: 5 started, 2 stopped, 1 reset, 3
// fired.
func TestWheelCollector(t *testing.T) {
	clk := clock.NewVirtual(epoch)
	w := timewheel.New(timewheel.WithClock(clk), timewheel.WithExecutor(timewheel.Inline()))
	defer w.Close()
	pooled := timewheel.New(timewheel.WithClock(clk), timewheel.WithWorkers(3))
	defer pooled.Close()
	reg := prometheus.NewRegistry()
	reg.MustRegister(promwheel.NewWheelCollector("test", w), promwheel.NewWheelCollector("pooled", pooled))

	var timers []*timewheel.Timer
	for i := range 5 {
		timers = append(timers, w.AfterFunc(time.Duration(i+1)*time.Second, func() {}))
	}
	timers[3].Stop()
	timers[4].Stop()
	timers[0].Reset(2 * time.Second) // later: a lazy reset
	clk.Advance(10 * time.Second)

	fams := scrape(t, reg)
	st := w.Stats()
	for _, c := range []struct {
		name string
		want float64
	}{
		{"timewheel_timers_pending", 0},
		{"timewheel_timers_started_total", 5},
		{"timewheel_timers_stopped_total", 2},
		{"timewheel_timers_reset_total", 1},
		{"timewheel_timers_lazy_reset_total", 1},
		{"timewheel_timers_fired_total", 3},
		{"timewheel_timers_collected_total", 0},
		{"timewheel_timers_discarded_total", 0},
		{"timewheel_driver_wakeups_total", float64(st.Wakeups)},
		{"timewheel_driver_empty_wakeups_total", float64(st.EmptyWakeups)},
		{"timewheel_shards", 1},
	} {
		if got := value(t, fams, c.name, "wheel", "test"); got != c.want {
			t.Errorf("%s{wheel=\"test\"} = %v, want %v", c.name, got, c.want)
		}
	}
	if st.Wakeups < 3 || st.EmptyWakeups < 1 {
		t.Errorf("stats %+v: want at least a wake per tick fired and one for the lazily reset timer", st)
	}

	h := sample(t, fams, "timewheel_fire_lateness_seconds", "wheel", "test").Histogram
	if h.GetSampleCount() != 3 || h.GetSampleSum() != 0 || len(h.Bucket) != timewheel.LatenessBuckets {
		t.Fatalf("lateness histogram %v: want 3 fires on time, in %d buckets and +Inf", h, timewheel.LatenessBuckets-1)
	}
	if b := h.Bucket[0]; b.GetUpperBound() != 0.001 || b.GetCumulativeCount() != 3 {
		t.Errorf("first lateness bucket %v, want le=0.001 holding 3", b)
	}
	if b := h.Bucket[len(h.Bucket)-2]; b.GetUpperBound() != (time.Millisecond << (timewheel.LatenessBuckets - 2)).Seconds() {
		t.Errorf("last lateness bucket %v", b)
	}

	// The executor's metrics are there for a wheel with its own pool only.
	if got := value(t, fams, "timewheel_executor_workers_max", "wheel", "pooled"); got != 3 {
		t.Errorf("timewheel_executor_workers_max{wheel=\"pooled\"} = %v, want 3", got)
	}
	for _, m := range fams["timewheel_executor_workers_max"].Metric {
		for _, l := range m.Label {
			if l.GetValue() == "test" {
				t.Errorf("executor metrics for a wheel with an Inline executor")
			}
		}
	}
}

// TestAppCollectors: the applications' Stats, scraped.
func TestAppCollectors(t *testing.T) {
	clk := clock.NewVirtual(epoch)
	w := timewheel.New(timewheel.WithClock(clk), timewheel.WithExecutor(timewheel.Inline()))
	defer w.Close()

	m := expiry.New[string, int](expiry.WithWheel(w), expiry.WithInlineCallbacks())
	defer m.Close()
	m.Set("a", 1, time.Second)
	m.Set("b", 2, time.Hour)
	m.Get("a")
	m.Get("nope")
	m.Delete("b")
	clk.Advance(2 * time.Second)

	s := cron.New(cron.WithWheel(w), cron.WithInline(), cron.WithPanicHandler(func(string, any) {}))
	defer s.Stop(context.Background())
	s.Add("boom", "@every 1m", func(context.Context, time.Time) { panic("oops") })
	// Two replicas' schedulers: every claim lost to another replica, and
	// every claim failing under the default policy (skip the run).
	lost := cron.New(cron.WithWheel(w), cron.WithInline(), cron.WithClaimer(claimer(func() (bool, error) { return false, nil })))
	defer lost.Stop(context.Background())
	lost.Add("tick", "@every 1m", func(context.Context, time.Time) {})
	failing := cron.New(cron.WithWheel(w), cron.WithInline(), cron.WithClaimer(claimer(func() (bool, error) { return false, errors.New("store down") })),
		cron.WithClaimErrorHandler(func(string, time.Time, error) {}))
	defer failing.Stop(context.Background())
	failing.Add("tick", "@every 1m", func(context.Context, time.Time) {})
	erring := cron.New(cron.WithWheel(w), cron.WithInline())
	defer erring.Stop(context.Background())
	erring.Add("err", "@every 1m", cron.Returning(func(context.Context, time.Time) error { return errors.New("no") }))
	clk.Advance(2 * time.Minute) // 2 runs, and a third as the idle timeout below passes

	nl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l, err := idleconn.NewListener(nl, w, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		c, err := net.Dial("tcp", nl.Addr().String())
		if err == nil {
			defer c.Close()
			io.Copy(io.Discard, c)
		}
	}()
	c, err := l.Accept()
	if err != nil {
		t.Fatal(err)
	}
	clk.Advance(time.Minute) // closes c for idleness
	c.Close()

	reg := prometheus.NewRegistry()
	reg.MustRegister(
		promwheel.NewExpiryCollector("sessions", m),
		promwheel.NewCronCollector("jobs", s),
		promwheel.NewCronCollector("lost", lost),
		promwheel.NewCronCollector("failing", failing),
		promwheel.NewCronCollector("erring", erring),
		promwheel.NewListenerCollector("http", l),
	)
	fams := scrape(t, reg)
	for _, c := range []struct {
		name   string
		labels []string
		want   float64
	}{
		{"timewheel_expiry_entries", []string{"map", "sessions"}, 0},
		{"timewheel_expiry_hits_total", []string{"map", "sessions"}, 1},
		{"timewheel_expiry_misses_total", []string{"map", "sessions"}, 1},
		{"timewheel_expiry_evictions_total", []string{"map", "sessions", "reason", "expired"}, 1},
		{"timewheel_expiry_evictions_total", []string{"map", "sessions", "reason", "deleted"}, 1},
		{"timewheel_expiry_evictions_total", []string{"map", "sessions", "reason", "capacity"}, 0},
		{"timewheel_expiry_callback_backlog", []string{"map", "sessions"}, 0},
		{"timewheel_cron_jobs", []string{"scheduler", "jobs"}, 1},
		{"timewheel_cron_runs_total", []string{"scheduler", "jobs"}, 3},
		{"timewheel_cron_panics_total", []string{"scheduler", "jobs"}, 3},
		{"timewheel_cron_late_runs_total", []string{"scheduler", "jobs"}, 0},
		{"timewheel_cron_claims_lost_total", []string{"scheduler", "jobs"}, 0},
		{"timewheel_cron_claims_lost_total", []string{"scheduler", "lost"}, 3},
		{"timewheel_cron_runs_total", []string{"scheduler", "lost"}, 0},
		{"timewheel_cron_claim_errors_total", []string{"scheduler", "failing"}, 3},
		{"timewheel_cron_runs_total", []string{"scheduler", "failing"}, 0},
		{"timewheel_cron_errors_total", []string{"scheduler", "erring"}, 3},
		{"timewheel_cron_errors_total", []string{"scheduler", "jobs"}, 0},
		{"timewheel_cron_missed_runs_total", []string{"scheduler", "erring"}, 0},
		{"timewheel_cron_limited_runs_total", []string{"scheduler", "erring"}, 0},
		{"timewheel_idleconn_accepted_total", []string{"listener", "http"}, 1},
		{"timewheel_idleconn_open_connections", []string{"listener", "http"}, 0},
		{"timewheel_idleconn_closed_total", []string{"listener", "http", "reason", "idle"}, 1},
		{"timewheel_idleconn_closed_total", []string{"listener", "http", "reason", "close"}, 0},
	} {
		if got := value(t, fams, c.name, c.labels...); got != c.want {
			t.Errorf("%s%v = %v, want %v", c.name, c.labels, got, c.want)
		}
	}
}

// TestLint: the metrics follow Prometheus' naming conventions, as promlint
// checks them.
func TestLint(t *testing.T) {
	w := timewheel.New()
	defer w.Close()
	m := expiry.New[string, int](expiry.WithWheel(w))
	defer m.Close()
	s := cron.New(cron.WithWheel(w))
	defer s.Stop(context.Background())
	nl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l, _ := idleconn.NewListener(nl, w, time.Minute)
	defer l.Close()
	for name, c := range map[string]prometheus.Collector{
		"wheel":    promwheel.NewWheelCollector("w", w),
		"expiry":   promwheel.NewExpiryCollector("m", m),
		"cron":     promwheel.NewCronCollector("s", s),
		"listener": promwheel.NewListenerCollector("l", l),
	} {
		problems, err := testutil.CollectAndLint(c)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, p := range problems {
			t.Errorf("%s: %s: %s", name, p.Metric, p.Text)
		}
	}
}

// claimer is a cron.Claimer that answers every claim with f.
type claimer func() (bool, error)

func (c claimer) Claim(context.Context, string, time.Time) (bool, error) { return c() }
