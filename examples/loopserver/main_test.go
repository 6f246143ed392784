package main

import (
	"strings"
	"testing"
	"time"

	"github.com/timewheel/timewheel/clock"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// TestRun runs the example against its real loopback server, the loop on
// a virtual clock that only the pauses between rounds move: the chatting
// clients never time out, whatever the machine's load, and the quiet
// ones do at the round that passes their idle second.
func TestRun(t *testing.T) {
	clk := clock.NewVirtual(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	var out strings.Builder
	if err := run(&out, clk, func(d time.Duration) { clk.Advance(d) }); err != nil {
		t.Fatal(err)
	}
	want := `100 clients chat a line every 400ms for 2s, 20 say hello and go quiet; idle timeout 1s
after 2s: quiet clients were told "idle timeout, bye, then the end" ×20
chatting clients sent QUIT and were told "bye, then the end" ×100
server: 120 connections, 720 lines, 20 idle timeouts, 120 closed
`
	if out.String() != want {
		t.Fatalf("got:\n%s\nwant:\n%s", out.String(), want)
	}
}
