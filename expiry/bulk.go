package expiry

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// A BulkLoader makes the values of keys the map does not hold, in one
// call. It returns those it found, each with the time it may live: a
// positive ttl, or [NoTTL] for one that never expires. A key it leaves out
// has no value: it is left out of GetAllOrLoad's result too, and stored
// nowhere. An error is returned to the callers and not stored.
type BulkLoader[K comparable, V any] func(ctx context.Context, keys []K) (map[K]Loaded[V], error)

// Loaded is a value a BulkLoader made, with its time to live.
type Loaded[V any] struct {
	Value V
	TTL   time.Duration
}

// ErrNotFound is returned, wrapped with the key, by GetOrLoad when it
// waited for a GetAllOrLoad whose BulkLoader left the key out.
var ErrNotFound = errors.New("expiry: no value for the key")

// GetAll returns the live values of keys, as Get would return them one
// by one (counting a hit or a miss each, renewing sliding entries), in a
// map that holds the keys found. It takes no lock. The complexity is
// O(len(keys)).
func (m *Map[K, V]) GetAll(keys []K) map[K]V {
	m.init()
	got := make(map[K]V, len(keys))
	for _, k := range keys {
		m.checkKey("GetAll", k)
		if v, ok := m.get(k); ok {
			got[k] = v
		}
	}
	return got
}

// GetAllOrLoad returns the values of keys, as GetAll does, and loads the
// keys it misses with one call of load for all of them. It stores each
// value load makes with its ttl, and returns the map of the keys that
// have a value. Loads are shared per key, as GetOrLoad's are. A missing
// key that is being loaded already is not passed to load: GetAllOrLoad
// waits for that load (or for ctx) instead. A GetOrLoad of a key that
// load is loading waits for it too. load is not called if no key is
// missing. load runs on the caller's goroutine with a context derived
// from ctx, which lets GetOrLoad see a call that would wait for itself.
//
// It returns the values it has with an error that joins:
//   - the error of load (the keys load was given then have no value);
//   - an error wrapping ErrTTL naming each key load gave a ttl that is
//     not positive;
//   - the errors of the loads it waited for, and ctx.Err() if ctx ended
//     its wait.
//
// It returns ErrClosed on a closed map. A key load leaves out is missing
// from the result without an error. A load that panics panics the caller,
// after every load it was given has been ended with an error for the
// callers waiting. If a key is Set while load runs, that value wins and
// is returned. GetAllOrLoad panics if ctx or load is nil. The complexity
// is O(len(keys)) plus the loader; it takes the lock of each missing
// key's shard twice, once to claim the key and once to store its value.
func (m *Map[K, V]) GetAllOrLoad(ctx context.Context, keys []K, load BulkLoader[K, V]) (map[K]V, error) {
	if ctx == nil {
		panic("expiry: GetAllOrLoad called with a nil context")
	}
	if load == nil {
		panic("expiry: GetAllOrLoad called with a nil loader")
	}
	m.init()
	got := make(map[K]V, len(keys))
	asked := make(map[K]struct{}, len(keys)) // keys seen, to skip repeats
	var own, waits []K                       // keys this call loads; keys another load is loading
	var calls, waitFor []*call[V]            // their calls, in order
	var errs []error
	now := m.now()
	for _, k := range keys {
		m.checkNewKey("GetAllOrLoad", k)
		if _, seen := asked[k]; seen {
			continue
		}
		asked[k] = struct{}{}
		if v, ok := m.get(k); ok {
			got[k] = v
			continue
		}
		closed := false
		s, h := m.locate(k)
		s.access(k, h, now, func(f found[K, V]) {
			switch c := f.s.loads[k]; {
			case f.s.closed:
				closed = true
			case f.live:
				got[k] = f.e.val // set since the miss
			case c != nil:
				c.joined = true
				waits, waitFor = append(waits, k), append(waitFor, c)
			default:
				c = &call[V]{done: make(chan struct{})}
				if f.s.loads == nil {
					f.s.loads = make(map[K]*call[V])
				}
				f.s.loads[k] = c
				own, calls = append(own, k), append(calls, c)
			}
		})
		if closed {
			m.endLoads(own, calls, ErrClosed)
			return got, ErrClosed
		}
	}
	if len(own) > 0 {
		errs = append(errs, m.runBulkLoad(ctx, own, calls, got, load)...)
	}
	for i, c := range waitFor {
		for l, _ := ctx.Value(loadingKey{}).(*loading); l != nil; l = l.next {
			if l.c == any(c) {
				panic(fmt.Sprintf("expiry: GetAllOrLoad of key %v called from a loader that the load of that key waits for, which would wait for itself", waits[i]))
			}
		}
		select {
		case <-c.done:
			switch {
			case c.err == nil:
				got[waits[i]] = c.val
			case !errors.Is(c.err, ErrNotFound):
				errs = append(errs, c.err)
			}
		case <-ctx.Done():
			return got, errors.Join(append(errs, ctx.Err())...)
		}
	}
	return got, errors.Join(errs...)
}

// runBulkLoad calls load once for keys, whose calls are calls, stores
// the values it makes, adds them to got, and ends every call, even if
// load panics. It returns the errors of the load and of its values.
func (m *Map[K, V]) runBulkLoad(ctx context.Context, keys []K, calls []*call[V], got map[K]V, load BulkLoader[K, V]) (errs []error) {
	var chain *loading
	if parent, _ := ctx.Value(loadingKey{}).(*loading); parent != nil {
		chain = parent
	}
	for _, c := range calls {
		chain = &loading{c, chain}
	}
	finished := false
	began := m.now()
	defer func() {
		if !finished {
			m.loaded(began, false)
			m.endLoads(keys, calls, fmt.Errorf("expiry: GetAllOrLoad: the loader of keys %v panicked", keys))
		}
	}()
	vals, err := load(context.WithValue(ctx, loadingKey{}, chain), keys)
	finished = true
	m.loaded(began, err == nil)
	if err != nil {
		m.endLoads(keys, calls, err)
		return []error{err}
	}
	for i, k := range keys {
		c := calls[i]
		lv, ok := vals[k]
		switch {
		case !ok:
			c.err = fmt.Errorf("%w %v: the bulk loader left it out", ErrNotFound, k)
		case lv.TTL <= 0:
			c.err = fmt.Errorf("%w %v from the bulk loader for key %v", ErrTTL, lv.TTL, k)
			errs = append(errs, c.err)
		default:
			s, h := m.locate(k)
			c.val, c.err = m.storeLoaded(s, k, h, lv.Value, lv.TTL)
			if c.err == nil {
				got[k] = c.val
			} else {
				errs = append(errs, c.err)
			}
		}
		s, _ := m.locate(k)
		m.endLoad(s, k, c)
	}
	return errs
}

// endLoads ends the calls of keys with err.
func (m *Map[K, V]) endLoads(keys []K, calls []*call[V], err error) {
	for i, k := range keys {
		calls[i].err = err
		s, _ := m.locate(k)
		m.endLoad(s, k, calls[i])
	}
}
