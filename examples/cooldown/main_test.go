package main

import (
	"strings"
	"testing"
	"testing/synctest"

	"github.com/timewheel/timewheel/clock"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// TestRun plays the game on the real clock inside a synctest bubble, where
// time is fake and moves only when the loop waits: the log is exact.
func TestRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var out strings.Builder
		if err := run(&out, clock.Real()); err != nil {
			t.Fatal(err)
		}
		want := `    0s  cast fireball (cooldown 1.5s)
 200ms  cast blink (cooldown 1s)
 500ms  fireball refused: cooling down, 1s left
  1.2s  blink is ready
  1.4s  cast blink (cooldown 1s)
  1.5s  fireball is ready
  1.6s  cast fireball (cooldown 1.5s)
    2s  blink refused: cooling down, 400ms left
  2.4s  blink is ready
  3.1s  fireball is ready
  3.1s  all cooldowns over; the loop had nothing left to do (12 frames drawn)
`
		if out.String() != want {
			t.Fatalf("got:\n%s\nwant:\n%s", out.String(), want)
		}
	})
}
