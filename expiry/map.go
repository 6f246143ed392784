package expiry

import (
	"errors"
	"fmt"
	"hash/maphash"
	"iter"
	"log/slog"
	"math"
	"reflect"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/timewheel/timewheel"
	"github.com/timewheel/timewheel/internal/stripe"
	"github.com/timewheel/timewheel/internal/ticks"
)

// ErrTTL is returned, wrapped with the value, for a time to live that is
// zero or negative: an entry must live for some time. Use Delete to remove
// an entry now.
var ErrTTL = errors.New("expiry: non-positive ttl")

// NoTTL is the time to live of an entry that never expires. Set it, or
// return it from a Loader, and the entry stays until it is deleted,
// replaced, evicted for capacity (last of all) or given a ttl by SetTTL.
// Touch and sliding reads leave it as it is; TTL reports the time left to
// the end of time, over 290 years. Any ttl that reaches past the end of
// time (about the year 2262 after now) is the same.
const NoTTL time.Duration = math.MaxInt64

// ErrClosed is returned by Set, Snapshot and Restore on a closed Map, and
// by Close on a Map closed already. Set, SetTTL and Restore on a Map whose
// wheel is closed return an error wrapping both it and
// [timewheel.ErrClosed].
var ErrClosed = errors.New("expiry: map closed")

// Map is a map from K to V whose entries expire, each at its own deadline,
// through the timers of a [timewheel.Wheel]. See the package documentation
// for the expiry model, the eviction callbacks and the costs.
//
// The zero Map is an empty map, as New with no options makes it: the
// default wheel, [DefaultGranularity], no capacity, no callback. It takes
// that configuration on its first call, so a Map may be declared as a
// variable or a struct field and used at once, like a sync.Map. A Map
// must not be copied after first use. A Map is safe for concurrent use.
//
// A K of interface type may hold a key Go's maps cannot hash (a slice, a
// map, a func). Every method given one panics, as sync.Map's do, with a
// message naming the type, before it touches the map. A key that is or
// holds a floating-point NaN is never equal to itself, so no lookup finds
// it. Get, TTL, Touch and Delete find nothing under it, as a Go map would;
// Set panics rather than store an entry that could never leave.
//
// A Map lives on its wheel's timers. Once the wheel is closed, entries no
// longer leave at their deadlines: readers still never see one past its
// deadline, but it stays in memory and its Expired callback never comes.
// Set, SetTTL and Restore then return an error and Touch returns false.
// Close the map before its wheel.
//
// Len, All, Flush, Close, Snapshot, Restore and Stats panic on a nil *Map,
// naming themselves: "expiry: Len called on a nil *Map". The methods a
// cache calls for every key (Get, Set, GetOrLoad, TTL, Touch, SetTTL,
// Delete, the atomic updates and the bulk reads) do not check; they die
// with a nil dereference.
type Map[K comparable, V any] struct {
	// Locking, and what Gets read without it: see shard.
	//
	// ready is set once the fields up to initMu, and idle.L, are: by New,
	// or by the first call on a zero Map. They are not written again.
	// The fields a Get reads come first, on as few cache lines as can be.
	ready   atomic.Bool
	keys    keyKind // what checkKey must check of a key
	sliding bool    // Get renews
	vals    valMode // how a Set stores a value that Gets read without the lock
	inline  bool
	bounded bool // capacity or maxWeight: one shard, and its buckets in order
	hooks   bool // a weigher, refresh, ages, or an insert or update callback: see hooks.go
	w       *timewheel.Wheel
	epoch   time.Time        // the zero of deadlines; read with w.Since
	refresh *refresher[K, V] // nil without WithRefresh
	seed    maphash.Seed     // of the hash that picks a key's shard
	mask    uint64           // len(shards)-1, a power of two less one
	shards  []shard[K, V]    // each padded: no two share a written cache line

	gran         int64  // bucket span, ns
	capacity     int    // 0: no bound
	maxWeight    uint64 // 0: no bound
	weigher      func(K, V) uint64
	onEvict      func(K, V, Reason)
	onInsert     func(K, V)
	onUpdate     func(K, V, V)
	panicHandler func(any)
	logger       *slog.Logger    // nil: slog.Default() at the time of logging
	ages         *ageTable[K, V] // nil without WithAges
	initMu       sync.Mutex      // serialises the configuration of a zero Map

	closed atomic.Bool // Close was called

	hits, misses stripe.Counter // Get calls, by outcome
	loads        loadCounts     // loader calls

	// Delivery of the eviction callbacks of every shard, in the order the
	// entries left.
	evMu       sync.Mutex
	idle       sync.Cond     // signalled when delivering goes false; uses evMu
	events     []event[K, V] // guarded by evMu; callbacks not yet delivered
	delivering bool          // guarded by evMu; a goroutine is delivering events
	backlog    atomic.Int64  // callbacks queued and not yet started
}

// entry is one key's node: in its shard's items by key, and in its
// bucket's list. Which of its fields are read without a lock, and how, is
// told in Locking, on shard.
type entry[K comparable, V any] struct {
	val        V // first, so that it is aligned for in-place atomics; see valMode
	key        K
	deadline   atomic.Int64  // ns after m.epoch, or writing; see Locking, on shard
	ttl        atomic.Int64  // ns; what Touch renews by; written under the shard's mu
	prev, next *entry[K, V]  // the bucket's list; guarded by the shard's mu
	b          *bucket[K, V] // guarded by the shard's mu
}

// New returns an empty Map configured by opts. It starts no goroutine
// and sets no timer until entries are set. New panics on a nil Option,
// naming its place, and if the callback of WithOnEvict is not a
// func(K, V, Reason) for this Map's K and V.
func New[K comparable, V any](opts ...Option) *Map[K, V] {
	cfg := config{granularity: DefaultGranularity}
	for i, o := range opts {
		if o == nil {
			panic(fmt.Sprintf("expiry: New: option %d is nil", i))
		}
		o(&cfg)
	}
	m := new(Map[K, V])
	m.configure(cfg)
	m.ready.Store(true)
	return m
}

// configure sets m's fields from cfg.
func (m *Map[K, V]) configure(cfg config) {
	if cfg.wheel == nil {
		cfg.wheel = timewheel.Default()
	}
	m.keys = keyKindOf(reflect.TypeFor[K]())
	m.w = cfg.wheel
	m.gran = int64(max(cfg.granularity, cfg.wheel.Resolution()))
	m.capacity = cfg.capacity
	if cfg.weigher != nil {
		f, ok := cfg.weigher.(func(K, V) uint64)
		if !ok {
			panic(fmt.Sprintf("expiry: New: WithMaxWeight weigher is %T, want %T", cfg.weigher, f))
		}
		m.maxWeight, m.weigher = cfg.maxWeight, f
	}
	m.bounded = m.capacity > 0 || m.weigher != nil
	if cfg.ages {
		m.ages = new(ageTable[K, V])
	}
	m.inline = cfg.inline
	m.sliding = cfg.sliding
	m.vals = valModeOf(reflect.TypeFor[V]())
	m.panicHandler = cfg.panicHandler
	if cfg.onEvict != nil {
		f, ok := cfg.onEvict.(func(K, V, Reason))
		if !ok {
			panic(fmt.Sprintf("expiry: New: WithOnEvict callback is %T, want %T", cfg.onEvict, f))
		}
		m.onEvict = f
	}
	if cfg.onInsert != nil {
		f, ok := cfg.onInsert.(func(K, V))
		if !ok {
			panic(fmt.Sprintf("expiry: New: WithOnInsert callback is %T, want %T", cfg.onInsert, f))
		}
		m.onInsert = f
	}
	if cfg.onUpdate != nil {
		f, ok := cfg.onUpdate.(func(K, V, V))
		if !ok {
			panic(fmt.Sprintf("expiry: New: WithOnUpdate callback is %T, want %T", cfg.onUpdate, f))
		}
		m.onUpdate = f
	}
	m.logger = cfg.logger
	if cfg.refreshLoad != nil {
		m.refresh = newRefresher[K, V](cfg)
	} else if cfg.refreshErr != nil {
		panic("expiry: New: WithRefreshErrorHandler without WithRefresh")
	}
	if m.panicHandler == nil {
		m.panicHandler = m.logPanic
	}
	m.seed = maphash.MakeSeed()
	m.shards = make([]shard[K, V], shardCount(m.bounded))
	m.mask = uint64(len(m.shards) - 1)
	for i := range m.shards {
		m.shards[i].m = m
	}
	m.epoch = m.w.Now()
	m.hooks = m.weigher != nil || m.refresh != nil || m.ages != nil || m.onInsert != nil || m.onUpdate != nil
	m.idle.L = &m.evMu
}

// notNil panics if m is nil, naming method, the exported method called.
func (m *Map[K, V]) notNil(method string) {
	if m == nil {
		panic("expiry: " + method + " called on a nil *Map")
	}
}

// init configures a zero Map as New with no options would, on its first
// call; every exported method calls it first.
func (m *Map[K, V]) init() {
	if !m.ready.Load() {
		m.initSlow()
	}
}

func (m *Map[K, V]) initSlow() {
	m.initMu.Lock()
	defer m.initMu.Unlock()
	if !m.ready.Load() {
		m.configure(config{granularity: DefaultGranularity})
		m.ready.Store(true)
	}
}

// checkKey panics, before any lock is taken, if k is a key Go's maps
// cannot hash, which only a K of interface type can hold. For Set, it
// also panics if k is or holds a NaN: no lookup finds such a key, so its
// entry could never be read, deleted or expired.
func (m *Map[K, V]) checkKey(op string, k K) {
	if m.keys != plainKeys {
		if p := keyProblem(k, m.keys, op == "Set"); p != "" {
			panic(fmt.Sprintf("expiry: %s called with a %s", op, p))
		}
	}
}

// checkNewKey is checkKey for a method other than Set that may store k.
func (m *Map[K, V]) checkNewKey(op string, k K) {
	if m.keys != plainKeys {
		if p := keyProblem(k, m.keys, true); p != "" {
			panic(fmt.Sprintf("expiry: %s called with a %s", op, p))
		}
	}
}

// keyKind is what a key of a type K may be that a Go map cannot handle.
type keyKind uint8

const (
	plainKeys keyKind = iota // nothing: the compiler checked it all
	floatKeys                // a NaN: K holds a float
	anyKeys                  // a NaN or an unhashable value: K is or holds an interface
)

// keyKindOf returns the keyKind of keys of type t.
func keyKindOf(t reflect.Type) keyKind {
	switch t.Kind() {
	case reflect.Interface:
		return anyKeys
	case reflect.Float32, reflect.Float64, reflect.Complex64, reflect.Complex128:
		return floatKeys
	case reflect.Array:
		return keyKindOf(t.Elem())
	case reflect.Struct:
		kind := plainKeys
		for i := range t.NumField() {
			kind = max(kind, keyKindOf(t.Field(i).Type))
		}
		return kind
	}
	return plainKeys
}

// keyProblem says why k, of a K of the given kind, cannot be a key of the
// map, or returns "". The problem is that k is unhashable or, if set, is
// or holds a NaN.
func keyProblem[K comparable](k K, kind keyKind, set bool) string {
	if kind == anyKeys {
		if v := reflect.ValueOf(any(k)); v.IsValid() && !v.Comparable() { // a nil interface is a key
			return fmt.Sprintf("key of unhashable type %T", k)
		}
	}
	if set && k != k {
		return fmt.Sprintf("key holding NaN (%v), which no lookup finds", k)
	}
	return ""
}

// now returns the wheel's time in ns after m.epoch.
func (m *Map[K, V]) now() int64 { return int64(m.w.Since(m.epoch)) }

// Set stores v under k for ttl, replacing any value k had (whose callback
// then says Replaced). It stores nothing, and returns an error, if:
//   - ttl is not positive: an error wrapping ErrTTL that repeats ttl;
//   - the map is closed: ErrClosed;
//   - the map's wheel is closed: one wrapping ErrClosed and
//     timewheel.ErrClosed;
//   - v alone is heavier than the map's maximum weight (WithMaxWeight):
//     one wrapping ErrTooHeavy.
//
// In a full map, a new key first evicts the entry closest to expiry. Set
// locks k's shard only.
//
// A Set of a key that is there allocates nothing if V is a pointer (a *T,
// a map, a chan, a func). Nor does it for a V of one word or four bytes
// without pointers (an int, a float64, a time.Duration). Any other
// V (a string, a slice, an interface, a larger struct) costs one
// allocation of an entry per such Set; so does a Set that moves the
// deadline earlier (a shorter ttl). A pointer to a struct keeps large
// values without copying them. The complexity is O(1), plus O(log B)
// with a capacity when it opens or closes a bucket.
func (m *Map[K, V]) Set(k K, v V, ttl time.Duration) error {
	m.init()
	if ttl <= 0 {
		return fmt.Errorf("%w %v", ErrTTL, ttl)
	}
	m.checkKey("Set", k)
	if err := m.w.Err(); err != nil {
		return fmt.Errorf("%w: %w", ErrClosed, err)
	}
	if m.hooks {
		if err := m.tooHeavy(k, v); err != nil {
			return err
		}
	}
	var err error
	m.access(k, func(f found[K, V]) {
		if f.s.closed {
			err = ErrClosed
			return
		}
		f.s.setLocked(f.e, k, f.h, v, ttl, ticks.Add(f.now, int64(ttl)), f.now)
	})
	return err
}

// Get returns the value stored under k and true, or the zero V and false
// if k has none or its deadline has passed. With [WithSliding], a Get
// that finds the entry renews it, as Touch does, unless the renewal would
// move its deadline by less than the sliding tolerance. Get takes no
// lock, and Gets on different processors write no common cache line. (A
// Get that keeps meeting writers in k's shard takes its read lock.) The
// complexity is O(1).
func (m *Map[K, V]) Get(k K) (V, bool) {
	m.init()
	m.checkKey("Get", k)
	return m.get(k)
}

// get is Get after the checks.
func (m *Map[K, V]) get(k K) (V, bool) {
	s, h := m.locate(k)
	now := m.now()
	if e, ok := s.items.lookup(k, h); ok {
		if e == nil {
			return m.miss()
		}
		if v, d, ok := m.readVal(e); ok {
			if d <= now {
				return m.miss()
			}
			if !m.sliding || m.slide(e, d, now) {
				return m.hit(s, e, v, now)
			}
		}
	}
	// Removals kept shifting entries under the lookup, Sets kept storing
	// the value, or a writer took the entry as a sliding Get renewed it:
	// take the lock.
	s.mu.RLock()
	if e := s.items.find(k, h); e != nil {
		if d := e.deadline.Load(); d > now { // live, read once: a Touch may renew it meanwhile
			v := e.val
			if m.sliding {
				m.slide(e, d, now) // fails only if a Touch renewed it meanwhile
			}
			s.mu.RUnlock()
			return m.hit(s, e, v, now)
		}
	}
	s.mu.RUnlock()
	return m.miss()
}

// hit counts a Get that found v in e, k's entry in s, at now, and checks
// whether e is due for a reload; it returns v and true.
func (m *Map[K, V]) hit(s *shard[K, V], e *entry[K, V], v V, now int64) (V, bool) {
	m.hits.AddPinned()
	if m.refresh != nil {
		m.checkRefresh(s, e, now)
	}
	return v, true
}

// miss counts a Get that found no live entry; it returns the zero V and
// false.
func (m *Map[K, V]) miss() (V, bool) {
	m.misses.AddPinned()
	var zero V
	return zero, false
}

// slide renews e, read at deadline d (live at now), for a sliding Get.
// It renews lazily, as Touch does, and only if that moves the deadline by
// more than min(ttl/16, granularity): the reads of a hot key write
// nothing most of the time. It reports false if the compare-and-swap
// failed: since d was read, a writer froze e, or a Touch or Get renewed it.
func (m *Map[K, V]) slide(e *entry[K, V], d, now int64) bool {
	ttl := e.ttl.Load()
	next := ticks.Add(now, ttl)
	if next-d <= min(ttl>>4, m.gran) {
		return true
	}
	// Later: the bucket e is in comes due first and files it again.
	return e.deadline.CompareAndSwap(d, next)
}

// TTL returns the time k has left to live and true, or 0 and false if k
// has no live entry. For an entry set with [NoTTL] it returns the time
// left to the end of time, NoTTL less the map's age. The complexity is O(1).
func (m *Map[K, V]) TTL(k K) (time.Duration, bool) {
	m.init()
	m.checkKey("TTL", k)
	s, h := m.locate(k)
	now := m.now()
	e, ok := s.items.lookup(k, h)
	var d int64
	if e != nil {
		d = e.deadline.Load()
	}
	if !ok || d == writing {
		s.mu.RLock()
		if e = s.items.find(k, h); e != nil {
			d = e.deadline.Load()
		}
		s.mu.RUnlock()
	}
	if left := d - now; e != nil && left > 0 {
		return time.Duration(left), true
	}
	return 0, false
}

// Touch renews k's entry without rewriting it: its deadline becomes now
// plus the ttl it was Set with, saturated at the end of time. It returns
// false if k has no live entry.
//
// Touch is lazy, as the scheduler's Reset is. It records the later
// deadline and leaves the entry in its bucket, which files the entry
// again when it comes due. Readers check the deadline itself, so they see
// the renewal at once; the entry still leaves within one granularity plus
// a tick of its deadline. Touch takes no lock and writes only the entry,
// so Touches of different keys run in parallel. A renewed entry costs the
// map nothing more until its old bucket fires. The complexity is O(1).
//
// Touch returns false too, and renews nothing, if the map's wheel is
// closed: the entry could not leave at a new deadline (see [Map]).
func (m *Map[K, V]) Touch(k K) bool {
	m.init()
	m.checkKey("Touch", k)
	s, h := m.locate(k)
	now := m.now()
	if m.w.Err() != nil {
		return false
	}
	if e, ok := s.items.lookup(k, h); ok {
		if e == nil {
			return false
		}
		for range lookupTries {
			d := e.deadline.Load()
			if d == writing {
				continue // a writer has it: wait, or take the lock below
			}
			if d <= now {
				return false
			}
			next := ticks.Add(now, e.ttl.Load())
			if next < d {
				break // earlier, which only a clock that goes back makes: move it below
			}
			// Later: the bucket it is in comes due first, and files it
			// again (an entry's bucket is never later than its deadline).
			if next == d || e.deadline.CompareAndSwap(d, next) {
				return true
			}
		}
	}
	ok := false
	m.access(k, func(f found[K, V]) {
		if f.e != nil {
			ttl := f.e.ttl.Load()
			ok = f.s.retimeLocked(f.e, f.h, f.e.freeze(), ticks.Add(f.now, ttl), time.Duration(ttl), f.now)
		}
	})
	return ok
}

// SetTTL gives k's live entry a new time to live, without rewriting its
// value: its deadline becomes now plus ttl, and Touch renews it by ttl
// from then on. It returns false if k has no live entry. It returns false
// and an error, and leaves the entry as it was, if ttl is not positive
// (ErrTTL) or the map's wheel is closed (ErrClosed), as Set does. A later
// deadline is recorded lazily, as Touch does; an earlier one moves the
// entry to its bucket. The complexity is O(1), plus O(log B) with a
// capacity when it opens or closes a bucket.
func (m *Map[K, V]) SetTTL(k K, ttl time.Duration) (bool, error) {
	m.init()
	if ttl <= 0 {
		return false, fmt.Errorf("%w %v", ErrTTL, ttl)
	}
	m.checkKey("SetTTL", k)
	if err := m.w.Err(); err != nil {
		return false, fmt.Errorf("%w: %w", ErrClosed, err)
	}
	ok := false
	m.access(k, func(f found[K, V]) {
		ok = f.e != nil && f.s.retimeLocked(f.e, f.h, f.e.freeze(), ticks.Add(f.now, int64(ttl)), ttl, f.now)
	})
	return ok, nil
}

// Delete removes k's entry and reports whether it had a live one. The
// callback says Deleted; for an entry past its deadline whose timer has
// not run yet, it says Expired and Delete returns false. The complexity is
// O(1), plus O(log B) with a capacity when it closes a bucket.
func (m *Map[K, V]) Delete(k K) bool {
	m.init()
	m.checkKey("Delete", k)
	_, live := m.delete(k)
	return live
}

// Len returns the number of entries in the map. It counts entries past
// their deadline whose bucket has not fired yet (at most one granularity
// plus one tick past it), which Get no longer returns. It reads each
// shard in turn, so under concurrent Sets and Deletes it is a count some
// moment of the call could have seen shard by shard, not one instant.
// The complexity is O(S), S being the number of shards.
func (m *Map[K, V]) Len() int {
	m.notNil("Len")
	m.init()
	n := 0
	for i := range m.shards {
		s := &m.shards[i]
		s.mu.RLock()
		n += s.items.n
		s.mu.RUnlock()
	}
	return n
}

// All returns an iterator over the live entries as they are at the call:
// it copies them, with every shard read-locked at once, so the loop may
// use the map freely. Entries come in deadline order; entries with the
// same deadline come in no set order. The complexity is O(n log n) in
// time and O(n) in memory.
func (m *Map[K, V]) All() iter.Seq2[K, V] {
	m.notNil("All")
	m.init()
	return func(yield func(K, V) bool) {
		recs, _ := m.records(false)
		for _, r := range recs {
			if !yield(r.Key, r.Value) {
				return
			}
		}
	}
}

// Flush waits until every eviction callback queued before the call has
// returned. With WithInlineCallbacks there is nothing to wait for.
//
// Flush panics if it is called from an eviction callback or a panic
// handler, of this Map or of any other. Callbacks run one at a time, so
// there it could wait for itself. The complexity is O(depth of the
// caller's stack), which Flush reads to know, plus the wait.
func (m *Map[K, V]) Flush() {
	m.notNil("Flush")
	m.init()
	if inCallback() {
		panic("expiry: Flush called from an eviction callback, where it could wait for itself; call it outside the callbacks")
	}
	m.evMu.Lock()
	for m.delivering {
		m.idle.Wait()
	}
	m.evMu.Unlock()
}

// Close stops the map: its wheel timers are stopped, its entries are
// dropped without callbacks, and Close waits until the callbacks queued
// before it have returned. Later calls to Set, Snapshot and Restore
// return ErrClosed; Get finds nothing. Close returns ErrClosed if the map
// was closed already.
//
// Called from an eviction callback or a panic handler, of this Map or of
// any other, Close could wait for itself. There it closes the map and
// returns at once. The callbacks queued before it are still delivered; if
// the caller is one of this map's, after it returns. The complexity is O(n
// + B + S), plus the depth of the caller's stack, which Close reads while
// callbacks are being delivered.
func (m *Map[K, V]) Close() error {
	m.notNil("Close")
	m.init()
	if !m.closed.CompareAndSwap(false, true) {
		return ErrClosed
	}
	for i := range m.shards {
		s := &m.shards[i]
		s.mu.Lock()
		s.closeLocked()
		s.mu.Unlock()
	}
	if m.refresh != nil {
		m.refresh.close()
	}
	m.evMu.Lock()
	defer m.evMu.Unlock()
	if m.delivering && inCallback() {
		return nil
	}
	for m.delivering {
		m.idle.Wait()
	}
	return nil
}

// logPanic is the panic handler unless WithPanicHandler sets one: it logs
// v and the stack at level Error to the map's logger.
func (m *Map[K, V]) logPanic(v any) {
	logger := m.logger
	if logger == nil {
		logger = slog.Default()
	}
	logger.Error("expiry: eviction callback panicked", "panic", v, "stack", string(debug.Stack()))
}
