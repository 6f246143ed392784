package main

import (
	"strings"
	"testing"
	"time"

	"github.com/timewheel/timewheel"
	"github.com/timewheel/timewheel/clock"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// TestRun runs the example against a real loopback server whose idle
// timeouts are on a virtual clock: sleeping moves the clock, and the idle
// close has happened when it returns.
func TestRun(t *testing.T) {
	clk := clock.NewVirtual(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	w := timewheel.New(timewheel.WithClock(clk), timewheel.WithExecutor(timewheel.Inline()))
	defer w.Close()
	var out strings.Builder
	if err := run(&out, w, func(d time.Duration) { clk.Advance(d) }); err != nil {
		t.Fatal(err)
	}
	want := `client: request 1 answered on connection #1
client: idle for 500ms (idle timeout 1s)
client: request 2 answered on connection #1
client: idle for 1.5s (idle timeout 1s)
server: connection #1 closed: idleconn: idle timeout
client: request 3 answered on connection #2
server: connection #1 closed: idleconn: idle timeout
server: connection #2 open
`
	if out.String() != want {
		t.Fatalf("got:\n%s\nwant:\n%s", out.String(), want)
	}
}
