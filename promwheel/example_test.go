package promwheel_test

import (
	"fmt"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/timewheel/timewheel"
	"github.com/timewheel/timewheel/clock"
	"github.com/timewheel/timewheel/promwheel"
)

// A wheel's collector on a registry; a service serves the registry with
// promhttp.HandlerFor.
func ExampleNewWheelCollector() {
	clk := clock.NewVirtual(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	w := timewheel.New(timewheel.WithClock(clk), timewheel.WithExecutor(timewheel.Inline()))
	defer w.Close()
	reg := prometheus.NewRegistry()
	reg.MustRegister(promwheel.NewWheelCollector("main", w))

	for range 3 {
		w.AfterFunc(time.Second, func() {})
	}
	clk.Advance(time.Second)
	err := testutil.GatherAndCompare(reg, strings.NewReader(`
# HELP timewheel_timers_fired_total Timers fired and ticker ticks sent.
# TYPE timewheel_timers_fired_total counter
timewheel_timers_fired_total{wheel="main"} 3
`), "timewheel_timers_fired_total")
	fmt.Println(err)
	// Output: <nil>
}
