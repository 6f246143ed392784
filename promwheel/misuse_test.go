package promwheel_test

import (
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/timewheel/timewheel"
	"github.com/timewheel/timewheel/cron"
	"github.com/timewheel/timewheel/expiry"
	"github.com/timewheel/timewheel/idleconn"
	"github.com/timewheel/timewheel/internal/misusetest"
	"github.com/timewheel/timewheel/promwheel"
)

// gather registers c on a registry of its own and collects it once, as a
// scrape does.
func gather(c prometheus.Collector) error {
	reg := prometheus.NewRegistry()
	if err := reg.Register(c); err != nil {
		return err
	}
	_, err := reg.Gather()
	return err
}

// TestMisuse: nil arguments are refused when the collector is made, not
// at the first scrape; registering a collector twice, or two under one
// name, is refused by the registry with its own error.
func TestMisuse(t *testing.T) {
	newWheel := func(t *testing.T) *timewheel.Wheel {
		w := timewheel.New()
		t.Cleanup(func() { w.Close() })
		return w
	}
	for _, m := range []misusetest.Case{
		{Name: "NewWheelCollector(nil)", Call: func(*testing.T) error { return gather(promwheel.NewWheelCollector("w", nil)) },
			Want: `panic: promwheel: NewWheelCollector called with a nil wheel for "w"`},
		{Name: "NewWheelCollector(zero Wheel)", Call: func(*testing.T) error { return gather(promwheel.NewWheelCollector("w", new(timewheel.Wheel))) },
			Want: "panic: timewheel: Stats called on a zero Wheel; make one with New"},
		{Name: "NewExpiryCollector(nil)", Call: func(*testing.T) error { return gather(promwheel.NewExpiryCollector("m", nil)) },
			Want: `panic: promwheel: NewExpiryCollector called with a nil map for "m"`},
		{Name: "NewExpiryCollector(nil *expiry.Map)", Call: func(*testing.T) error {
			return gather(promwheel.NewExpiryCollector("m", (*expiry.Map[string, int])(nil)))
		}, Want: `panic: promwheel: NewExpiryCollector called with a nil map for "m" (a nil *expiry.Map[string,int])`},
		{Name: "NewCronCollector(nil)", Call: func(*testing.T) error { return gather(promwheel.NewCronCollector("s", nil)) },
			Want: `panic: promwheel: NewCronCollector called with a nil scheduler for "s"`},
		{Name: "NewListenerCollector(nil)", Call: func(*testing.T) error { return gather(promwheel.NewListenerCollector("l", nil)) },
			Want: `panic: promwheel: NewListenerCollector called with a nil listener for "l"`},
		{Name: "NewListenerCollector(zero Listener) reports zeros", Call: func(*testing.T) error {
			return gather(promwheel.NewListenerCollector("l", new(idleconn.Listener)))
		}, Want: "ok"},
		{Name: "a closed wheel is still collected", Call: func(t *testing.T) error {
			w := newWheel(t)
			w.Close()
			return gather(promwheel.NewWheelCollector("w", w))
		}, Want: "ok"},
		{Name: "registering a collector twice", Call: func(t *testing.T) error {
			reg := prometheus.NewRegistry()
			c := promwheel.NewWheelCollector("w", newWheel(t))
			reg.MustRegister(c)
			err := reg.Register(c)
			if are := (prometheus.AlreadyRegisteredError{}); !errors.As(err, &are) {
				return fmt.Errorf("%v, want an AlreadyRegisteredError", err)
			}
			return err
		}, Want: "error: duplicate metrics collector registration attempted"},
		{Name: "two collectors under one name", Call: func(t *testing.T) error {
			reg := prometheus.NewRegistry()
			reg.MustRegister(promwheel.NewWheelCollector("w", newWheel(t)))
			return reg.Register(promwheel.NewWheelCollector("w", newWheel(t)))
		}, Want: "error: duplicate metrics collector registration attempted"},
		{Name: "the same listener under two names", Call: func(t *testing.T) error {
			nl, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				return err
			}
			defer nl.Close()
			l, err := idleconn.NewListener(nl, newWheel(t), time.Minute)
			if err != nil {
				return err
			}
			reg := prometheus.NewRegistry()
			reg.MustRegister(promwheel.NewListenerCollector("a", l), promwheel.NewListenerCollector("b", l))
			return testutil.GatherAndCompare(reg, strings.NewReader(`
# HELP timewheel_idleconn_accepted_total Connections accepted.
# TYPE timewheel_idleconn_accepted_total counter
timewheel_idleconn_accepted_total{listener="a"} 0
timewheel_idleconn_accepted_total{listener="b"} 0
`), "timewheel_idleconn_accepted_total")
		}, Want: "ok"},
	} {
		t.Run(m.Name, func(t *testing.T) { misusetest.Check(t, m) })
	}
}

// TestZeroApps records what collectors of the zero values of the
// applications do, which their own packages decide: a zero expiry.Map or
// cron.Scheduler must not crash inside promwheel.
func TestZeroApps(t *testing.T) {
	for _, m := range []struct {
		name string
		make func() prometheus.Collector
	}{
		{"zero expiry.Map", func() prometheus.Collector { return promwheel.NewExpiryCollector("m", new(expiry.Map[string, int])) }},
		{"zero cron.Scheduler", func() prometheus.Collector { return promwheel.NewCronCollector("s", new(cron.Scheduler)) }},
	} {
		t.Run(m.name, func(t *testing.T) {
			defer func() {
				if r := recover(); r != nil {
					s := fmt.Sprint(r)
					if !strings.HasPrefix(s, "expiry: ") && !strings.HasPrefix(s, "cron: ") {
						t.Errorf("panic %q: neither the application's own message nor a working collector", s)
					}
				}
			}()
			if err := gather(m.make()); err != nil {
				t.Errorf("gather: %v", err)
			}
		})
	}
}
