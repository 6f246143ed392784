package durable_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/timewheel/timewheel/durable"
)

// runs records every handler start.
type runs struct {
	mu   sync.Mutex
	byID map[string][]durable.Job // guarded by mu
	at   map[string][]time.Time   // guarded by mu: the wall clock at each start
}

func newRuns() *runs {
	return &runs{byID: map[string][]durable.Job{}, at: map[string][]time.Time{}}
}

func (r *runs) add(j durable.Job) {
	now := time.Now()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.byID[j.ID] = append(r.byID[j.ID], j)
	r.at[j.ID] = append(r.at[j.ID], now)
}

func (r *runs) count(id string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.byID[id])
}

func (r *runs) total() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, js := range r.byID {
		n += len(js)
	}
	return n
}

// handler records the job and returns nil.
func (r *runs) handler(_ context.Context, j durable.Job) error {
	r.add(j)
	return nil
}

// Jobs due over half a second, scheduled in a shuffled order by due time,
// each run once, none before its due time, with its kind and payload;
// then the store is empty and the stats count them.
func TestJobsRunOnceNotEarly(t *testing.T) {
	rdb := newClient(t, startRedis(t).Addr)
	r := newRuns()
	q := newQueue(t, rdb, durable.WithName("t"), durable.WithHandler("k", r.handler))
	ctx := context.Background()
	const n = 300
	start := time.Now().Add(100 * time.Millisecond)
	due := map[string]time.Time{}
	for i := range n {
		id := fmt.Sprint("job-", i)
		due[id] = start.Add(time.Duration((i*7919)%n) * 500 * time.Millisecond / n)
		if ok, err := q.Schedule(ctx, id, "k", due[id], []byte(id)); !ok || err != nil {
			t.Fatalf("Schedule %s: %v, %v", id, ok, err)
		}
	}
	waitFor(t, 20*time.Second, "every job run", func() bool { return r.total() >= n })
	waitFor(t, 10*time.Second, "the store empty", func() bool { return empty(rdb, "t") })
	r.mu.Lock()
	for id, js := range r.byID {
		if len(js) != 1 {
			t.Errorf("%s ran %d times", id, len(js))
		}
		j := js[0]
		if string(j.Payload) != id || j.Kind != "k" || j.Attempt != 1 {
			t.Errorf("%s ran as %+v", id, j)
		}
		if at := r.at[id][0]; at.Before(due[id]) {
			t.Errorf("%s started %v before its due time", id, due[id].Sub(at))
		}
		if j.Due.Before(due[id].Truncate(time.Microsecond)) {
			t.Errorf("%s: Job.Due %v before the due time %v", id, j.Due, due[id])
		}
	}
	r.mu.Unlock()
	// The store is empty once the acks' scripts ran; each ack's count
	// follows its reply.
	waitFor(t, 10*time.Second, "every ack counted", func() bool { return q.Stats().Ran >= n })
	st := q.Stats()
	if st.Scheduled != n || st.Claimed != n || st.Ran != n || st.Retried+st.Dead+st.LeaseLost != 0 || st.Running != 0 {
		t.Errorf("stats %+v", st)
	}
	var late uint64
	for _, c := range st.Lateness {
		late += c
	}
	if late != n {
		t.Errorf("lateness histogram holds %d attempts, want %d", late, n)
	}
	t.Logf("lateness p50 <= %v, p99 <= %v", st.Quantile(0.5), st.Quantile(0.99))
}

// A second Schedule of an ID changes nothing and returns false, whatever
// it asks; Lookup shows the first.
func TestScheduleIsIdempotent(t *testing.T) {
	rdb := newClient(t, startRedis(t).Addr)
	q := newQueue(t, rdb)
	ctx := context.Background()
	at := time.Date(2030, 1, 2, 3, 4, 5, 6_500, time.UTC)
	if ok, err := q.Schedule(ctx, "a", "k", at, []byte("first")); !ok || err != nil {
		t.Fatalf("first Schedule: %v, %v", ok, err)
	}
	if ok, err := q.Schedule(ctx, "a", "other", at.Add(time.Hour), []byte("second")); ok || err != nil {
		t.Fatalf("second Schedule: %v, %v", ok, err)
	}
	if ok, err := q.ScheduleAfter(ctx, "a", "k", time.Minute, nil); ok || err != nil {
		t.Fatalf("ScheduleAfter of the same ID: %v, %v", ok, err)
	}
	info, ok, err := q.Lookup(ctx, "a")
	if !ok || err != nil {
		t.Fatalf("Lookup: %v, %v", ok, err)
	}
	// Due rounds up to the µs: 6.5µs past the second is 7µs.
	want := time.Date(2030, 1, 2, 3, 4, 5, 7_000, time.UTC)
	if info.State != durable.Pending || info.Kind != "k" || string(info.Payload) != "first" || !info.Due.Equal(want) || info.Attempt != 0 {
		t.Errorf("Lookup: %+v; want pending k first due %v", info, want)
	}
	if _, ok, err := q.Lookup(ctx, "none"); ok || err != nil {
		t.Errorf("Lookup of no job: %v, %v", ok, err)
	}
	if st := q.Stats(); st.Scheduled != 1 {
		t.Errorf("Scheduled %d, want 1", st.Scheduled)
	}
}

// Cancel and Reschedule, from another Queue than the worker's: a job
// moved from next year to now runs; a cancelled one does not, though a
// job due after it does; a due time in the past means now.
func TestCancelReschedule(t *testing.T) {
	rdb := newClient(t, startRedis(t).Addr)
	r := newRuns()
	newQueue(t, rdb, durable.WithHandler("k", r.handler))
	q := newQueue(t, rdb) // schedules only
	ctx := context.Background()
	now := time.Now()
	mustSchedule(t, q, "later", now.Add(365*24*time.Hour))
	mustSchedule(t, q, "cancelled", now.Add(300*time.Millisecond))
	mustSchedule(t, q, "past", now.Add(-time.Hour))
	if ok, err := q.Cancel(ctx, "cancelled"); !ok || err != nil {
		t.Fatalf("Cancel: %v, %v", ok, err)
	}
	if ok, err := q.Cancel(ctx, "cancelled"); ok || err != nil {
		t.Fatalf("second Cancel: %v, %v", ok, err)
	}
	mustSchedule(t, q, "sentinel", now.Add(400*time.Millisecond))
	if ok, err := q.Reschedule(ctx, "later", now); !ok || err != nil {
		t.Fatalf("Reschedule: %v, %v", ok, err)
	}
	if ok, err := q.Reschedule(ctx, "none", now); ok || err != nil {
		t.Fatalf("Reschedule of no job: %v, %v", ok, err)
	}
	waitFor(t, 10*time.Second, "later, past and sentinel run", func() bool {
		return r.count("later") == 1 && r.count("past") == 1 && r.count("sentinel") == 1
	})
	waitFor(t, 10*time.Second, "the store empty", func() bool { return empty(rdb, "durable") })
	if n := r.count("cancelled"); n != 0 {
		t.Errorf("the cancelled job ran %d times", n)
	}
}

func mustSchedule(t *testing.T, q *durable.Queue, id string, at time.Time) {
	t.Helper()
	if ok, err := q.Schedule(context.Background(), id, "k", at, nil); !ok || err != nil {
		t.Fatalf("Schedule %s: %v, %v", id, ok, err)
	}
}

// A handler that fails is retried after the backoff with the next
// attempt number; after the last attempt the job is dead with its error,
// and Reschedule brings it back with its attempts forgotten. A panic, or
// a kind no handler of the worker runs, is a failure like an error.
func TestRetryDead(t *testing.T) {
	rdb := newClient(t, startRedis(t).Addr)
	r := newRuns()
	var mu sync.Mutex
	failUntil := map[string]int{"flaky": 2, "broken": 99}
	fail := func(_ context.Context, j durable.Job) error {
		r.add(j)
		mu.Lock()
		defer mu.Unlock()
		if j.Attempt <= failUntil[j.ID] {
			return fmt.Errorf("attempt %d of %s failed", j.Attempt, j.ID)
		}
		return nil
	}
	q := newQueue(t, rdb, durable.WithHandler("fail", fail),
		durable.WithHandler("panic", func(context.Context, durable.Job) error { panic("boom") }),
		durable.WithKinds("nobody"),
		durable.WithRetry(3, func(int) time.Duration { return 20 * time.Millisecond }))
	ctx := context.Background()
	for id, kind := range map[string]string{"flaky": "fail", "broken": "fail", "panics": "panic", "orphan": "nobody"} {
		if ok, err := q.ScheduleAfter(ctx, id, kind, 0, nil); !ok || err != nil {
			t.Fatalf("ScheduleAfter %s: %v, %v", id, ok, err)
		}
	}
	dead := func(id string) durable.Info {
		info, _, _ := q.Lookup(ctx, id)
		return info
	}
	waitFor(t, 20*time.Second, "three jobs dead, flaky done", func() bool {
		return dead("broken").State == durable.Dead && dead("panics").State == durable.Dead &&
			dead("orphan").State == durable.Dead && r.count("flaky") == 3
	})
	for id, want := range map[string]string{
		"broken": "attempt 3 of broken failed",
		"panics": `durable: handler of kind "panic" panicked: boom`,
		"orphan": `durable: no handler for kind "nobody" on worker `,
	} {
		if info := dead(id); info.Attempt != 3 || !strings.HasPrefix(info.Err, want) {
			t.Errorf("%s: %+v; want 3 attempts and error %q", id, info, want)
		}
	}
	r.mu.Lock()
	for id, n := range map[string]int{"flaky": 3, "broken": 3} {
		for i, j := range r.byID[id] {
			if j.Attempt != i+1 {
				t.Errorf("%s: run %d had attempt %d", id, i+1, j.Attempt)
			}
		}
		if len(r.byID[id]) != n {
			t.Errorf("%s ran %d times, want %d", id, len(r.byID[id]), n)
		}
	}
	r.mu.Unlock()
	// Acks wait up to 10ms for others to share their call.
	waitFor(t, 10*time.Second, "flaky deleted after its third attempt succeeded", func() bool {
		_, ok, _ := q.Lookup(ctx, "flaky")
		return !ok
	})

	mu.Lock()
	failUntil["broken"] = 0
	mu.Unlock()
	if ok, err := q.Reschedule(ctx, "broken", time.Now()); !ok || err != nil {
		t.Fatalf("Reschedule of a dead job: %v, %v", ok, err)
	}
	waitFor(t, 10*time.Second, "broken run again", func() bool { return r.count("broken") == 4 })
	r.mu.Lock()
	if a := r.byID["broken"][3].Attempt; a != 1 {
		t.Errorf("the revived job ran as attempt %d, want 1", a)
	}
	r.mu.Unlock()
	st := q.Stats()
	// flaky 2, broken 2, panics 2, orphan 2 retries; broken, panics, orphan dead.
	if st.Retried != 8 || st.Dead != 3 {
		t.Errorf("stats %+v; want 8 retried, 3 dead", st)
	}
}

// A running job cannot be rescheduled; Cancel deletes it, its handler
// (which ignores its context here) returns as it would, and its ack finds
// the job gone, counted as canceled. Close waits for the running handler,
// and then refuses work.
func TestRunningJob(t *testing.T) {
	rdb := newClient(t, startRedis(t).Addr)
	started, release := make(chan struct{}), make(chan struct{})
	q := newQueue(t, rdb, durable.WithHandler("k", func(context.Context, durable.Job) error {
		close(started)
		<-release
		return nil
	}))
	ctx := context.Background()
	mustSchedule(t, q, "a", time.Now())
	<-started
	if info, _, _ := q.Lookup(ctx, "a"); info.State != durable.Running || info.Attempt != 1 {
		t.Errorf("Lookup of a running job: %+v", info)
	}
	if ok, err := q.Reschedule(ctx, "a", time.Now()); ok || !errors.Is(err, durable.ErrRunning) {
		t.Errorf("Reschedule of a running job: %v, %v", ok, err)
	}
	if ok, err := q.Cancel(ctx, "a"); !ok || err != nil {
		t.Errorf("Cancel of a running job: %v, %v", ok, err)
	}
	closed := make(chan error)
	go func() { closed <- q.Close(ctx) }()
	select {
	case err := <-closed:
		t.Fatalf("Close returned (%v) while a handler ran", err)
	case <-time.After(50 * time.Millisecond):
	}
	close(release)
	if err := <-closed; err != nil {
		t.Fatalf("Close: %v", err)
	}
	if st := q.Stats(); st.Ran != 0 || st.LeaseLost != 0 || st.Canceled != 1 {
		t.Errorf("stats %+v; want the cancelled attempt counted as canceled", st)
	}
	if _, err := q.Schedule(ctx, "b", "k", time.Now(), nil); !errors.Is(err, durable.ErrClosed) {
		t.Errorf("Schedule after Close: %v", err)
	}
}

// Close with a context that ends cancels the running handlers' contexts,
// waits for them to return, and returns the context's error; a job whose
// handler returned the context's error is handed back, not retried after
// a backoff, and runs on a worker started later as its next attempt.
func TestCloseCancelsHandlers(t *testing.T) {
	rdb := newClient(t, startRedis(t).Addr)
	started := make(chan struct{})
	q := newQueue(t, rdb, durable.WithLease(300*time.Millisecond), durable.WithHandler("k", func(ctx context.Context, _ durable.Job) error {
		close(started)
		<-ctx.Done()
		return ctx.Err()
	}))
	mustSchedule(t, q, "a", time.Now())
	<-started
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := q.Close(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Close: %v", err)
	}
	if st := q.Stats(); st.Retried != 0 || st.Dead != 0 {
		t.Errorf("stats %+v: the handed-back attempt counted as a failure", st)
	}
	if info, _, err := newQueue(t, rdb).Lookup(context.Background(), "a"); info.State != durable.Pending || info.Due.After(time.Now()) || err != nil {
		t.Errorf("after Close: %+v, %v; want pending and due", info, err)
	}
	r := newRuns()
	newQueue(t, rdb, durable.WithHandler("k", r.handler))
	waitFor(t, 10*time.Second, "a run again", func() bool { return r.count("a") == 1 })
	r.mu.Lock()
	defer r.mu.Unlock()
	if a := r.byID["a"][0].Attempt; a != 2 {
		t.Errorf("attempt %d, want 2", a)
	}
}

// A job written to the store without its message (as when a worker's
// subscription was down while it was scheduled) runs at the worker's next
// poll. A queue of another name does not see it.
func TestPollFindsUnannouncedJob(t *testing.T) {
	rdb := newClient(t, startRedis(t).Addr)
	r, other := newRuns(), newRuns()
	newQueue(t, rdb, durable.WithHandler("k", r.handler), durable.WithPoll(200*time.Millisecond))
	newQueue(t, rdb, durable.WithName("other"), durable.WithHandler("k", other.handler), durable.WithPoll(200*time.Millisecond))
	ctx := context.Background()
	// A job run first: the worker has claimed, and armed its wake at the
	// earliest score it saw, so only a poll can find what comes next.
	mustSchedule(t, newQueue(t, rdb), "first", time.Now())
	waitFor(t, 10*time.Second, "the first job run", func() bool { return r.count("first") == 1 })
	// What scheduleScript writes, without the PUBLISH.
	if err := rdb.HSet(ctx, "{durable}:job", "quiet", "k\x00payload").Err(); err != nil {
		t.Fatal(err)
	}
	if err := rdb.ZAdd(ctx, "{durable}:due", redis.Z{Score: float64(time.Now().UnixMicro()), Member: "quiet"}).Err(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "the unannounced job run", func() bool { return r.count("quiet") == 1 })
	r.mu.Lock()
	if j := r.byID["quiet"][0]; string(j.Payload) != "payload" || j.Kind != "k" {
		t.Errorf("ran as %+v", j)
	}
	r.mu.Unlock()
	if n := other.total(); n != 0 {
		t.Errorf("the queue named other ran %d jobs", n)
	}
}

// A running attempt whose lease another worker took (as after a pause
// longer than the lease) finds out at its next renewal: the handler's
// context is cancelled with ErrLeaseLost, and the loss counted once.
func TestLeaseLostCancelsHandler(t *testing.T) {
	rdb := newClient(t, startRedis(t).Addr)
	started, ended := make(chan struct{}), make(chan error, 1)
	q := newQueue(t, rdb, durable.WithLease(300*time.Millisecond), durable.WithHandler("k", func(ctx context.Context, _ durable.Job) error {
		close(started)
		<-ctx.Done()
		ended <- context.Cause(ctx)
		return ctx.Err()
	}))
	mustSchedule(t, q, "a", time.Now())
	<-started
	// What another worker's claim of the job would write.
	if err := rdb.HSet(context.Background(), "{durable}:run", "a", "2|other|1").Err(); err != nil {
		t.Fatal(err)
	}
	if err := <-ended; !errors.Is(err, durable.ErrLeaseLost) {
		t.Fatalf("handler's context ended with %v", err)
	}
	waitFor(t, 10*time.Second, "the handler's failure handled", func() bool { return q.Stats().Running == 0 })
	if err := q.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if st := q.Stats(); st.LeaseLost != 1 || st.Retried+st.Dead+st.Ran+st.Canceled != 0 {
		t.Errorf("stats %+v; want the attempt's lost lease counted once", st)
	}
}

// Cancel of a running job cancels its handler's context, with ErrCanceled
// as the cause, on the replica that runs it, at once (not at a renewal:
// the lease here is 10 s); the job is gone, and counted as canceled
// there.
func TestCancelCancelsRunningHandler(t *testing.T) {
	rdb := newClient(t, startRedis(t).Addr)
	started, ended := make(chan string, 2), make(chan error, 2)
	h := func(ctx context.Context, j durable.Job) error {
		started <- j.ID
		<-ctx.Done()
		ended <- context.Cause(ctx)
		return ctx.Err()
	}
	var qs []*durable.Queue
	for i := range 2 {
		qs = append(qs, newQueue(t, rdb, durable.WithWorkerID(fmt.Sprint("w", i)), durable.WithLease(10*time.Second), durable.WithHandler("k", h)))
	}
	admin := newQueue(t, rdb, durable.WithKinds("k"))
	mustSchedule(t, admin, "a", time.Now())
	<-started
	info, _, err := admin.Lookup(context.Background(), "a")
	if err != nil || info.State != durable.Running || info.Worker == "" {
		t.Fatalf("Lookup of the running job: %+v, %v", info, err)
	}
	t0 := time.Now()
	if ok, err := admin.Cancel(context.Background(), "a"); !ok || err != nil {
		t.Fatalf("Cancel: %v, %v", ok, err)
	}
	select {
	case err := <-ended:
		if !errors.Is(err, durable.ErrCanceled) {
			t.Errorf("handler's context ended with %v", err)
		}
		t.Logf("context cancelled %v after Cancel returned", time.Since(t0))
	case <-time.After(3 * time.Second):
		t.Fatal("the handler's context did not end within 3s of Cancel")
	}
	for _, q := range qs {
		q.Close(context.Background())
	}
	var canceled, lost uint64
	for _, q := range qs {
		st := q.Stats()
		canceled += st.Canceled
		lost += st.LeaseLost + st.Retried + st.Dead
	}
	if canceled != 1 || lost != 0 {
		t.Errorf("canceled %d, lost/retried/dead %d; want 1 and 0", canceled, lost)
	}
	if _, ok, _ := admin.Lookup(context.Background(), "a"); ok {
		t.Error("the cancelled job is in the store")
	}
}
