package expiry

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/timewheel/timewheel/internal/ticks"
)

// A Loader makes the value of a key the map does not hold, and says how
// long it may live: the ttl must be positive ([NoTTL] for a value that
// never expires). An error is returned to the callers and not stored.
type Loader[K comparable, V any] func(ctx context.Context, k K) (v V, ttl time.Duration, err error)

// call is one run of a Loader, which the callers that ask for its key
// while it runs wait for.
type call[V any] struct {
	done   chan struct{} // closed when val and err are set
	val    V
	err    error
	joined bool // guarded by the shard's mu; a GetOrLoad waits for it
}

// loading is the chain of calls a context runs the loaders of. A loader
// that asks, through its context, for a key it is loading, or one whose
// loader waits for it, is so refused instead of waiting for itself.
type loading struct {
	c    any // *call[V]
	next *loading
}

type loadingKey struct{}

// GetOrLoad returns the value stored under k, as Get does; on a miss it
// calls load to make it, stores it with the ttl load returns, and returns
// it. Concurrent callers that miss the same key share one call of a
// loader. The first one runs its load; the others wait for it and get its
// value and error. A caller whose ctx is done stops waiting with
// ctx.Err(). The loader runs on the first caller's goroutine with a
// context derived from its ctx. An error from the loader is returned to
// every caller that waited and is stored nowhere; the next GetOrLoad
// calls a loader again. The same holds for a ttl that is not positive (an
// error wrapping [ErrTTL] naming the ttl and the key), and for a value
// heavier than the map's maximum weight (ErrTooHeavy). If the key is Set while the
// loader runs, that value wins and is returned. On a closed map GetOrLoad
// returns ErrClosed (with the value, if a loader made one), and on a
// closed wheel an error wrapping it and timewheel.ErrClosed.
//
// A loader may use the map, but it must not ask for a key its own call
// (or a call it waits for) is loading: that would wait for itself. Asked
// through the context the loader is given, or one derived from it,
// GetOrLoad sees the cycle and panics. Asked with any other context, such
// as context.Background(), it cannot: Go gives a goroutine no identity to
// tell the loader's call from another's. GetOrLoad waits for the load,
// which waits for it, until that context is done; GetOrLoad then returns
// ctx.Err() to the loader. With a context that is never done, they hang
// for good, as singleflight's Do does when its function calls Do with its
// own key. So does a loader that waits, by any other means, for a
// goroutine blocked in GetOrLoad of its key. A loader that panics panics
// its caller; the callers waiting for it get an error saying so.
// GetOrLoad panics if ctx or load is nil. The complexity is O(1) plus the
// loader; a hit costs what Get costs.
func (m *Map[K, V]) GetOrLoad(ctx context.Context, k K, load Loader[K, V]) (V, error) {
	if ctx == nil {
		panic("expiry: GetOrLoad called with a nil context")
	}
	if load == nil {
		panic("expiry: GetOrLoad called with a nil loader")
	}
	m.init()
	m.checkKey("GetOrLoad", k)
	if v, ok := m.get(k); ok {
		return v, nil
	}
	var zero V
	var got, mine bool // set since the miss; a load started here
	var v V
	var c *call[V]
	var err error
	var at found[K, V]
	m.access(k, func(f found[K, V]) {
		at = f
		switch c = f.s.loads[k]; {
		case f.live:
			v, got = f.e.val, true
		case f.s.closed:
			err = ErrClosed
		case c != nil:
			c.joined = true
		default:
			c, mine = &call[V]{done: make(chan struct{})}, true
			if f.s.loads == nil {
				f.s.loads = make(map[K]*call[V])
			}
			f.s.loads[k] = c
		}
	})
	switch {
	case got:
		return v, nil
	case err != nil:
		return zero, err
	case !mine:
		for l, _ := ctx.Value(loadingKey{}).(*loading); l != nil; l = l.next {
			if l.c == any(c) {
				panic(fmt.Sprintf("expiry: GetOrLoad of key %v called from a loader that the load of that key waits for, which would wait for itself", k))
			}
		}
		select {
		case <-c.done:
			return c.val, c.err
		case <-ctx.Done():
			return zero, ctx.Err()
		}
	}
	parent, _ := ctx.Value(loadingKey{}).(*loading)
	return m.runLoad(context.WithValue(ctx, loadingKey{}, &loading{c, parent}), at.s, k, at.h, c, load)
}

// runLoad runs load for c (k's hash is h), stores what it made, and hands
// the result to the callers waiting for c, even if load panics.
func (m *Map[K, V]) runLoad(ctx context.Context, s *shard[K, V], k K, h uint64, c *call[V], load Loader[K, V]) (v V, err error) {
	finished := false
	began := m.now()
	defer func() {
		if !finished {
			m.loaded(began, false)
			c.err = fmt.Errorf("expiry: GetOrLoad: the loader of key %v panicked", k)
			m.endLoad(s, k, c)
		}
	}()
	v, ttl, err := load(ctx, k)
	finished = true
	m.loaded(began, err == nil && ttl > 0)
	switch {
	case err != nil:
		v = *new(V)
	case ttl <= 0:
		v, err = *new(V), fmt.Errorf("%w %v from the loader of key %v", ErrTTL, ttl, k)
	default:
		v, err = m.storeLoaded(s, k, h, v, ttl)
	}
	c.val, c.err = v, err
	m.endLoad(s, k, c)
	return v, err
}

// storeLoaded stores v, made by a loader, under k for ttl, unless k was
// Set meanwhile: then it returns the value set. It returns v and
// ErrClosed if the map or its wheel is closed, and an error wrapping
// ErrTooHeavy for a value heavier than the map's maximum weight.
func (m *Map[K, V]) storeLoaded(s *shard[K, V], k K, h uint64, v V, ttl time.Duration) (V, error) {
	if err := m.w.Err(); err != nil {
		return v, fmt.Errorf("%w: %w", ErrClosed, err)
	}
	if err := m.tooHeavy(k, v); err != nil {
		var zero V
		return zero, err
	}
	var err error
	m.deliver(s.access(k, h, m.now(), func(f found[K, V]) {
		switch {
		case f.s.closed:
			err = ErrClosed
		case f.live:
			v = f.e.val
		default:
			f.s.setLocked(f.e, k, h, v, ttl, ticks.Add(f.now, int64(ttl)), f.now)
		}
	}))
	return v, err
}

// endLoad forgets c, whose val and err are set, and wakes its waiters.
func (m *Map[K, V]) endLoad(s *shard[K, V], k K, c *call[V]) {
	s.mu.Lock()
	if s.loads[k] == c {
		delete(s.loads, k)
	}
	s.mu.Unlock()
	close(c.done)
}

// loadCounts are the loader statistics of a Map: every call of a Loader,
// a BulkLoader or a reload of WithRefresh.
type loadCounts struct {
	calls, failures atomic.Uint64
	nanos           atomic.Int64 // time spent in the calls, by the wheel's clock
}

// loaded counts a loader call that began at began (m.now()) and ended
// now, and whether it made a value.
func (m *Map[K, V]) loaded(began int64, ok bool) {
	m.loads.calls.Add(1)
	if !ok {
		m.loads.failures.Add(1)
	}
	m.loads.nanos.Add(m.now() - began)
}
