package loop_test

import "testing"

// TestPanickingPostKeepsLaterPosts: a posted function that panics does
// not make the functions posted after it vanish: Post returned nil for
// them, the loop can run again after a panic, and a posted function keeps
// Run from returning until it has run.
func TestPanickingPostKeepsLaterPosts(t *testing.T) {
	_, l := virtualLoop()
	ranB := false
	if err := l.Post(func() { panic("boom") }); err != nil {
		t.Fatal(err)
	}
	if err := l.Post(func() { ranB = true }); err != nil {
		t.Fatal(err)
	}
	func() {
		defer func() {
			if r := recover(); r != "boom" {
				t.Fatalf("recovered %v", r)
			}
		}()
		l.RunNoWait()
	}()
	alive := l.RunNoWait()
	if !ranB {
		t.Fatalf("function posted after a panicking one never ran (RunNoWait after the panic reported alive=%v): it was dropped silently", alive)
	}
}
