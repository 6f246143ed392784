package main

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/timewheel/timewheel"
	"github.com/timewheel/timewheel/clock"
	"github.com/timewheel/timewheel/internal/misusetest"
)

// misuse is one way of holding a Monitor wrong, and what it must do: want
// is "ok", "error: " and the error's text, or "panic: " and the panic's
// value.
type misuse struct {
	name string
	run  func(t *testing.T) error
	want string
}

// checkMisuse runs m, failing if it has not returned within the guard (a
// hang: the guard times nothing), and checks its outcome.
func checkMisuse(t *testing.T, m misuse) {
	t.Helper()
	got, ok := misusetest.Returned(time.Minute, func() string {
		return misusetest.Outcome(func() error { return m.run(t) })
	})
	if !ok {
		t.Fatalf("%s: did not return", m.name)
	}
	if got != m.want {
		t.Errorf("%s:\n got %s\nwant %s", m.name, got, m.want)
	}
}

// virtualMonitor returns a monitor with a 250ms timeout on a virtual
// clock, whose reports go to out.
func virtualMonitor(t *testing.T, out *strings.Builder) (*clock.Virtual, *Monitor) {
	t.Helper()
	clk := clock.NewVirtual(time.Unix(1e9, 0))
	w := timewheel.New(timewheel.WithClock(clk), timewheel.WithExecutor(timewheel.Inline()))
	t.Cleanup(func() { w.Close() })
	return clk, NewMonitor(w, 250*time.Millisecond, func(format string, args ...any) { fmt.Fprintf(out, format+"\n", args...) })
}

func TestMonitorMisuse(t *testing.T) {
	report := func(string, ...any) {}
	for _, m := range []misuse{
		{"zero Monitor: Beat", func(*testing.T) error { new(Monitor).Beat("a"); return nil },
			"panic: heartbeat: Beat called on a zero Monitor; make one with NewMonitor"},
		{"zero Monitor: Stop", func(*testing.T) error {
			if n := len(new(Monitor).Stop()); n != 0 {
				return fmt.Errorf("Stop of a zero Monitor returned %d peers", n)
			}
			return nil
		}, "ok"},
		{"NewMonitor(nil wheel)", func(*testing.T) error { NewMonitor(nil, time.Second, report); return nil },
			"panic: heartbeat: NewMonitor called with a nil wheel"},
		{"NewMonitor(zero timeout)", func(*testing.T) error { NewMonitor(timewheel.Default(), 0, report); return nil },
			"panic: heartbeat: NewMonitor called with non-positive timeout 0s"},
		{"NewMonitor(negative timeout)", func(*testing.T) error { NewMonitor(timewheel.Default(), -time.Second, report); return nil },
			"panic: heartbeat: NewMonitor called with non-positive timeout -1s"},
		{"NewMonitor(nil report)", func(*testing.T) error { NewMonitor(timewheel.Default(), time.Second, nil); return nil },
			"panic: heartbeat: NewMonitor called with a nil report func"},
		{"Beat after Stop reports nothing", func(t *testing.T) error {
			var out strings.Builder
			clk, m := virtualMonitor(t, &out)
			m.Beat("a")
			m.Stop()
			m.Beat("a")
			clk.Advance(time.Second)
			if out.Len() > 0 {
				return fmt.Errorf("reported after Stop: %q", out.String())
			}
			if n := m.Stop()["a"]; n != 1 {
				return fmt.Errorf("Stop again: %d beats of a, want 1", n)
			}
			return nil
		}, "ok"},
		{"Stop and Beat from inside report", func(t *testing.T) error {
			clk := clock.NewVirtual(time.Unix(1e9, 0))
			w := timewheel.New(timewheel.WithClock(clk), timewheel.WithExecutor(timewheel.Inline()))
			defer w.Close()
			var m *Monitor
			var counts map[string]int
			m = NewMonitor(w, 250*time.Millisecond, func(string, ...any) {
				m.Beat("b")
				counts = m.Stop()
			})
			m.Beat("a")
			clk.Advance(time.Second)
			if counts["a"] != 1 || counts["b"] != 1 {
				return fmt.Errorf("counts from inside report: %v", counts)
			}
			return nil
		}, "ok"},
	} {
		t.Run(m.name, func(t *testing.T) { checkMisuse(t, m) })
	}
}
