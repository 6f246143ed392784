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
