package misusetest_test

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

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

var errBad = errors.New("x: bad")

// TestCheck: cases that hold, in both forms.
func TestCheck(t *testing.T) {
	misusetest.Run(t, []misusetest.Case{
		{Name: "ok", Call: func(*testing.T) error { return nil }},
		{Name: "ok Do", Do: func(*testing.T) {}, Want: "ok"},
		{Name: "panic", Do: func(*testing.T) { panic("x: worse") }, Panic: "x: worse"},
		{Name: "panic Want", Call: func(*testing.T) error { panic("x: worse") }, Want: "panic: x: worse"},
		{Name: "error", Call: func(*testing.T) error { return fmt.Errorf("y: %w", errBad) }, Is: errBad, Msg: "y: x: bad"},
		{Name: "error Want", Call: func(*testing.T) error { return errBad }, Want: "error: x: bad", Is: errBad},
	})
	misusetest.CheckWithin(t, time.Minute, misusetest.Case{Name: "within", Call: func(*testing.T) error { return nil }})
}

// TestCheckFails: Check fails a case whose call panics with another
// message, or returns an error that does not wrap Is, naming the case and
// showing both outcomes. The failing checks run in a child process (this
// test binary, run again for TestCheckFailing alone), whose failure and
// output are what is checked.
func TestCheckFails(t *testing.T) {
	if os.Getenv("MISUSETEST_FAILING") != "" {
		t.Skip("in the child")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestCheckFailing$", "-test.count=1")
	cmd.Env = append(os.Environ(), "MISUSETEST_FAILING=1")
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("the failing checks passed:\n%s", out)
	}
	for _, want := range []string{
		"wrong panic:\n         got panic: x: worse\n        want panic: x: bad",
		"wrong panic, Want:\n         got panic: x: worse\n        want panic: x: bad",
		"no panic:\n         got ok\n        want panic: x: bad",
		"wrong sentinel: error x: bad does not wrap x: other",
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the failing checks' output lacks %q:\n%s", want, out)
		}
	}
}

// TestCheckFailing holds the failing checks of TestCheckFails; run alone,
// it passes (it is skipped).
func TestCheckFailing(t *testing.T) {
	if os.Getenv("MISUSETEST_FAILING") == "" {
		t.Skip("run by TestCheckFails, in a child process")
	}
	misusetest.Check(t, misusetest.Case{Name: "wrong panic", Do: func(*testing.T) { panic("x: worse") }, Panic: "x: bad"})
	misusetest.Check(t, misusetest.Case{Name: "wrong panic, Want", Do: func(*testing.T) { panic("x: worse") }, Want: "panic: x: bad"})
	misusetest.Check(t, misusetest.Case{Name: "no panic", Call: func(*testing.T) error { return nil }, Panic: "x: bad"})
	misusetest.Check(t, misusetest.Case{Name: "wrong sentinel", Call: func(*testing.T) error { return errBad },
		Want: "error: x: bad", Is: errors.New("x: other")})
}
