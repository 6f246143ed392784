// Package misusetest describes what a call did, for the misuse tables of
// timewheel's packages (misuse_test.go in each): a row names a mistake and
// the outcome it must have, in the forms these functions return, so that a
// regression names the case and shows both outcomes.
package misusetest

import (
	"fmt"
	"time"
)

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
