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
	for _, m := range []misusetest.Case{
		{Name: "zero Monitor: Beat", Call: func(*testing.T) error { new(Monitor).Beat("a"); return nil },
			Want: "panic: heartbeat: Beat called on a zero Monitor; make one with NewMonitor"},
		{Name: "zero Monitor: Stop", Call: func(*testing.T) error {
			if n := len(new(Monitor).Stop()); n != 0 {
				return fmt.Errorf("Stop of a zero Monitor returned %d peers", n)
			}
			return nil
		}, Want: "ok"},
		{Name: "NewMonitor(nil wheel)", Call: func(*testing.T) error { NewMonitor(nil, time.Second, report); return nil },
			Want: "panic: heartbeat: NewMonitor called with a nil wheel"},
		{Name: "NewMonitor(zero timeout)", Call: func(*testing.T) error { NewMonitor(timewheel.Default(), 0, report); return nil },
			Want: "panic: heartbeat: NewMonitor called with non-positive timeout 0s"},
		{Name: "NewMonitor(negative timeout)", Call: func(*testing.T) error { NewMonitor(timewheel.Default(), -time.Second, report); return nil },
			Want: "panic: heartbeat: NewMonitor called with non-positive timeout -1s"},
		{Name: "NewMonitor(nil report)", Call: func(*testing.T) error { NewMonitor(timewheel.Default(), time.Second, nil); return nil },
			Want: "panic: heartbeat: NewMonitor called with a nil report func"},
		{Name: "Beat after Stop reports nothing", Call: func(t *testing.T) error {
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
		}, Want: "ok"},
		{Name: "Stop and Beat from inside report", Call: func(t *testing.T) error {
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
		}, Want: "ok"},
	} {
		t.Run(m.Name, func(t *testing.T) { misusetest.CheckWithin(t, time.Minute, m) })
	}
}
