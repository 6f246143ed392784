package wheelctx_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/timewheel/timewheel"
	"github.com/timewheel/timewheel/clock"
	"github.com/timewheel/timewheel/wheelctx"
)

// impl is one maker of deadline contexts, with the means to move its time.
type impl struct {
	name              string
	withTimeout       func(context.Context, time.Duration) (context.Context, context.CancelFunc)
	withDeadline      func(context.Context, time.Time) (context.Context, context.CancelFunc)
	withTimeoutCause  func(context.Context, time.Duration, error) (context.Context, context.CancelFunc)
	withDeadlineCause func(context.Context, time.Time, error) (context.Context, context.CancelFunc)
	now               func() time.Time
	sleep             func(time.Duration) // moves time; every timer due has fired on return
}

// impls returns the contenders, made inside a synctest bubble: package
// context, wheelctx on a real-clock wheel (the bubble's fake time), and
// wheelctx on a virtual clock.
func impls(t *testing.T) []impl {
	std := impl{
		name:              "context",
		withTimeout:       context.WithTimeout,
		withDeadline:      context.WithDeadline,
		withTimeoutCause:  context.WithTimeoutCause,
		withDeadlineCause: context.WithDeadlineCause,
		now:               time.Now,
		sleep:             func(d time.Duration) { time.Sleep(d); synctest.Wait() },
	}
	real := timewheel.New(timewheel.WithExecutor(timewheel.Inline()))
	clk := clock.NewVirtual(time.Now())
	virtual := timewheel.New(timewheel.WithClock(clk), timewheel.WithExecutor(timewheel.Inline()))
	t.Cleanup(func() { real.Close(); virtual.Close() })
	return []impl{
		std,
		onWheel("wheelctx/real", wheelctx.On(real), real.Now, std.sleep),
		onWheel("wheelctx/virtual", wheelctx.On(virtual), clk.Now, func(d time.Duration) { clk.Advance(d); synctest.Wait() }),
	}
}

func onWheel(name string, s wheelctx.Scheduler, now func() time.Time, sleep func(time.Duration)) impl {
	return impl{name, s.WithTimeout, s.WithDeadline, s.WithTimeoutCause, s.WithDeadlineCause, now, sleep}
}

var (
	errCause  = errors.New("the cause")
	errParent = errors.New("the parent's cause")
	key       = ctxKey{}
)

type ctxKey struct{}

// recorder notes what contexts report, so that two runs can be compared.
type recorder struct {
	start time.Time
	now   func() time.Time
	lines []string
	// errFirst: note reads Err and Cause before it asks for Done, so
	// that a wheelctx context is seen before it makes its inner context
	// (see timerCtx).
	errFirst bool
}

func (r *recorder) note(label string, ctx context.Context) {
	var err, cause error
	if r.errFirst {
		err, cause = ctx.Err(), context.Cause(ctx)
	}
	done := false
	select {
	case <-ctx.Done():
		done = true
	default:
	}
	dl, ok := ctx.Deadline()
	deadline := "none"
	if ok {
		deadline = dl.Sub(r.start).String()
	}
	if !r.errFirst {
		err, cause = ctx.Err(), context.Cause(ctx)
	}
	r.lines = append(r.lines, fmt.Sprintf("t=%v %s: done=%v err=%v isDeadline=%v cause=%v deadline=%s",
		r.now().Sub(r.start), label, done, err, errors.Is(err, context.DeadlineExceeded), cause, deadline))
}

func (r *recorder) say(format string, args ...any) {
	r.lines = append(r.lines, fmt.Sprintf("t=%v ", r.now().Sub(r.start))+fmt.Sprintf(format, args...))
}

// scenarios each drive contexts of one impl and note what they see.
var scenarios = []struct {
	name string
	run  func(m impl, r *recorder)
	// realTime: the scenario mixes in package context's own deadlines,
	// which only the impls on the (bubble's) real clock share a time with.
	realTime bool
}{
	{"deadline passes", func(m impl, r *recorder) {
		ctx, cancel := m.withTimeout(context.Background(), time.Second)
		r.note("open", ctx)
		m.sleep(time.Second - time.Millisecond)
		r.note("1ms before", ctx)
		m.sleep(time.Millisecond)
		r.note("at the deadline", ctx)
		cancel()
		r.note("cancel after the deadline", ctx)
	}, false},
	{"cancel before the deadline", func(m impl, r *recorder) {
		ctx, cancel := m.withTimeout(context.Background(), time.Second)
		m.sleep(500 * time.Millisecond)
		cancel()
		r.note("canceled", ctx)
		cancel()
		r.note("canceled twice", ctx)
		m.sleep(time.Second)
		r.note("past the deadline", ctx)
	}, false},
	{"deadline cause", func(m impl, r *recorder) {
		ctx, cancel := m.withTimeoutCause(context.Background(), time.Second, errCause)
		defer cancel()
		m.sleep(time.Second)
		r.note("timed out", ctx)
	}, false},
	{"deadline cause, canceled first", func(m impl, r *recorder) {
		ctx, cancel := m.withDeadlineCause(context.Background(), m.now().Add(time.Second), errCause)
		cancel()
		r.note("canceled", ctx)
		m.sleep(time.Second)
		r.note("past the deadline", ctx)
	}, false},
	{"nil cause", func(m impl, r *recorder) {
		ctx, cancel := m.withTimeoutCause(context.Background(), time.Second, nil)
		defer cancel()
		m.sleep(time.Second)
		r.note("timed out", ctx)
	}, false},
	{"deadline already past", func(m impl, r *recorder) {
		ctx, cancel := m.withDeadline(context.Background(), m.now().Add(-time.Second))
		r.note("born", ctx)
		cancel()
		r.note("canceled", ctx)
		ctx, cancel = m.withTimeout(context.Background(), 0)
		r.note("zero timeout", ctx)
		cancel()
		ctx, cancel = m.withDeadlineCause(context.Background(), m.now(), errCause)
		r.note("deadline now, with cause", ctx)
		cancel()
	}, false},
	{"parent canceled with a cause", func(m impl, r *recorder) {
		parent, pcancel := context.WithCancelCause(context.Background())
		ctx, cancel := m.withTimeout(parent, time.Second)
		defer cancel()
		m.sleep(100 * time.Millisecond)
		pcancel(errParent)
		r.note("right after the parent's cancel", ctx)
		m.sleep(time.Second)
		r.note("past the deadline", ctx)
	}, false},
	{"parent already canceled", func(m impl, r *recorder) {
		parent, pcancel := context.WithCancelCause(context.Background())
		pcancel(errParent)
		ctx, cancel := m.withTimeoutCause(parent, time.Second, errCause)
		defer cancel()
		r.note("born", ctx)
		m.sleep(time.Second)
		r.note("past the deadline", ctx)
	}, false},
	{"parent with an earlier deadline (package context)", func(m impl, r *recorder) {
		parent, pcancel := context.WithTimeoutCause(context.Background(), 500*time.Millisecond, errParent)
		defer pcancel()
		ctx, cancel := m.withTimeoutCause(parent, time.Second, errCause)
		defer cancel()
		r.note("open", ctx)
		m.sleep(500 * time.Millisecond)
		r.note("the parent's deadline", ctx)
	}, true},
	{"nested: parent deadline earlier", func(m impl, r *recorder) {
		parent, pcancel := m.withTimeoutCause(context.Background(), 500*time.Millisecond, errParent)
		defer pcancel()
		ctx, cancel := m.withTimeoutCause(parent, time.Second, errCause)
		defer cancel()
		r.note("open", ctx)
		m.sleep(500 * time.Millisecond)
		r.note("the parent's deadline", ctx)
		r.note("parent", parent)
	}, false},
	{"nested: parent deadline later", func(m impl, r *recorder) {
		parent, pcancel := m.withTimeoutCause(context.Background(), 2*time.Second, errParent)
		defer pcancel()
		ctx, cancel := m.withTimeoutCause(parent, time.Second, errCause)
		defer cancel()
		m.sleep(time.Second)
		r.note("child's deadline", ctx)
		r.note("parent at the child's deadline", parent)
		m.sleep(time.Second)
		r.note("parent's deadline", parent)
	}, false},
	{"nested: parent canceled", func(m impl, r *recorder) {
		parent, pcancel := m.withTimeout(context.Background(), 2*time.Second)
		ctx, cancel := m.withTimeoutCause(parent, time.Second, errCause)
		defer cancel()
		pcancel()
		r.note("child right after the parent's cancel", ctx)
		m.sleep(2 * time.Second)
		r.note("child later", ctx)
	}, false},
	{"derived by package context: deadline", func(m impl, r *recorder) {
		ctx, cancel := m.withTimeoutCause(context.Background(), time.Second, errCause)
		defer cancel()
		child, ccancel := context.WithCancel(ctx)
		defer ccancel()
		grandchild, gcancel := context.WithTimeout(child, time.Hour)
		defer gcancel()
		values := context.WithValue(ctx, key, "v")
		valueChild, vcancel := context.WithCancelCause(values)
		defer vcancel(nil)
		m.sleep(time.Second)
		r.note("child at the deadline", child)
		r.note("grandchild at the deadline", grandchild)
		r.note("child of a value context at the deadline", valueChild)
		r.note("value context at the deadline", values)
		late, lcancel := context.WithCancel(ctx)
		defer lcancel()
		r.note("child made after the deadline", late)
	}, false},
	{"derived by package context: cancel", func(m impl, r *recorder) {
		ctx, cancel := m.withTimeout(context.Background(), time.Second)
		child, ccancel := context.WithCancel(ctx)
		defer ccancel()
		cancel()
		r.note("child right after cancel", child)
	}, false},
	{"derived by package context: parent canceled", func(m impl, r *recorder) {
		parent, pcancel := context.WithCancelCause(context.Background())
		ctx, cancel := m.withTimeout(parent, time.Second)
		defer cancel()
		child, ccancel := context.WithCancel(ctx)
		defer ccancel()
		pcancel(errParent)
		r.note("right after the parent's cancel", ctx)
		r.note("child, right after", child)
	}, false},
	{"derived child canceled on its own", func(m impl, r *recorder) {
		ctx, cancel := m.withTimeout(context.Background(), time.Second)
		defer cancel()
		child, ccancel := context.WithCancel(ctx)
		ccancel()
		r.note("child", child)
		r.note("ctx", ctx)
		m.sleep(time.Second)
		r.note("ctx at the deadline", ctx)
	}, false},
	{"context.AfterFunc", func(m impl, r *recorder) {
		ctx, cancel := m.withTimeout(context.Background(), time.Second)
		defer cancel()
		ran := make(chan string, 2)
		context.AfterFunc(ctx, func() { ran <- "first" })
		stop := context.AfterFunc(ctx, func() { ran <- "stopped" })
		r.say("stop: %v, again: %v", stop(), stop())
		m.sleep(time.Second)
		r.say("ran %q", <-ran)
		context.AfterFunc(ctx, func() { ran <- "after done" })
		synctest.Wait()
		r.say("ran %q", <-ran)
	}, false},
	{"values and WithoutCancel", func(m impl, r *recorder) {
		parent := context.WithValue(context.Background(), key, "v")
		ctx, cancel := m.withTimeout(parent, time.Second)
		defer cancel()
		free := context.WithoutCancel(ctx)
		m.sleep(time.Second)
		r.say("value %v, missing %v", ctx.Value(key), ctx.Value("missing"))
		r.note("WithoutCancel", free)
		r.say("WithoutCancel value %v", free.Value(key))
	}, false},
	{"extreme timeouts", func(m impl, r *recorder) {
		for _, d := range []time.Duration{math.MaxInt64, math.MinInt64, 0, -time.Nanosecond} {
			ctx, cancel := m.withTimeout(context.Background(), d)
			r.note(fmt.Sprintf("timeout %d", d), ctx)
			cancel()
			r.note(fmt.Sprintf("timeout %d, canceled", d), ctx)
		}
	}, false},
	{"extreme deadlines", func(m impl, r *recorder) {
		for _, d := range []struct {
			name string
			t    time.Time
		}{
			{"zero Time", time.Time{}},
			{"now", m.now()},
			{"year 9999", time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC)},
			{"Unix(MaxInt64/2)", time.Unix(math.MaxInt64/2, 0)},
		} {
			ctx, cancel := m.withDeadlineCause(context.Background(), d.t, errCause)
			r.note("deadline "+d.name, ctx)
			cancel()
			r.note("deadline "+d.name+", canceled", ctx)
		}
	}, false},
}

// TestSideBySide runs every scenario on package context and on wheelctx
// and requires identical observations: once with Done asked for first,
// and once with Err and Cause read first.
func TestSideBySide(t *testing.T) {
	for _, errFirst := range []bool{false, true} {
		t.Run(fmt.Sprintf("errFirst=%v", errFirst), func(t *testing.T) { sideBySide(t, errFirst) })
	}
}

func sideBySide(t *testing.T, errFirst bool) {
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var want []string
				for i, m := range impls(t) {
					if sc.realTime && m.name == "wheelctx/virtual" {
						continue
					}
					r := &recorder{start: m.now(), now: m.now, errFirst: errFirst}
					sc.run(m, r)
					if i == 0 {
						want = r.lines
						continue
					}
					if got := strings.Join(r.lines, "\n"); got != strings.Join(want, "\n") {
						t.Errorf("%s differs from package context:\n%s:\n%s\n\ncontext:\n%s",
							m.name, m.name, got, strings.Join(want, "\n"))
					}
				}
			})
		})
	}
}

func TestCancelReleasesTimer(t *testing.T) {
	clk := clock.NewVirtual(time.Unix(1e9, 0))
	w := timewheel.New(timewheel.WithClock(clk), timewheel.WithExecutor(timewheel.Inline()))
	defer w.Close()
	s := wheelctx.On(w)
	ctx, cancel := s.WithTimeout(context.Background(), time.Hour)
	if w.Len() != 1 {
		t.Fatalf("pending timers after WithTimeout: %d, want 1", w.Len())
	}
	cancel()
	if w.Len() != 0 || ctx.Err() != context.Canceled {
		t.Fatalf("after cancel: %d timers pending, Err %v; want 0, Canceled", w.Len(), ctx.Err())
	}
	_, cancel = s.WithTimeout(context.Background(), -time.Second)
	defer cancel()
	if w.Len() != 0 {
		t.Fatalf("a context born expired holds %d timers", w.Len())
	}
}

func TestDefaultWheel(t *testing.T) {
	ctx, cancel := wheelctx.WithTimeout(context.Background(), time.Millisecond)
	defer cancel()
	<-ctx.Done()
	if ctx.Err() != context.DeadlineExceeded {
		t.Fatalf("Err() = %v", ctx.Err())
	}
	ctx, cancel = wheelctx.WithDeadlineCause(context.Background(), time.Now().Add(time.Millisecond), errCause)
	defer cancel()
	<-ctx.Done()
	if context.Cause(ctx) != errCause {
		t.Fatalf("Cause = %v", context.Cause(ctx))
	}
	ctx, cancel = wheelctx.WithDeadline(context.Background(), time.Now().Add(time.Hour))
	cancel()
	ctx2, cancel2 := wheelctx.WithTimeoutCause(ctx, time.Hour, errCause)
	defer cancel2()
	if ctx.Err() != context.Canceled || ctx2.Err() != context.Canceled {
		t.Fatalf("canceled: Err() = %v, child %v", ctx.Err(), ctx2.Err())
	}
}

func TestString(t *testing.T) {
	clk := clock.NewVirtual(time.Unix(1e9, 0).UTC())
	w := timewheel.New(timewheel.WithClock(clk), timewheel.WithExecutor(timewheel.Inline()))
	defer w.Close()
	ctx, cancel := wheelctx.On(w).WithTimeout(context.Background(), time.Second)
	defer cancel()
	want := "context.Background.WithDeadline(2001-09-09 01:46:41 +0000 UTC [1s])"
	if s := fmt.Sprint(ctx); s != want {
		t.Fatalf("String() = %q, want %q", s, want)
	}
}

// TestRaces creates children while the deadline passes and cancels while
// it fires, on a real-clock wheel with its pool, for the race detector.
// Every child must end with the context's error and cause.
func TestRaces(t *testing.T) {
	w := timewheel.New()
	defer w.Close()
	s := wheelctx.On(w)
	for i := range 100 {
		ctx, cancel := s.WithTimeoutCause(context.Background(), time.Duration(i%5)*50*time.Microsecond, errCause)
		type kid struct {
			ctx    context.Context
			cancel context.CancelFunc
		}
		kids := make(chan kid, 2000)
		done := make(chan struct{})
		for range 2 {
			go func() {
				defer func() { done <- struct{}{} }()
				for range 1000 {
					child, ccancel := context.WithCancel(ctx)
					kids <- kid{child, ccancel} // canceled after the checks
					if ctx.Err() != nil {
						return
					}
				}
			}()
		}
		if i%2 == 1 {
			cancel()
		}
		<-done
		<-done
		<-ctx.Done()
		wantErr, wantCause := error(context.DeadlineExceeded), errCause
		if ctx.Err() == context.Canceled {
			wantErr, wantCause = context.Canceled, context.Canceled
		}
		if ctx.Err() != wantErr || context.Cause(ctx) != wantCause {
			t.Fatalf("ctx: Err %v, Cause %v", ctx.Err(), context.Cause(ctx))
		}
		close(kids)
		for k := range kids {
			<-k.ctx.Done()
			if k.ctx.Err() != wantErr || context.Cause(k.ctx) != wantCause {
				t.Fatalf("child: Err %v, Cause %v; want %v, %v", k.ctx.Err(), context.Cause(k.ctx), wantErr, wantCause)
			}
			k.cancel()
		}
		cancel()
	}
}

func TestCancelCtxKeyProbe(t *testing.T) {
	// If package context stops asking Value for its key in Cause, the
	// probe learns nothing and custom causes are lost: fail loudly.
	ctx, cancel := wheelctx.WithTimeoutCause(context.Background(), -1, errCause)
	defer cancel()
	if got := context.Cause(ctx); got != errCause {
		t.Fatalf("Cause = %v, want %v: the cancelCtxKey probe no longer works", got, errCause)
	}
}

// TestClosedWheelStillTimesOut: a context made on a closed wheel falls back
// to package context and still reaches its deadline.
func TestClosedWheelStillTimesOut(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := timewheel.New()
		w.Close()
		ctx, cancel := wheelctx.On(w).WithTimeout(context.Background(), time.Second)
		defer cancel()
		<-ctx.Done()
		if !errors.Is(ctx.Err(), context.DeadlineExceeded) || !errors.Is(context.Cause(ctx), context.DeadlineExceeded) {
			t.Fatalf("Err %v, Cause %v; want DeadlineExceeded", ctx.Err(), context.Cause(ctx))
		}
	})
}
