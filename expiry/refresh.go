package expiry

import (
	"context"
	"fmt"
	"reflect"
	"sync"
	"sync/atomic"
	"time"

	"github.com/timewheel/timewheel/internal/stack"
	"github.com/timewheel/timewheel/internal/ticks"
)

// MaxRefreshes is how many background reloads of [WithRefresh] a Map runs
// at once. A Get that finds a value due for a reload while MaxRefreshes
// run starts none; a later Get of the key starts it.
const MaxRefreshes = 64

// refresher is the refresh-ahead state of a Map made WithRefresh.
//
// An entry's value is due for a reload at its write (a Set, a load, an
// Update, a Compute that wrote, a Restore) plus the refresh age. That
// time lives beside the entry, not in it, so maps without refresh pay no
// memory for it. It lives in states, a sync.Map from the entry to a
// refreshState. Every write of a value writes it under the entry's
// shard's lock (see wroteLocked); Gets read it without the lock. A write
// puts a new refreshState, so a reload that ends finds by the pointer
// whether the value it reloaded is still the entry's, and drops its value
// if a write came between.
type refresher[K comparable, V any] struct {
	after  int64 // ns; the refresh age
	load   Loader[K, V]
	onErr  func(K, error) // nil: errors are only counted
	states sync.Map       // *entry[K, V] -> *refreshState

	slots  chan struct{} // MaxRefreshes; a reload holds one while it runs
	ctx    context.Context
	cancel context.CancelFunc
	mu     sync.Mutex     // guards closed and wg.Add
	closed bool           // Close was called: no reload starts
	wg     sync.WaitGroup // reloads running

	done, failed atomic.Uint64 // reloads stored, reloads that failed
}

// refreshState is when an entry's value is due for a reload, and whether
// one runs.
type refreshState struct {
	at   int64 // ns after the map's epoch
	busy atomic.Bool
}

func newRefresher[K comparable, V any](cfg config) *refresher[K, V] {
	load, ok := cfg.refreshLoad.(Loader[K, V])
	if !ok {
		panic(fmt.Sprintf("expiry: New: WithRefresh loader is %T, want %v", cfg.refreshLoad, reflect.TypeFor[Loader[K, V]]()))
	}
	r := &refresher[K, V]{after: int64(cfg.refreshAfter), load: load, slots: make(chan struct{}, MaxRefreshes)}
	if cfg.refreshErr != nil {
		f, ok := cfg.refreshErr.(func(K, error))
		if !ok {
			panic(fmt.Sprintf("expiry: New: WithRefreshErrorHandler handler is %T, want %T", cfg.refreshErr, f))
		}
		r.onErr = f
	}
	r.ctx, r.cancel = context.WithCancel(context.Background())
	return r
}

// wroteLocked records that e got a new value at now: its reload is due
// a refresh age later. The caller holds e's shard's lock, which its
// callers' lock checks cover.
func (r *refresher[K, V]) wroteLocked(e *entry[K, V], now int64) {
	r.states.Store(e, &refreshState{at: ticks.Add(now, r.after)})
}

// movedLocked gives ne, which takes e's place with e's value, e's state.
// The caller holds e's shard's lock, which its callers' lock checks
// cover.
func (r *refresher[K, V]) movedLocked(e, ne *entry[K, V]) {
	if st, ok := r.states.LoadAndDelete(e); ok {
		r.states.Store(ne, st)
	}
}

// checkRefresh starts a reload of e's value, in its key's shard s, if a
// Get that read it at now finds it due and none runs. It takes no lock
// but r.mu, and that only to start one. It is kept out of line, so that
// a Get of a map without refresh carries only the branch that skips it.
//
//go:noinline
func (m *Map[K, V]) checkRefresh(s *shard[K, V], e *entry[K, V], now int64) {
	r := m.refresh
	v, ok := r.states.Load(e)
	if !ok {
		return // e has left, or is being replaced
	}
	st := v.(*refreshState)
	if now < st.at || st.busy.Load() || !st.busy.CompareAndSwap(false, true) {
		return
	}
	select {
	case r.slots <- struct{}{}:
	default:
		st.busy.Store(false) // MaxRefreshes run: a later Get starts it
		return
	}
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		<-r.slots
		return
	}
	r.wg.Add(1)
	r.mu.Unlock()
	go m.refreshOne(s, e.key, st)
}

// refreshOne reloads k, whose value was due at st, and stores the new
// value, unless k was written (or left) meanwhile. An error, a ttl that
// is not positive or a panic of the loader keeps the old value; it is
// counted and handed to the error handler.
//
// The reload is k's load while it runs (in s.loads). A GetOrLoad that
// misses k meanwhile, the old value having expired, waits for it instead
// of calling a loader too. The reload stores its value even though the
// entry it started from is gone, as that GetOrLoad's own load would have.
// If a GetOrLoad is loading k already, the reload leaves it to that load.
func (m *Map[K, V]) refreshOne(s *shard[K, V], k K, st *refreshState) {
	r := m.refresh
	defer func() {
		<-r.slots
		r.wg.Done()
	}()
	c := &call[V]{done: make(chan struct{})}
	s.mu.Lock()
	if s.loads[k] != nil || s.closed {
		s.mu.Unlock()
		st.busy.Store(false)
		return
	}
	if s.loads == nil {
		s.loads = make(map[K]*call[V])
	}
	s.loads[k] = c
	s.mu.Unlock()
	began := m.now()
	v, ttl, err := r.callLoad(context.WithValue(r.ctx, loadingKey{}, &loading{c, nil}), k)
	m.loaded(began, err == nil && ttl > 0)
	if err == nil && ttl <= 0 {
		err = fmt.Errorf("%w %v from the loader of key %v", ErrTTL, ttl, k)
	}
	if err == nil {
		if werr := m.w.Err(); werr != nil {
			err = fmt.Errorf("%w: %w", ErrClosed, werr)
		} else {
			err = m.tooHeavy(k, v)
		}
	}
	if err != nil {
		r.failed.Add(1)
		st.busy.Store(false) // the next Get tries again
		c.err = err
		m.endLoad(s, k, c)
		if r.onErr != nil {
			m.callRefreshErr(k, err)
		}
		return
	}
	c.val = v
	kick := s.access(k, m.hash(k), m.now(), func(f found[K, V]) {
		switch cur, _ := r.states.Load(f.e); {
		case f.s.closed:
			c.err = ErrClosed
		case f.live && cur == any(st), !f.live && c.joined: // no write since the Get that started it; or a GetOrLoad waits
			f.s.setLocked(f.e, k, f.h, v, ttl, ticks.Add(f.now, int64(ttl)), f.now)
			r.done.Add(1)
		case f.live:
			c.val = f.e.val // written since: that value wins
		}
	})
	m.endLoad(s, k, c)
	m.deliver(kick)
}

// callLoad runs the loader for k, turning a panic into an error.
func (r *refresher[K, V]) callLoad(ctx context.Context, k K) (v V, ttl time.Duration, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("expiry: the refresh loader of key %v panicked: %v", k, p)
		}
	}()
	return r.load(ctx, k)
}

// callRefreshErr runs the error handler, recovering a panic for the
// panic handler.
func (m *Map[K, V]) callRefreshErr(k K, err error) {
	defer func() {
		if p := recover(); p != nil {
			m.panicHandler(p)
		}
	}()
	m.refresh.onErr(k, err)
}

// close stops the reloads: none starts from now on, and the running
// ones' context is cancelled. close waits for them, unless it is called
// from one (a loader that closes its map), which it would wait for.
func (r *refresher[K, V]) close() {
	r.mu.Lock()
	r.closed = true
	r.mu.Unlock()
	r.cancel()
	if !stack.Has(refreshFrame) {
		r.wg.Wait()
	}
	r.states.Clear()
}

// refreshFrame is the name of refreshOne's frame, for every K and V.
var refreshFrame = reflect.TypeFor[Reason]().PkgPath() + ".(*Map[...]).refreshOne"
