package durable_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/timewheel/timewheel"
	"github.com/timewheel/timewheel/durable"
)

// mustPanic runs f and fails unless it panics with a message that starts
// with want.
func mustPanic(t *testing.T, want string, f func()) {
	t.Helper()
	defer func() {
		t.Helper()
		p := recover()
		if s, _ := p.(string); !strings.HasPrefix(s, want) {
			t.Errorf("panic %v; want one that starts with %q", p, want)
		}
	}()
	f()
}

// Programmer misuse panics with the package, the call and the value.
func TestMisusePanics(t *testing.T) {
	mustPanic(t, "durable: New: nil Redis client", func() { durable.New(nil) })
	rdb := newClient(t, "127.0.0.1:1")
	mustPanic(t, "durable: New: option 1 is nil", func() { durable.New(rdb, durable.WithName("a"), nil) })
	mustPanic(t, `durable: WithName: name "a{b}" is empty or holds a brace`, func() { durable.WithName("a{b}") })
	mustPanic(t, `durable: WithName: name "" is empty`, func() { durable.WithName("") })
	mustPanic(t, "durable: WithHandler: empty kind", func() { durable.WithHandler("", func(context.Context, durable.Job) error { return nil }) })
	mustPanic(t, `durable: WithHandler: nil handler for kind "k"`, func() { durable.WithHandler("k", nil) })
	mustPanic(t, "durable: WithKinds: empty kind", func() { durable.WithKinds("a", "") })
	mustPanic(t, "durable: WithConcurrency: non-positive n 0", func() { durable.WithConcurrency(0) })
	mustPanic(t, "durable: WithBatch: n -1 not in [1, 1000]", func() { durable.WithBatch(-1) })
	mustPanic(t, "durable: WithBatch: n 1001 not in [1, 1000]", func() { durable.WithBatch(1001) })
	mustPanic(t, "durable: WithLease: lease 1ms under 30ms", func() { durable.WithLease(time.Millisecond) })
	mustPanic(t, "durable: WithRetry: non-positive attempts 0", func() { durable.WithRetry(0, durable.Exponential(1, 2)) })
	mustPanic(t, "durable: WithRetry: nil backoff", func() { durable.WithRetry(1, nil) })
	mustPanic(t, "durable: WithPoll: non-positive interval -1s", func() { durable.WithPoll(-time.Second) })
	mustPanic(t, "durable: WithWheel: nil wheel", func() { durable.WithWheel(nil) })
	mustPanic(t, `durable: WithWorkerID: id "a|b" is empty or holds '|'`, func() { durable.WithWorkerID("a|b") })
	mustPanic(t, "durable: Timeout: non-positive timeout 0s", func() { durable.Timeout(0) })
	mustPanic(t, "durable: Retry: non-positive attempts 0", func() { durable.Retry(0, durable.Exponential(1, 2)) })
	mustPanic(t, "durable: Retry: nil backoff", func() { durable.Retry(1, nil) })
	mustPanic(t, "durable: WithTimeout: non-positive timeout -1s", func() { durable.WithTimeout(-time.Second) })
	mustPanic(t, "durable: WithCallTimeout: timeout 1ms under 10ms", func() { durable.WithCallTimeout(time.Millisecond) })
	mustPanic(t, "durable: WithErrorHandler: nil func", func() { durable.WithErrorHandler(nil) })
	mustPanic(t, "durable: WithPanicHandler: nil func", func() { durable.WithPanicHandler(nil) })
	mustPanic(t, `durable: WithHandler: option 0 of kind "k" is nil`, func() {
		durable.WithHandler("k", func(context.Context, durable.Job) error { return nil }, nil)
	})
	// A zero Wheel panics in New, on the caller's goroutine, not later on
	// the worker's.
	mustPanic(t, "durable: New: WithWheel of a zero timewheel.Wheel", func() {
		durable.New(rdb, durable.WithWheel(&timewheel.Wheel{}), durable.WithHandler("k", func(context.Context, durable.Job) error { return nil }))
	})
	var zero durable.Queue
	mustPanic(t, "durable: Schedule on a Queue not made by New", func() { zero.Schedule(context.Background(), "a", "k", time.Now(), nil) })
	mustPanic(t, "durable: Stats on a Queue not made by New", func() { zero.Stats() })
	var nilQ *durable.Queue
	mustPanic(t, "durable: Cancel on a Queue not made by New", func() { nilQ.Cancel(context.Background(), "a") })
}

// Bad input is an error that names the package, the call and the value,
// before any call to Redis (the client here has no server).
func TestBadInput(t *testing.T) {
	rdb := newClient(t, "127.0.0.1:1")
	q := newQueue(t, rdb, durable.WithKinds("k"))
	ctx := context.Background()
	now := time.Now()
	for _, c := range []struct {
		name string
		call func() (bool, error)
		want string
	}{
		{"empty ID", func() (bool, error) { return q.Schedule(ctx, "", "k", now, nil) }, "durable: Schedule: empty ID"},
		{"long ID", func() (bool, error) { return q.Cancel(ctx, strings.Repeat("x", durable.MaxIDLen+1)) }, "durable: Cancel: ID \"xxxx"},
		{"zero time", func() (bool, error) { return q.Schedule(ctx, "a", "k", time.Time{}, nil) }, `durable: Schedule "a": zero due time`},
		{"beyond the store", func() (bool, error) {
			return q.Schedule(ctx, "a", "k", time.Date(2300, 1, 1, 0, 0, 0, 0, time.UTC), nil)
		},
			`durable: Schedule "a": due time 2300-01-01 00:00:00 +0000 UTC past the last the store holds (2255-`},
		{"after beyond the store", func() (bool, error) { return q.ScheduleAfter(ctx, "a", "k", 1<<63-1, nil) }, `durable: ScheduleAfter "a": due 2562047h47m16.854775807s from now, past`},
		{"empty kind", func() (bool, error) { return q.Schedule(ctx, "a", "", now, nil) }, `durable: Schedule "a": empty kind`},
		{"NUL in kind", func() (bool, error) { return q.Schedule(ctx, "a", "k\x00", now, nil) }, `durable: Schedule "a": kind "k\x00" is over 255 bytes or holds a NUL`},
		{"unknown kind", func() (bool, error) { return q.Schedule(ctx, "a", "x", now, nil) }, `durable: Schedule "a": unknown kind "x"`},
		{"payload", func() (bool, error) { return q.Schedule(ctx, "a", "k", now, make([]byte, durable.MaxPayload+1)) },
			`durable: Schedule "a": payload of 65537 bytes, over MaxPayload (65536)`},
		{"reschedule zero", func() (bool, error) { return q.Reschedule(ctx, "a", time.Time{}) }, `durable: Reschedule "a": zero due time`},
		{"reschedule empty ID", func() (bool, error) { return q.Reschedule(ctx, "", now) }, `durable: Reschedule: empty ID`},
	} {
		ok, err := c.call()
		if ok || err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%s: %v, %v; want an error that starts with %q", c.name, ok, err, c.want)
		}
	}
	if _, err := q.Schedule(nil, "a", "k", now, nil); err == nil || err.Error() != `durable: Schedule "a": nil context` {
		t.Errorf("Schedule with a nil context: %v", err)
	}
	if _, err := q.Cancel(nil, "a"); err == nil || err.Error() != `durable: Cancel "a": nil context` {
		t.Errorf("Cancel with a nil context: %v", err)
	}
	if err := q.Pause(nil, "k"); err == nil || err.Error() != `durable: Pause "k": nil context` {
		t.Errorf("Pause with a nil context: %v", err)
	}
	if err := q.Close(nil); err == nil || err.Error() != "durable: Close: nil context" {
		t.Errorf("Close with a nil context: %v", err)
	}
	if err := q.Pause(ctx, "x"); err == nil || err.Error() != `durable: Pause "x": unknown kind "x" (no handler or WithKinds names it)` {
		t.Errorf("Pause of an unknown kind: %v", err)
	}
	if err := q.Resume(ctx, "k\x00"); err == nil || !strings.HasPrefix(err.Error(), `durable: Resume "k\x00": kind "k\x00" is over 255 bytes or holds a NUL`) {
		t.Errorf("Resume of a kind with a NUL: %v", err)
	}
	if _, _, err := q.Lookup(ctx, ""); err == nil || err.Error() != "durable: Lookup: empty ID" {
		t.Errorf("Lookup of an empty ID: %v", err)
	}
	if err := q.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if err := q.Close(ctx); !errors.Is(err, durable.ErrClosed) {
		t.Errorf("second Close: %v", err)
	}
	if _, err := q.Schedule(ctx, "a", "k", now, nil); !errors.Is(err, durable.ErrClosed) || !strings.HasPrefix(err.Error(), `durable: Schedule "a": durable: queue closed`) {
		t.Errorf("Schedule on a closed queue: %v", err)
	}
	if _, _, err := q.Lookup(ctx, "a"); !errors.Is(err, durable.ErrClosed) {
		t.Errorf("Lookup on a closed queue: %v", err)
	}
}

// A Redis that cannot be reached is an error that names the call and the
// ID, within the call timeout (1 s by default, not the client's retries);
// for a second after, the Queue's calls fail at once with ErrUnavailable,
// but for one every 100ms, which probes.
func TestRedisDownError(t *testing.T) {
	srv := startRedis(t)
	rdb := newClient(t, srv.Addr)
	q := newQueue(t, rdb)
	srv.Stop()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	t0 := time.Now()
	if _, err := q.Schedule(ctx, "a", "k", time.Now(), nil); err == nil || !strings.HasPrefix(err.Error(), `durable: Schedule "a": `) {
		t.Errorf("Schedule with Redis down: %v", err)
	}
	first := time.Since(t0)
	t0 = time.Now()
	_, err := q.Schedule(ctx, "b", "k", time.Now(), nil)
	if !errors.Is(err, durable.ErrUnavailable) || !strings.HasPrefix(err.Error(), `durable: Schedule "b": durable: Redis unreachable (`) {
		t.Errorf("second Schedule with Redis down: %v", err)
	}
	second := time.Since(t0)
	t.Logf("the first Schedule returned after %v, the second after %v", first, second)
	if first > 1500*time.Millisecond || second > 100*time.Millisecond {
		t.Errorf("Schedule returned after %v, then %v; want within the 1s call timeout, then at once", first, second)
	}
	if st := q.Stats(); st.Errors != 1 {
		t.Errorf("stats %+v; want the failed call counted", st)
	}
}

// A worker on a closed wheel would never start a job: Schedule says so.
func TestClosedWheel(t *testing.T) {
	rdb := newClient(t, startRedis(t).Addr)
	wh := timewheel.New()
	wh.Close()
	q := newQueue(t, rdb, durable.WithWheel(wh), durable.WithHandler("k", func(context.Context, durable.Job) error { return nil }))
	_, err := q.Schedule(context.Background(), "a", "k", time.Now(), nil)
	if !errors.Is(err, timewheel.ErrClosed) || !strings.HasPrefix(err.Error(), `durable: Schedule "a": the worker's wheel (WithWheel) is closed`) {
		t.Errorf("Schedule on a closed wheel: %v", err)
	}
}
