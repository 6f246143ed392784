package stack_test

import (
	"testing"

	"github.com/timewheel/timewheel/internal/stack"
)

type box struct{}

func (*box) run(f func()) { f() }

func TestHas(t *testing.T) {
	name := stack.FuncName((*box).run)
	if want := "github.com/timewheel/timewheel/internal/stack_test.(*box).run"; name != want {
		t.Fatalf("FuncName = %q; want %q", name, want)
	}
	if stack.Has(name) {
		t.Fatal("Has found a function that is not on the stack")
	}
	var inside, deep bool
	new(box).run(func() { inside = stack.Has(name) })
	var recurse func(int)
	recurse = func(n int) {
		if n == 0 {
			deep = stack.Has(name)
			return
		}
		recurse(n - 1)
	}
	new(box).run(func() { recurse(500) }) // deeper than Has's first buffer
	if !inside || !deep {
		t.Fatalf("Has inside the function: %v, 500 frames further down: %v", inside, deep)
	}
	var prefixed bool
	new(box).run(func() { prefixed = stack.Has("nothing", name[:len(name)-2]) })
	if !prefixed {
		t.Fatal("a prefix did not match")
	}
}
