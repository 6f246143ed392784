package wheelctx_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/timewheel/timewheel"
	"github.com/timewheel/timewheel/wheelctx"
)

// Each test here pins one way wheelctx once differed from package context
// on the way to the end (the differential test finds them all; these
// name them).

// parents are the parents the tests below run on: one only this
// package's contexts can cancel (closed world), one package context can.
func parents(t *testing.T, s wheelctx.Scheduler) map[string]context.Context {
	outer, cancel := s.WithTimeout(context.Background(), time.Hour)
	t.Cleanup(cancel)
	pkg, pcancel := context.WithCancel(context.Background())
	t.Cleanup(pcancel)
	return map[string]context.Context{"background": context.Background(), "wheelctx": outer, "cancelable": pkg}
}

// TestErrNeverAheadOfDone: a goroutine that polls Err and then looks at
// Done without blocking finds Done closed, whether the CancelFunc or the
// deadline ends the context.
func TestErrNeverAheadOfDone(t *testing.T) {
	w := timewheel.New()
	defer w.Close()
	s := wheelctx.On(w)
	n := 2000
	if raceEnabled || testing.Short() {
		n = 500
	}
	for name, parent := range parents(t, s) {
		for _, by := range []string{"cancel", "deadline"} {
			t.Run(name+"/"+by, func(t *testing.T) {
				ahead := 0
				for i := range n {
					d := time.Hour
					if by == "deadline" {
						d = time.Duration(i%4) * 100 * time.Microsecond
					}
					c, cancel := s.WithTimeout(parent, d)
					c.Done()
					seen := make(chan bool)
					go func() {
						for c.Err() == nil {
						}
						select {
						case <-c.Done():
							seen <- false
						default:
							seen <- true
						}
					}()
					if by == "cancel" {
						cancel()
					}
					if <-seen {
						ahead++
					}
					cancel()
				}
				if ahead > 0 {
					t.Errorf("Err non-nil while Done was open in %d of %d tries", ahead, n)
				}
			})
		}
	}
}

var errX = errors.New("errX")

// TestCancelReachesDownAChain: cancelling an ancestor makes every
// descendant done before the cancel returns, at depth 3 with Done asked
// and at depth 50 without, and a CancelFunc called after it records the
// ancestor's cause.
func TestCancelReachesDownAChain(t *testing.T) {
	w := timewheel.New()
	defer w.Close()
	s := wheelctx.On(w)
	for _, rootKind := range []string{"context", "wheelctx"} {
		t.Run(rootKind, func(t *testing.T) {
			var root context.Context
			var cancelRoot func(error)
			if rootKind == "context" {
				root, cancelRoot = context.WithCancelCause(context.Background())
			} else {
				r, cancel := s.WithTimeoutCause(context.Background(), time.Hour, errX)
				root, cancelRoot = r, func(error) { cancel() }
			}
			outer, cancelOuter := s.WithTimeout(root, time.Minute)
			defer cancelOuter()
			inner, cancel := s.WithTimeout(outer, time.Second)
			inner.Done()
			chain := []context.Context{outer, inner}
			p := inner
			for range 48 {
				c, cancel := s.WithTimeout(p, time.Second)
				defer cancel()
				chain = append(chain, c)
				p = c
			}
			cancelRoot(errX)
			want := root.Err()
			for i, c := range chain {
				if c.Err() != want {
					t.Fatalf("level %d right after the root's cancel: Err %v, want %v", i+1, c.Err(), want)
				}
			}
			cancel()
			if got, wantCause := context.Cause(inner), context.Cause(root); got != wantCause {
				t.Fatalf("Cause(inner) after its own cancel = %v, want the root's %v", got, wantCause)
			}
		})
	}
}

// TestNoGoroutinePerDerivedContext: package context attaches a child made
// through context.WithValue, as a request-values middleware makes it,
// without a goroutine, and cancels it with its parent.
func TestNoGoroutinePerDerivedContext(t *testing.T) {
	w := timewheel.New()
	defer w.Close()
	s := wheelctx.On(w)
	type k struct{}
	for name, parent := range parents(t, s) {
		t.Run(name, func(t *testing.T) {
			c, cancel := s.WithTimeoutCause(parent, time.Hour, errX)
			before := runtime.NumGoroutine()
			var kids []context.Context
			for range 1000 {
				kid, kcancel := context.WithCancel(context.WithValue(c, k{}, 1))
				defer kcancel()
				kids = append(kids, kid)
			}
			if got := runtime.NumGoroutine() - before; got > 10 {
				t.Errorf("1000 derived contexts hold %d goroutines", got)
			}
			cancel()
			for i, kid := range kids {
				if kid.Err() != context.Canceled {
					t.Fatalf("derived context %d right after cancel: Err %v", i, kid.Err())
				}
			}
		})
	}
}

// TestDoneIsOneChannel: Done returns the same channel on every call,
// whatever was asked before it.
func TestDoneIsOneChannel(t *testing.T) {
	w := timewheel.New()
	defer w.Close()
	s := wheelctx.On(w)
	for _, bornDone := range []bool{false, true} {
		for name := range parents(t, s) {
			t.Run(fmt.Sprintf("%s/bornDone=%v", name, bornDone), func(t *testing.T) {
				var p context.Context
				var cancelP func()
				switch name {
				case "background":
					p, cancelP = context.Background(), func() {}
				case "wheelctx":
					p, cancelP = s.WithTimeout(context.Background(), time.Hour)
				default:
					p, cancelP = context.WithCancel(context.Background())
				}
				if bornDone {
					cancelP()
				}
				c, cancel := s.WithTimeout(p, time.Hour)
				defer cancel()
				cancelP()
				if name == "background" {
					cancel()
				}
				c.Err()
				d1 := c.Done()
				context.Cause(c)
				d2 := c.Done()
				if d1 != d2 {
					t.Fatal("Done returned another channel on a later call")
				}
				select {
				case <-d1:
				default:
					t.Fatal("Done open after the context was canceled")
				}
			})
		}
	}
}

// TestCanceledParentReleases: a parent's cancel releases its children's
// wheel timers and memory, although their CancelFuncs are never called.
func TestCanceledParentReleases(t *testing.T) {
	n := 100_000
	if raceEnabled {
		n = 20_000
	}
	for _, kind := range []string{"wheelctx", "cancelable"} {
		for _, useDone := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/done=%v", kind, useDone), func(t *testing.T) {
				w := timewheel.New()
				defer w.Close()
				s := wheelctx.On(w)
				before := heapObjects()
				p, cancelP := context.WithCancel(context.Background())
				if kind == "wheelctx" {
					p, cancelP = s.WithTimeout(context.Background(), time.Hour)
				}
				for range n {
					c, _ := s.WithTimeout(p, time.Hour) // the CancelFunc forgotten
					if useDone {
						c.Done()
					}
				}
				cancelP()
				if got := w.Len(); got != 0 {
					t.Errorf("%d wheel timers pending after the parent's cancel, want 0", got)
				}
				if got := heapObjects() - before; got > int64(n/4) {
					t.Errorf("%d heap objects kept after the parent's cancel (%d children)", got, n)
				}
			})
		}
	}
}

// heapObjects returns the live heap objects after a collection.
func heapObjects() int64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapObjects)
}

// TestCancelRacesParentDeadline: a child's CancelFunc racing its parent's
// deadline ends it with one pair of Err and Cause that package context
// can give: its own (Canceled, Canceled) or the parent's.
func TestCancelRacesParentDeadline(t *testing.T) {
	w := timewheel.New()
	defer w.Close()
	s := wheelctx.On(w)
	n := 100
	if testing.Short() {
		n = 30
	}
	for _, parentKind := range []string{"wheelctx", "context"} {
		t.Run("parent="+parentKind, func(t *testing.T) {
			for i := range n {
				withTimeoutCause := s.WithTimeoutCause
				if parentKind == "context" {
					withTimeoutCause = context.WithTimeoutCause
				}
				parent, pcancel := withTimeoutCause(context.Background(), 200*time.Microsecond, errX)
				var kids []context.Context
				var cancels []context.CancelFunc
				for j := range 40 {
					child, cancel := s.WithTimeout(parent, time.Hour)
					if j%2 == 0 {
						child.Done()
					}
					kids, cancels = append(kids, child), append(cancels, cancel)
				}
				// Cancel the children as the parent's timer fires, while its
				// end reaches them.
				var wg sync.WaitGroup
				for g := range 2 {
					wg.Go(func() {
						for parent.Err() == nil {
						}
						for j := g; j < len(cancels); j += 2 {
							cancels[j]()
						}
					})
				}
				<-parent.Done()
				wg.Wait()
				for j, child := range kids {
					err, cause := child.Err(), context.Cause(child)
					if !(err == context.Canceled && cause == context.Canceled || err == context.DeadlineExceeded && cause == errX) {
						t.Fatalf("try %d, child %d: Err %v with Cause %v", i, j, err, cause)
					}
				}
				pcancel()
			}
		})
	}
}

// TestConcurrentChains: random chains of every kind, cancelled at random
// levels from several goroutines while others read: Err is never ahead
// of Done, never changes once set, and comes with its own Cause; once
// every cancel has returned, every level below one is done.
func TestConcurrentChains(t *testing.T) {
	w := timewheel.New()
	defer w.Close()
	s := wheelctx.On(w)
	n := 300
	if raceEnabled || testing.Short() {
		n = 150
	}
	for seed := range uint64(n) {
		r := rand.New(rand.NewPCG(seed, 7))
		root, cancelRoot := context.WithCancelCause(context.Background())
		ctxs := []context.Context{root}
		cancels := []func(){func() { cancelRoot(errX) }}
		levelOf := []int{0} // the level of each cancel's context
		p := context.Context(root)
		if r.IntN(2) == 0 {
			p = context.Background()
			ctxs, cancels, levelOf = nil, nil, nil
		}
		for i := range 2 + r.IntN(10) {
			var c context.Context
			var cancel func()
			cause := fmt.Errorf("cause %d", i)
			switch r.IntN(5) {
			case 0:
				cc, cf := context.WithCancelCause(p)
				c, cancel = cc, func() { cf(cause) }
			case 1:
				c = context.WithValue(p, levelKey(i), i)
			case 2:
				c, cancel = s.WithTimeoutCause(p, time.Duration(r.IntN(3))*100*time.Microsecond, cause)
			default:
				c, cancel = s.WithTimeoutCause(p, time.Hour, cause)
			}
			if r.IntN(2) == 0 {
				c.Done()
			}
			if cancel != nil {
				cancels = append(cancels, cancel)
				levelOf = append(levelOf, len(ctxs))
			}
			ctxs = append(ctxs, c)
			p = c
		}
		if len(cancels) == 0 {
			continue
		}
		stop := make(chan struct{})
		var readers sync.WaitGroup
		var mu sync.Mutex
		var problems []string
		for range 2 {
			readers.Go(func() {
				seen := make([]error, len(ctxs))
				for {
					for i, c := range ctxs {
						err := c.Err()
						if err != nil {
							select {
							case <-c.Done():
							default:
								mu.Lock()
								problems = append(problems, fmt.Sprintf("level %d: Err %v with Done open", i, err))
								mu.Unlock()
							}
						}
						if seen[i] != nil && err != seen[i] {
							mu.Lock()
							problems = append(problems, fmt.Sprintf("level %d: Err changed from %v to %v", i, seen[i], err))
							mu.Unlock()
						}
						if err != nil {
							seen[i] = err
						}
					}
					select {
					case <-stop:
						return
					default:
					}
				}
			})
		}
		var cancellers sync.WaitGroup
		picked := r.Perm(len(cancels))[:1+r.IntN(len(cancels))]
		top := len(ctxs)
		for _, j := range picked {
			cancellers.Go(cancels[j])
			top = min(top, levelOf[j])
		}
		cancellers.Wait()
		for i := top; i < len(ctxs); i++ {
			if ctxs[i].Err() == nil {
				t.Fatalf("seed %d: level %d open after level %d's cancel returned", seed, i, top)
			}
		}
		close(stop)
		readers.Wait()
		if len(problems) > 0 {
			t.Fatalf("seed %d: %v", seed, problems[0])
		}
		for i, c := range ctxs {
			err, cause := c.Err(), context.Cause(c)
			if (err == nil) != (cause == nil) || err == context.Canceled && errors.Is(cause, context.DeadlineExceeded) {
				t.Fatalf("seed %d level %d: Err %v with Cause %v", seed, i, err, cause)
			}
		}
		for _, cancel := range cancels {
			cancel()
		}
		cancelRoot(nil)
	}
}

// TestVirtualClockDifferences pins the package doc's difference on a wheel
// whose clock is not the real one, on a parent that package context can
// cancel: package context's children of a context that times out see
// Canceled with the cause DeadlineExceeded, and the parent's cancel
// leaves the wheel timer until Err is read.
func TestVirtualClockDifferences(t *testing.T) {
	clk, w, s := virtual(t)
	parent, pcancel := context.WithCancel(context.Background())
	defer pcancel()
	c, cancel := s.WithTimeout(parent, time.Second)
	defer cancel()
	child, ccancel := context.WithCancel(c)
	defer ccancel()
	clk.Advance(time.Second)
	if c.Err() != context.DeadlineExceeded || child.Err() != context.Canceled || context.Cause(child) != context.DeadlineExceeded {
		t.Fatalf("at the deadline: Err %v; child's Err %v, Cause %v; want DeadlineExceeded; Canceled, DeadlineExceeded",
			c.Err(), child.Err(), context.Cause(child))
	}
	c2, cancel2 := s.WithTimeout(parent, time.Hour)
	defer cancel2()
	pcancel()
	if w.Len() != 1 {
		t.Fatalf("after the parent's cancel: %d wheel timers, want 1 (still pending)", w.Len())
	}
	if c2.Err() != context.Canceled || w.Len() != 0 {
		t.Fatalf("after Err: Err %v, %d wheel timers; want Canceled, 0", c2.Err(), w.Len())
	}
}
