package misusetest_test

import (
	"errors"
	"testing"

	"github.com/timewheel/timewheel/internal/misusetest"
)

func TestOutcome(t *testing.T) {
	for _, c := range []struct {
		f    func() error
		want string
	}{
		{func() error { return nil }, "ok"},
		{func() error { return errors.New("x: bad") }, "error: x: bad"},
		{func() error { panic("x: worse") }, "panic: x: worse"},
	} {
		if got := misusetest.Outcome(c.f); got != c.want {
			t.Errorf("Outcome = %q; want %q", got, c.want)
		}
	}
	if got := misusetest.Printed(func() any { return 3 }); got != "3" {
		t.Errorf("Printed = %q", got)
	}
	if got := misusetest.Printed(func() any { panic(errors.New("e")) }); got != "panic: e" {
		t.Errorf("Printed = %q", got)
	}
}
