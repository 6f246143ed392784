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

// misuse is one way of holding the package wrong, and what it must do:
// want is "ok", "error: " and the error's text, or "panic: " and the
// panic's value.
type misuse struct {
	name string
	run  func(t *testing.T) error
	want string
}

// checkMisuse runs m and checks its outcome.
func checkMisuse(t *testing.T, m misuse) {
	t.Helper()
	got := misusetest.Outcome(func() error { return m.run(t) })
	if got != m.want {
		t.Errorf("%s:\n got %s\nwant %s", m.name, got, m.want)
	}
}

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
	for _, m := range []misuse{
		{"NewWheelCollector(nil)", func(*testing.T) error { return gather(promwheel.NewWheelCollector("w", nil)) },
			`panic: promwheel: NewWheelCollector called with a nil wheel for "w"`},
		{"NewWheelCollector(zero Wheel)", func(*testing.T) error { return gather(promwheel.NewWheelCollector("w", new(timewheel.Wheel))) },
			"panic: timewheel: Stats called on a zero Wheel; make one with New"},
		{"NewExpiryCollector(nil)", func(*testing.T) error { return gather(promwheel.NewExpiryCollector("m", nil)) },
			`panic: promwheel: NewExpiryCollector called with a nil map for "m"`},
		{"NewExpiryCollector(nil *expiry.Map)", func(*testing.T) error {
			return gather(promwheel.NewExpiryCollector("m", (*expiry.Map[string, int])(nil)))
		}, `panic: promwheel: NewExpiryCollector called with a nil map for "m" (a nil *expiry.Map[string,int])`},
		{"NewCronCollector(nil)", func(*testing.T) error { return gather(promwheel.NewCronCollector("s", nil)) },
			`panic: promwheel: NewCronCollector called with a nil scheduler for "s"`},
		{"NewListenerCollector(nil)", func(*testing.T) error { return gather(promwheel.NewListenerCollector("l", nil)) },
			`panic: promwheel: NewListenerCollector called with a nil listener for "l"`},
		{"NewListenerCollector(zero Listener) reports zeros", func(*testing.T) error {
			return gather(promwheel.NewListenerCollector("l", new(idleconn.Listener)))
		}, "ok"},
		{"a closed wheel is still collected", func(t *testing.T) error {
			w := newWheel(t)
			w.Close()
			return gather(promwheel.NewWheelCollector("w", w))
		}, "ok"},
		{"registering a collector twice", func(t *testing.T) error {
			reg := prometheus.NewRegistry()
			c := promwheel.NewWheelCollector("w", newWheel(t))
			reg.MustRegister(c)
			err := reg.Register(c)
			if are := (prometheus.AlreadyRegisteredError{}); !errors.As(err, &are) {
				return fmt.Errorf("%v, want an AlreadyRegisteredError", err)
			}
			return err
		}, "error: duplicate metrics collector registration attempted"},
		{"two collectors under one name", func(t *testing.T) error {
			reg := prometheus.NewRegistry()
			reg.MustRegister(promwheel.NewWheelCollector("w", newWheel(t)))
			return reg.Register(promwheel.NewWheelCollector("w", newWheel(t)))
		}, "error: duplicate metrics collector registration attempted"},
		{"the same listener under two names", func(t *testing.T) error {
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
		}, "ok"},
	} {
		t.Run(m.name, func(t *testing.T) { checkMisuse(t, m) })
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
