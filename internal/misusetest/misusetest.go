// Package misusetest describes what a call did, for the misuse tables of
// timewheel's packages (misuse_test.go in each). A row names a mistake and
// the outcome it must have, in the forms these functions return. A
// regression names the case and shows both outcomes. A table's row is a
// Case; Check and Run check them.
package misusetest

import (
	"errors"
	"fmt"
	"testing"
	"time"
)

// A Case is one mistake a user can make with a package, and what it must
// do. Its call is Call, or Do for one that returns nothing (set one); it
// may check values of its own with t.Errorf. What it must do is said in
// one of two ways:
//
//   - Want, the outcome as Outcome prints it: "ok", "error: " and the
//     error's text, or "panic: " and the panic's value;
//   - or, with Want "", Panic, the exact message of the panic it must
//     raise, or Is and Msg, the error it must return (one that wraps Is,
//     under errors.Is, whose text is exactly Msg), or neither, for a call
//     that must neither panic nor return an error.
//
// With Want, an error must also wrap Is when Is is set.
type Case struct {
	Name  string
	Call  func(t *testing.T) error
	Do    func(t *testing.T)
	Want  string
	Panic string
	Is    error
	Msg   string
}

// want is the outcome c must have, in Outcome's form.
func (c Case) want() string {
	switch {
	case c.Want != "":
		return c.Want
	case c.Panic != "":
		return "panic: " + c.Panic
	case c.Is != nil:
		return "error: " + c.Msg
	}
	return "ok"
}

// outcome runs c's call and returns its outcome, in Outcome's form, and
// the error it returned.
func (c Case) outcome(t *testing.T) (got string, err error) {
	got = Outcome(func() error {
		if c.Do != nil {
			c.Do(t)
			return nil
		}
		err = c.Call(t)
		return err
	})
	return got, err
}

// report fails t, naming c, if got, the outcome of c's call, and err, the
// error it returned, are not what c wants.
func (c Case) report(t testing.TB, got string, err error) {
	t.Helper()
	if want := c.want(); got != want {
		t.Errorf("%s:\n got %s\nwant %s", c.Name, got, want)
	} else if c.Is != nil && !errors.Is(err, c.Is) {
		t.Errorf("%s: error %v does not wrap %v", c.Name, err, c.Is)
	}
}

// Check runs c's call and fails t if it did not do what c wants, naming
// the case and showing what it did and what was wanted.
func Check(t *testing.T, c Case) {
	t.Helper()
	got, err := c.outcome(t)
	c.report(t, got, err)
}

// CheckWithin is Check, with the call run on a goroutine of its own (see
// Returned): it fails t if the call has not returned after limit.
func CheckWithin(t *testing.T, limit time.Duration, c Case) {
	t.Helper()
	var err error
	got, ok := Returned(limit, func() string {
		var got string
		got, err = c.outcome(t)
		return got
	})
	if !ok {
		t.Fatalf("%s: did not return", c.Name)
	}
	c.report(t, got, err)
}

// Run checks each of cases in a subtest of t named for it.
func Run(t *testing.T, cases []Case) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) { Check(t, c) })
	}
}

// Outcome runs f and returns "panic: " and the value it panicked with,
// "error: " and the text of the error it returned, or "ok".
func Outcome(f func() error) (got string) {
	defer func() {
		if r := recover(); r != nil {
			got = fmt.Sprint("panic: ", r)
		}
	}()
	if err := f(); err != nil {
		return "error: " + err.Error()
	}
	return "ok"
}

// Printed runs f and returns "panic: " and the value it panicked with, or
// what it returned, printed with fmt.Sprint.
func Printed(f func() any) (got string) {
	defer func() {
		if r := recover(); r != nil {
			got = fmt.Sprint("panic: ", r)
		}
	}()
	return fmt.Sprint(f())
}

// Returned runs f on a goroutine of its own and returns what it returned,
// or false if f has not returned after limit: a hang, for the caller to
// report. The limit bounds how long a failing test waits; it times
// nothing that passes.
func Returned(limit time.Duration, f func() string) (string, bool) {
	done := make(chan string, 1)
	go func() { done <- f() }()
	select {
	case got := <-done:
		return got, true
	case <-time.After(limit):
		return "", false
	}
}
