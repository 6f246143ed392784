package wheelctx_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/timewheel/timewheel"
	"github.com/timewheel/timewheel/wheelctx"
)

// The differential test: a scenario is a chain of contexts of every kind,
// each derived from the one before, and steps on it. It runs on package
// context and on wheelctx (the chain's wheel levels made by one or the
// other), and every observable of every context is read after every
// step, in the same order; the two traces must be equal.

// kind is one level of a chain.
type kind int

const (
	kCancel      kind = iota // context.WithCancelCause
	kPkgTimeout              // context.WithTimeoutCause, in both runs
	kTimeout                 // WithTimeoutCause: wheelctx's, or package context's
	kDeadline                // WithDeadline: wheelctx's, or package context's
	kEarlier                 // WithTimeout past the parent's deadline (WithCancel, in both)
	kValue                   // context.WithValue
	kEmbed                   // a user type embedding the parent
	kWithout                 // context.WithoutCancel
	kAfterFuncer             // a user type with an AfterFunc method (package context calls it)
	kOwnDone                 // a user type with a Done of its own (package context watches it on a goroutine)
	nKinds
)

var kindNames = [...]string{"cancel", "pkgTimeout", "timeout", "deadline", "earlier", "value", "embed", "without", "afterFuncer", "ownDone"}

func (k kind) String() string { return kindNames[k] }

// async: package context itself propagates through such a level on a
// goroutine, so a run on the real clock cannot compare what it sees
// right after a step.
func (k kind) async() bool { return k == kAfterFuncer || k == kOwnDone }

type embedded struct{ context.Context }

// afterFuncer has an AfterFunc method, as a user type may.
type afterFuncer struct{ context.Context }

func (a afterFuncer) AfterFunc(f func()) func() bool { return context.AfterFunc(a.Context, f) }

// ownDone is a user type with a Done channel of its own, closed on a
// goroutine when its parent is done.
type ownDone struct {
	context.Context
	done   chan struct{}
	forced *error // set by the end func of newOwnDone before it closes done
}

// newOwnDone returns an ownDone on p, and a func that closes its Done
// with Canceled (for the end of a test, where p may never be done).
func newOwnDone(p context.Context) (ownDone, func()) {
	o := ownDone{p, make(chan struct{}), new(error)}
	var once sync.Once
	context.AfterFunc(p, func() { once.Do(func() { close(o.done) }) })
	return o, func() {
		once.Do(func() {
			*o.forced = context.Canceled
			close(o.done)
		})
	}
}

func (o ownDone) Done() <-chan struct{} { return o.done }

func (o ownDone) Err() error {
	select {
	case <-o.done:
		if *o.forced != nil {
			return *o.forced
		}
		return o.Context.Err()
	default:
		return nil
	}
}

type levelKey int

// level is one built context.
type level struct {
	kind   kind
	ctx    context.Context
	cancel func(error) // nil for kinds without one
	done   <-chan struct{}
}

// level kinds' durations, on the scenario's clock.
type dur int

const (
	dLong  dur = iota // an hour: never reached
	dShort            // a few seconds: reached by sleep steps (synctest only)
	dPast             // already past
)

type levelSpec struct {
	kind kind
	d    dur
	n    int // seconds, for dShort
}

type step struct {
	op string // "done", "cancel", "sleep", "child", "values", "afterfunc"
	i  int
	n  int
}

type scenario struct {
	seed   uint64
	root   string // "background", "cancel", "value"
	levels []levelSpec
	steps  []step
}

func (sc scenario) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "seed %d, root %s:", sc.seed, sc.root)
	for i, l := range sc.levels {
		fmt.Fprintf(&b, " %d:%v/%d/%d", i, l.kind, l.d, l.n)
	}
	b.WriteString("; steps:")
	for _, s := range sc.steps {
		fmt.Fprintf(&b, " %s(%d,%d)", s.op, s.i, s.n)
	}
	return b.String()
}

// genScenario makes a random scenario. Without sleeps (the real clock),
// it uses no short durations and no async kinds.
func genScenario(seed uint64, sleeps bool) scenario {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	sc := scenario{seed: seed, root: []string{"background", "cancel", "value"}[r.IntN(3)]}
	depth := 1 + r.IntN(6)
	if r.IntN(8) == 0 {
		depth = 20 + r.IntN(31) // up to 50
	}
	// Wheel kinds most of the time: they are what is compared.
	for range depth {
		var k kind
		switch x := r.IntN(10); {
		case x < 4:
			k = kTimeout
		case x < 5:
			k = kDeadline
		default:
			k = kind(r.IntN(int(nKinds)))
		}
		if !sleeps && k.async() {
			k = kValue
		}
		l := levelSpec{kind: k, d: dLong}
		switch x := r.IntN(10); {
		case x == 0:
			l.d = dPast
		case x < 5 && sleeps:
			l.d, l.n = dShort, 1+r.IntN(4)
		}
		sc.levels = append(sc.levels, l)
	}
	for range 1 + r.IntN(8) {
		s := step{i: r.IntN(depth)}
		switch x := r.IntN(12); {
		case x < 3:
			s.op = "done"
		case x < 6:
			s.op = "cancel"
		case x < 8 && sleeps:
			s.op, s.n = "sleep", 1+r.IntN(3)
		case x < 9:
			s.op = "child"
		case x < 10:
			s.op = "values"
		case x < 11:
			s.op = "afterfunc"
		default:
			s.op = "cause"
		}
		sc.steps = append(sc.steps, s)
	}
	if r.IntN(2) == 0 {
		sc.steps = append(sc.steps, step{op: "cancel", i: -1}) // the root
	}
	return sc
}

// makers of a run: wheelctx's or package context's.
type makers2 struct {
	timeoutCause func(context.Context, time.Duration, error) (context.Context, context.CancelFunc)
	deadline     func(context.Context, time.Time) (context.Context, context.CancelFunc)
}

var pkgMakers = makers2{context.WithTimeoutCause, context.WithDeadline}

func wheelMakers(s wheelctx.Scheduler) makers2 {
	return makers2{s.WithTimeoutCause, s.WithDeadline}
}

// runScenario runs sc with mk and returns its trace. settle runs after
// every step: nothing on the real clock, synctest.Wait in a bubble.
func runScenario(sc scenario, mk makers2, settle func()) []string {
	start := time.Now()
	var trace []string
	rootCtx, rootCancel := context.Background(), func(error) {}
	switch sc.root {
	case "cancel":
		var c context.CancelCauseFunc
		rootCtx, c = context.WithCancelCause(rootCtx)
		rootCancel = c
	case "value":
		rootCtx = context.WithValue(rootCtx, levelKey(-1), "root")
	}
	var levels []*level
	p := rootCtx
	var cleanup []func()
	defer func() {
		for _, f := range cleanup {
			f()
		}
	}()
	for i, spec := range sc.levels {
		l := &level{kind: spec.kind}
		d := time.Hour
		switch spec.d {
		case dShort:
			// No two levels at one instant: package context's own
			// timers due together fire in no set order.
			d = time.Duration(spec.n)*time.Second + time.Duration(i)*time.Millisecond
		case dPast:
			d = -time.Second
		}
		cause := fmt.Errorf("cause %d", i)
		simple := func(ctx context.Context, cancel context.CancelFunc) {
			l.ctx, l.cancel = ctx, func(error) { cancel() }
		}
		switch spec.kind {
		case kCancel:
			ctx, cancel := context.WithCancelCause(p)
			l.ctx, l.cancel = ctx, cancel
		case kPkgTimeout:
			simple(context.WithTimeoutCause(p, d, cause))
		case kTimeout:
			simple(mk.timeoutCause(p, d, cause))
		case kDeadline:
			simple(mk.deadline(p, time.Now().Add(d)))
		case kEarlier:
			simple(mk.timeoutCause(p, 2*time.Hour, cause))
		case kValue:
			l.ctx = context.WithValue(p, levelKey(i), i)
		case kEmbed:
			l.ctx = embedded{p}
		case kWithout:
			l.ctx = context.WithoutCancel(p)
		case kAfterFuncer:
			l.ctx = afterFuncer{p}
		case kOwnDone:
			var end func()
			l.ctx, end = newOwnDone(p)
			defer end()
		}
		if l.cancel != nil {
			cleanup = append(cleanup, func() { l.cancel(nil) })
		}
		levels = append(levels, l)
		p = l.ctx
		settle() // an async level's goroutine runs before the next level looks at it
	}
	read := func(label string) {
		var b strings.Builder
		fmt.Fprintf(&b, "after %s:", label)
		for i, l := range levels {
			err := l.ctx.Err()
			cause := context.Cause(l.ctx)
			fmt.Fprintf(&b, "\n  %d %v: err=%v cause=%v", i, l.kind, err, cause)
			if l.done != nil {
				closed := false
				select {
				case <-l.done:
					closed = true
				default:
				}
				fmt.Fprintf(&b, " done=%v same=%v", closed, l.ctx.Done() == l.done)
				if closed != (err != nil) {
					fmt.Fprintf(&b, " ERR-DONE-MISMATCH")
				}
			}
			dl, ok := l.ctx.Deadline()
			if ok && !sc.realClock() {
				fmt.Fprintf(&b, " deadline=%v", dl.Sub(start))
			} else {
				fmt.Fprintf(&b, " deadline=%v", ok)
			}
			fmt.Fprintf(&b, " value=%v,%v", l.ctx.Value(levelKey(i)), l.ctx.Value(levelKey(-1)))
		}
		trace = append(trace, b.String())
	}
	read("build")
	var finals []func()
	for _, s := range sc.steps {
		var l *level
		if s.i >= 0 && s.i < len(levels) {
			l = levels[s.i]
		}
		label := fmt.Sprintf("%s %d", s.op, s.i)
		switch s.op {
		case "done":
			d := l.ctx.Done()
			if l.done == nil {
				l.done = d
			} else if d != l.done {
				label += " CHANGED-DONE"
			}
		case "cancel":
			if s.i < 0 {
				rootCancel(errors.New("root cause"))
			} else if l.cancel != nil {
				l.cancel(fmt.Errorf("cancel cause %d", s.i))
			}
		case "sleep":
			time.Sleep(time.Duration(s.n) * time.Second)
		case "child", "values":
			parent := l.ctx
			if s.op == "values" {
				parent = context.WithValue(parent, levelKey(100), "mw")
			}
			c, cancel := context.WithCancel(parent)
			cleanup = append(cleanup, cancel)
			levels = append(levels, &level{kind: kCancel, ctx: c, cancel: func(error) { cancel() }, done: c.Done()})
		case "afterfunc":
			var mu sync.Mutex
			ran := false
			context.AfterFunc(l.ctx, func() { mu.Lock(); ran = true; mu.Unlock() })
			finals = append(finals, func() {
				if !sc.realClock() {
					mu.Lock()
					trace = append(trace, fmt.Sprintf("afterfunc on %d ran=%v", s.i, ran))
					mu.Unlock()
				}
			})
		case "cause":
			label += fmt.Sprintf(" = %v", context.Cause(l.ctx))
		}
		settle()
		read(label)
	}
	if !sc.realClock() {
		settle()
	}
	for _, f := range finals {
		f()
	}
	return trace
}

// realClock reports whether the scenario runs on the real clock (no
// sleeps in it, no short deadlines).
func (sc scenario) realClock() bool {
	for _, s := range sc.steps {
		if s.op == "sleep" {
			return false
		}
	}
	for _, l := range sc.levels {
		if l.d == dShort || l.kind.async() {
			return false
		}
	}
	return true
}

// compare runs sc on both and reports a difference.
func compare(t *testing.T, sc scenario, w *timewheel.Wheel, settle func()) bool {
	t.Helper()
	want := runScenario(sc, pkgMakers, settle)
	got := runScenario(sc, wheelMakers(wheelctx.On(w)), settle)
	g, wa := strings.Split(strings.Join(got, "\n"), "\n"), strings.Split(strings.Join(want, "\n"), "\n")
	for i := range max(len(g), len(wa)) {
		gl, wl := "(none)", "(none)"
		if i < len(g) {
			gl = g[i]
		}
		if i < len(wa) {
			wl = wa[i]
		}
		if gl == wl {
			continue
		}
		step := ""
		for j := i; j >= 0 && j < len(wa); j-- {
			if strings.HasPrefix(wa[j], "after ") {
				step = wa[j]
				break
			}
		}
		t.Errorf("scenario %v\nfirst difference, %s\nwheelctx: %s\ncontext:  %s", sc, step, gl, wl)
		return false
	}
	return true
}

// TestDifferentialRealClock: random scenarios on the real clock, read
// with no wait between a step and the reads after it.
func TestDifferentialRealClock(t *testing.T) {
	w := timewheel.New()
	defer w.Close()
	n := 3000
	if raceEnabled || testing.Short() {
		n = 800
	}
	for seed := range uint64(n) {
		sc := genScenario(seed, false)
		if !sc.realClock() {
			t.Fatalf("scenario %v is not for the real clock", sc)
		}
		if !compare(t, sc, w, func() {}) {
			return
		}
	}
}

// TestDifferentialSynctest: random scenarios with deadlines that pass,
// in a synctest bubble, settled after every step.
func TestDifferentialSynctest(t *testing.T) {
	n := 1000
	if raceEnabled || testing.Short() {
		n = 300
	}
	for seed := range uint64(n) {
		failed := false
		synctest.Test(t, func(t *testing.T) {
			w := timewheel.New(timewheel.WithExecutor(timewheel.Inline()))
			defer w.Close()
			failed = !compare(t, genScenario(1e6+seed, true), w, synctest.Wait)
		})
		if failed {
			return
		}
	}
}

// TestDifferentialChains: every pair of kinds, over each root, to depth
// 50, with the root canceled, the middle level canceled, or the last
// level's Done asked first: deterministic, on the real clock.
func TestDifferentialChains(t *testing.T) {
	w := timewheel.New()
	defer w.Close()
	for _, root := range []string{"background", "cancel", "value"} {
		for a := range nKinds {
			for b := range nKinds {
				if a.async() || b.async() || raceEnabled && (a+b)%3 != 0 {
					continue // under the race detector, a third of the pairs
				}
				for _, depth := range []int{3, 50} {
					var levels []levelSpec
					for i := range depth {
						k := a
						if i%2 == 1 {
							k = b
						}
						levels = append(levels, levelSpec{kind: k})
					}
					last := depth - 1
					for _, steps := range [][]step{
						{{op: "cancel", i: -1}},
						{{op: "done", i: last}, {op: "cancel", i: -1}, {op: "cancel", i: last}},
						{{op: "child", i: last}, {op: "cancel", i: depth / 2}},
						{{op: "values", i: last / 2}, {op: "done", i: 0}, {op: "cancel", i: 0}},
						{{op: "cancel", i: -1}, {op: "cause", i: last}, {op: "done", i: last}, {op: "cause", i: last}},
					} {
						sc := scenario{root: root, levels: levels, steps: steps}
						if !compare(t, sc, w, func() {}) {
							return
						}
					}
				}
			}
		}
	}
}
