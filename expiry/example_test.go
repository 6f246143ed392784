package expiry_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/timewheel/timewheel"
	"github.com/timewheel/timewheel/clock"
	"github.com/timewheel/timewheel/expiry"
)

// Sessions that leave after 30 minutes idle, with a callback that says why
// each one left. The wheel runs on a virtual clock with inline callbacks,
// as in a test; a program would use expiry.New with no wheel at all.
func Example() {
	clk := clock.NewVirtual(time.Date(2026, 1, 1, 9, 0, 0, 0, time.UTC))
	w := timewheel.New(timewheel.WithClock(clk), timewheel.WithExecutor(timewheel.Inline()))
	defer w.Close()

	sessions := expiry.New[string, string](
		expiry.WithWheel(w),
		expiry.WithInlineCallbacks(),
		expiry.WithOnEvict(func(id, user string, why expiry.Reason) {
			fmt.Printf("%s session %s of %s %s\n", clk.Now().Format("15:04"), id, user, why)
		}),
	)
	defer sessions.Close()

	sessions.Set("s1", "ann", 30*time.Minute)
	sessions.Set("s2", "bob", 30*time.Minute)
	clk.Advance(20 * time.Minute)
	sessions.Touch("s1") // ann is active: 30 more minutes
	sessions.Delete("s2")
	clk.Advance(time.Hour)
	// Output:
	// 09:20 session s2 of bob deleted
	// 09:50 session s1 of ann expired
}

func ExampleMap_Get() {
	clk := clock.NewVirtual(time.Date(2026, 1, 1, 9, 0, 0, 0, time.UTC))
	w := timewheel.New(timewheel.WithClock(clk), timewheel.WithExecutor(timewheel.Inline()))
	defer w.Close()
	m := expiry.New[string, int](expiry.WithWheel(w))
	defer m.Close()

	m.Set("k", 42, time.Second)
	v, ok := m.Get("k")
	fmt.Println(v, ok)
	clk.Advance(time.Second)
	v, ok = m.Get("k")
	fmt.Println(v, ok)
	// Output:
	// 42 true
	// 0 false
}

func ExampleMap_Set() {
	m := expiry.New[string, int]()
	defer m.Close()
	err := m.Set("k", 1, 0)
	fmt.Println(err)
	// Output: expiry: non-positive ttl 0s
}

func ExampleMap_All() {
	clk := clock.NewVirtual(time.Date(2026, 1, 1, 9, 0, 0, 0, time.UTC))
	w := timewheel.New(timewheel.WithClock(clk), timewheel.WithExecutor(timewheel.Inline()))
	defer w.Close()
	m := expiry.New[string, int](expiry.WithWheel(w))
	defer m.Close()

	m.Set("late", 3, 3*time.Hour)
	m.Set("soon", 1, time.Hour)
	m.Set("later", 2, 2*time.Hour)
	for k, v := range m.All() { // closest to expiry first
		fmt.Println(k, v)
	}
	// Output:
	// soon 1
	// later 2
	// late 3
}

// A full map gives up the entry closest to expiry.
func ExampleWithCapacity() {
	m := expiry.New[string, int](
		expiry.WithCapacity(2),
		expiry.WithInlineCallbacks(),
		expiry.WithOnEvict(func(k string, v int, why expiry.Reason) { fmt.Println(k, why) }),
	)
	defer m.Close()
	m.Set("a", 1, time.Hour)
	m.Set("b", 2, time.Minute)
	m.Set("c", 3, time.Hour)
	fmt.Println(m.Len())
	// Output:
	// b capacity
	// 2
}

// A snapshot taken at shutdown and restored at start keeps the sessions
// across a restart; those whose deadline passed meanwhile are evicted as
// expired.
func ExampleMap_Snapshot() {
	t0 := time.Date(2026, 1, 1, 9, 0, 0, 0, time.UTC)
	old := expiry.New[string, string](expiry.WithWheel(timewheel.New(timewheel.WithClock(clock.NewVirtual(t0)))))
	old.Set("s1", "ann", 10*time.Minute)
	old.Set("s2", "bob", time.Hour)
	var file bytes.Buffer
	if err := old.Snapshot(&file); err != nil {
		panic(err)
	}
	old.Close()

	// Restarted 15 minutes later.
	clk := clock.NewVirtual(t0.Add(15 * time.Minute))
	m := expiry.New[string, string](
		expiry.WithWheel(timewheel.New(timewheel.WithClock(clk))),
		expiry.WithInlineCallbacks(),
		expiry.WithOnEvict(func(id, user string, why expiry.Reason) { fmt.Println(id, user, why) }),
	)
	defer m.Close()
	if err := m.Restore(&file); err != nil {
		panic(err)
	}
	ttl, _ := m.TTL("s2")
	fmt.Println("s2 has", ttl, "left")
	// Output:
	// s1 ann expired
	// s2 has 45m0s left
}

// The zero Map is ready to use, configured as New with no options: here
// as a field of a struct, like a sync.Map.
func ExampleMap_zeroValue() {
	var server struct {
		sessions expiry.Map[string, string]
	}
	defer server.sessions.Close()

	server.sessions.Set("s1", "ann", 30*time.Minute)
	user, ok := server.sessions.Get("s1")
	fmt.Println(user, ok)
	// Output: ann true
}

// A value a snapshot cannot hold as it is, here a struct with a func
// field, is an error naming the entry and the type, not a snapshot that
// restores the field as nil.
func ExampleErrUnencodable() {
	type job struct {
		Name string
		Run  func()
	}
	m := expiry.New[string, job]()
	defer m.Close()
	m.Set("j", job{"backup", func() {}}, time.Hour)
	err := m.Snapshot(new(bytes.Buffer))
	fmt.Println(errors.Is(err, expiry.ErrUnencodable))
	fmt.Println(err)
	// Output:
	// true
	// expiry: snapshot cannot hold entry 0 of 1: value of type expiry_test.job: field Run of type func(): gob cannot encode a func
}

// A cache of user names filled from a slower store: one load per missing
// key, however many goroutines ask for it at once; the loader says how
// long each value lives.
func ExampleMap_GetOrLoad() {
	m := expiry.New[int, string]()
	defer m.Close()
	lookup := func(ctx context.Context, id int) (string, time.Duration, error) {
		if id <= 0 {
			return "", 0, fmt.Errorf("no user %d", id) // not stored: asked again next time
		}
		return fmt.Sprint("user", id), 10 * time.Minute, nil
	}
	name, err := m.GetOrLoad(context.Background(), 7, lookup)
	fmt.Println(name, err)
	_, err = m.GetOrLoad(context.Background(), -1, lookup)
	fmt.Println(err, m.Len())
	// Output:
	// user7 <nil>
	// no user -1 1
}

// Sliding expiry: an entry read within its ttl stays, one left alone goes.
func ExampleWithSliding() {
	clk := clock.NewVirtual(time.Date(2026, 1, 1, 9, 0, 0, 0, time.UTC))
	w := timewheel.New(timewheel.WithClock(clk), timewheel.WithExecutor(timewheel.Inline()))
	defer w.Close()
	m := expiry.New[string, int](expiry.WithWheel(w), expiry.WithSliding())
	defer m.Close()

	m.Set("read", 1, time.Minute)
	m.Set("idle", 2, time.Minute)
	for range 5 {
		clk.Advance(30 * time.Second)
		m.Get("read")
	}
	_, read := m.Get("read")
	_, idle := m.Get("idle")
	fmt.Println(read, idle)
	// Output: true false
}

// Entries without a ttl beside entries with one, and a ttl changed in
// place.
func ExampleMap_SetTTL() {
	clk := clock.NewVirtual(time.Date(2026, 1, 1, 9, 0, 0, 0, time.UTC))
	w := timewheel.New(timewheel.WithClock(clk), timewheel.WithExecutor(timewheel.Inline()))
	defer w.Close()
	m := expiry.New[string, string](expiry.WithWheel(w))
	defer m.Close()

	m.Set("config", "v1", expiry.NoTTL)
	m.Set("token", "t1", time.Hour)
	m.SetTTL("token", time.Minute) // revoked soon: the value stays as it is
	clk.Advance(2 * time.Minute)
	_, token := m.Get("token")
	_, config := m.Get("config")
	fmt.Println(token, config)
	// Output: false true
}

// A rate limiter: each client may make 3 requests in a fixed one-minute
// window that starts with its first request. Compute counts atomically,
// and Update keeps the window's deadline, so the count resets when the
// window ends however often the client calls.
func ExampleMap_Compute() {
	clk := clock.NewVirtual(time.Date(2026, 1, 1, 9, 0, 0, 0, time.UTC))
	w := timewheel.New(timewheel.WithClock(clk), timewheel.WithExecutor(timewheel.Inline()))
	defer w.Close()
	requests := expiry.New[string, int](expiry.WithWheel(w))
	defer requests.Close()

	allow := func(client string) bool {
		allowed := false // f runs once per call
		requests.Compute(client, time.Minute, func(n int, found bool) (int, expiry.ComputeOp) {
			if n >= 3 {
				return n, expiry.Keep // over the limit: nothing changes
			}
			allowed = true
			return n + 1, expiry.Update // a new client gets a minute; a known one keeps its window
		})
		return allowed
	}
	for range 4 {
		fmt.Print(allow("ann"), " ")
		clk.Advance(10 * time.Second)
	}
	clk.Advance(30 * time.Second) // 09:01:10: the window that began at 09:00 has ended
	fmt.Println(allow("ann"))
	// Output: true true true false true
}

// GetOrSet returns the value already stored, or stores the one given:
// of two callers racing, both get the first one's value.
func ExampleMap_GetOrSet() {
	m := expiry.New[string, string]()
	defer m.Close()
	v, loaded, _ := m.GetOrSet("leader", "node-a", time.Minute)
	fmt.Println(v, loaded)
	v, loaded, _ = m.GetOrSet("leader", "node-b", time.Minute)
	fmt.Println(v, loaded)
	// Output:
	// node-a false
	// node-a true
}

func ExampleMap_SetIfAbsent() {
	m := expiry.New[string, string]()
	defer m.Close()
	first, _ := m.SetIfAbsent("lock:report", "worker-1", 30*time.Second)
	second, _ := m.SetIfAbsent("lock:report", "worker-2", 30*time.Second)
	fmt.Println(first, second)
	// Output: true false
}

// GetAndDelete takes a one-time code: only one of any number of callers
// gets it.
func ExampleMap_GetAndDelete() {
	m := expiry.New[string, int]()
	defer m.Close()
	m.Set("otp:ann", 493817, 5*time.Minute)
	code, ok := m.GetAndDelete("otp:ann")
	fmt.Println(code, ok)
	code, ok = m.GetAndDelete("otp:ann")
	fmt.Println(code, ok)
	// Output:
	// 493817 true
	// 0 false
}

// Update changes a value and keeps its deadline: the session still ends
// an hour after it started.
func ExampleMap_Update() {
	clk := clock.NewVirtual(time.Date(2026, 1, 1, 9, 0, 0, 0, time.UTC))
	w := timewheel.New(timewheel.WithClock(clk), timewheel.WithExecutor(timewheel.Inline()))
	defer w.Close()
	m := expiry.New[string, string](expiry.WithWheel(w))
	defer m.Close()

	m.Set("s1", "ann, cart empty", time.Hour)
	clk.Advance(20 * time.Minute)
	fmt.Println(m.Update("s1", "ann, 2 items"), m.Update("s2", "bob"))
	v, _ := m.Get("s1")
	ttl, _ := m.TTL("s1")
	fmt.Println(v, ttl)
	// Output:
	// true false
	// ann, 2 items 40m0s
}

// CompareAndSwap changes a value only if it is still the one read.
func ExampleMap_CompareAndSwap() {
	m := expiry.New[string, string]()
	defer m.Close()
	m.Set("job:7", "queued", time.Hour)
	fmt.Println(m.CompareAndSwap("job:7", "queued", "running"))
	fmt.Println(m.CompareAndSwap("job:7", "queued", "running")) // another worker took it
	fmt.Println(m.CompareAndDelete("job:7", "running"))
	// Output:
	// true
	// false
	// true
}

// Refresh ahead of expiry: a value read after half its ttl is reloaded in
// the background, and Gets keep returning the old one until the new one
// is stored. The reload runs on a goroutine of the map's: here the
// example waits for it with an update callback.
func ExampleWithRefresh() {
	clk := clock.NewVirtual(time.Date(2026, 1, 1, 9, 0, 0, 0, time.UTC))
	w := timewheel.New(timewheel.WithClock(clk), timewheel.WithExecutor(timewheel.Inline()))
	defer w.Close()
	version := 1
	reloaded := make(chan string, 1)
	prices := expiry.New[string, string](
		expiry.WithWheel(w),
		expiry.WithRefresh(30*time.Second, func(ctx context.Context, sku string) (string, time.Duration, error) {
			version++
			return fmt.Sprintf("%s v%d", sku, version), time.Minute, nil
		}),
		expiry.WithInlineCallbacks(),
		expiry.WithOnUpdate(func(sku, old, v string) { reloaded <- v }),
	)
	defer prices.Close()

	prices.Set("apple", "apple v1", time.Minute)
	clk.Advance(40 * time.Second)
	v, _ := prices.Get("apple") // due for a reload: returns at once, reloads behind
	fmt.Println(v)
	fmt.Println(<-reloaded)
	v, _ = prices.Get("apple")
	ttl, _ := prices.TTL("apple")
	fmt.Println(v, ttl)
	// Output:
	// apple v1
	// apple v2
	// apple v2 1m0s
}

// GetAllOrLoad fills the keys it misses with one call of the bulk loader,
// as a page of users is read from a store in one query.
func ExampleMap_GetAllOrLoad() {
	m := expiry.New[int, string]()
	defer m.Close()
	m.Set(1, "ann", time.Hour)
	query := func(ctx context.Context, ids []int) (map[int]expiry.Loaded[string], error) {
		fmt.Println("query", ids)
		found := map[int]expiry.Loaded[string]{}
		for _, id := range ids {
			if id != 3 { // no user 3
				found[id] = expiry.Loaded[string]{Value: fmt.Sprint("user", id), TTL: 10 * time.Minute}
			}
		}
		return found, nil
	}
	users, err := m.GetAllOrLoad(context.Background(), []int{1, 2, 3, 4}, query)
	fmt.Println(users, err)
	st := m.Stats()
	fmt.Println(st.Loads, st.LoadFailures)
	// Output:
	// query [2 3 4]
	// map[1:ann 2:user2 4:user4] <nil>
	// 1 0
}

// A cache bounded by the bytes of its values: a new entry that does not
// fit evicts the entries closest to expiry, and one larger than the
// whole bound is refused.
func ExampleWithMaxWeight() {
	pages := expiry.New[string, []byte](
		expiry.WithMaxWeight(1000, func(url string, body []byte) uint64 { return uint64(len(url) + len(body)) }),
		expiry.WithInlineCallbacks(),
		expiry.WithOnEvict(func(url string, _ []byte, why expiry.Reason) { fmt.Println(url, why) }),
	)
	defer pages.Close()
	pages.Set("/a", make([]byte, 500), time.Minute)
	pages.Set("/b", make([]byte, 400), time.Hour)
	pages.Set("/c", make([]byte, 300), time.Hour) // /a, closest to expiry, makes room
	err := pages.Set("/d", make([]byte, 2000), time.Hour)
	fmt.Println(errors.Is(err, expiry.ErrTooHeavy), pages.Stats().Weight)
	// Output:
	// /a capacity
	// true 704
}

// WithAges tells how long the entries that left had been in the map: here
// sessions deleted (logged out) after 5 minutes on average, well before
// their hour.
func ExampleWithAges() {
	clk := clock.NewVirtual(time.Date(2026, 1, 1, 9, 0, 0, 0, time.UTC))
	w := timewheel.New(timewheel.WithClock(clk), timewheel.WithExecutor(timewheel.Inline()))
	defer w.Close()
	m := expiry.New[string, string](expiry.WithWheel(w), expiry.WithAges())
	defer m.Close()
	m.Set("s1", "ann", time.Hour)
	m.Set("s2", "bob", time.Hour)
	clk.Advance(4 * time.Minute)
	m.Delete("s1")
	clk.Advance(2 * time.Minute)
	m.Delete("s2")
	st := m.Stats()
	fmt.Println(st.DeletedAge / time.Duration(st.Deleted))
	// Output: 5m0s
}
