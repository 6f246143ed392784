package durable_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/timewheel/timewheel/durable"
)

// Pause of a kind holds its due jobs, counted as pending, on every
// replica, while other kinds run; Resume runs them, in order, and Paused
// says which kinds are paused.
func TestPauseResumeKind(t *testing.T) {
	rdb := newClient(t, startRedis(t).Addr)
	r := newRuns()
	var qs []*durable.Queue
	for i := range 2 {
		qs = append(qs, newQueue(t, rdb, durable.WithWorkerID(fmt.Sprint("w", i)), durable.WithPoll(100*time.Millisecond),
			durable.WithHandler("a", r.handler), durable.WithHandler("b", r.handler)))
	}
	admin := newQueue(t, rdb, durable.WithKinds("a", "b"))
	ctx := context.Background()
	if err := admin.Pause(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	if p, err := admin.Paused(ctx); err != nil || !slices.Equal(p, []string{"a"}) {
		t.Fatalf("Paused: %q, %v", p, err)
	}
	now := time.Now()
	for i := range 20 {
		for _, kind := range []string{"a", "b"} {
			if ok, err := admin.Schedule(ctx, fmt.Sprint(kind, i), kind, now.Add(time.Duration(i)*10*time.Millisecond), nil); !ok || err != nil {
				t.Fatal(ok, err)
			}
		}
	}
	waitFor(t, 10*time.Second, "the b jobs run", func() bool { return r.total() == 20 })
	time.Sleep(300 * time.Millisecond) // two polls of each replica: a's jobs stay
	if n := r.total(); n != 20 {
		t.Fatalf("%d jobs ran while a was paused, want the 20 of b", n)
	}
	if info, ok, err := admin.Lookup(ctx, "a5"); !ok || err != nil || info.State != durable.Pending || info.Worker != "" {
		t.Errorf("Lookup of a paused job: %+v, %v, %v", info, ok, err)
	}
	if err := admin.Resume(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	if p, err := admin.Paused(ctx); err != nil || len(p) != 0 {
		t.Fatalf("Paused after Resume: %q, %v", p, err)
	}
	waitFor(t, 10*time.Second, "the a jobs run", func() bool { return r.total() == 40 })
	waitFor(t, 10*time.Second, "the store empty", func() bool { return empty(rdb, "durable") })
	for i := range 20 {
		if n := r.count(fmt.Sprint("a", i)); n != 1 {
			t.Errorf("a%d ran %d times", i, n)
		}
	}
	if n := rdb.Exists(ctx, "{durable}:park:a", "{durable}:parked").Val(); n != 0 {
		t.Errorf("%d park keys left", n)
	}
}

// Pause of the whole queue stops every kind, and a worker hands back the
// jobs it had leased ahead of their due times; after Resume they run at
// their due times, not before.
func TestPauseQueueHandsBackHeld(t *testing.T) {
	rdb := newClient(t, startRedis(t).Addr)
	r := newRuns()
	q := newQueue(t, rdb, durable.WithHandler("k", r.handler))
	ctx := context.Background()
	due := time.Now().Add(1500 * time.Millisecond)
	mustSchedule(t, q, "a", due)
	waitFor(t, 10*time.Second, "a leased ahead", func() bool { return q.Stats().Held == 1 })
	if info, _, _ := q.Lookup(ctx, "a"); info.State != durable.Pending || info.Worker == "" || !info.Due.Equal(due.Truncate(time.Microsecond).Add(time.Microsecond)) && !info.Due.Equal(due.Truncate(time.Microsecond)) {
		t.Errorf("Lookup of a job leased ahead: %+v; want pending, held, due %v", info, due)
	}
	if err := q.Pause(ctx, ""); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "a handed back", func() bool { return q.Stats().Held == 0 && q.Stats().Released == 1 })
	if info, _, _ := q.Lookup(ctx, "a"); info.Worker != "" || info.Attempt != 0 {
		t.Errorf("Lookup of a job handed back: %+v", info)
	}
	mustSchedule(t, q, "b", time.Now())
	time.Sleep(time.Until(due.Add(300 * time.Millisecond)))
	if n := r.total(); n != 0 {
		t.Fatalf("%d jobs ran while the queue was paused", n)
	}
	if err := q.Resume(ctx, ""); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "a and b run", func() bool { return r.count("a") == 1 && r.count("b") == 1 })
	r.mu.Lock()
	defer r.mu.Unlock()
	if j := r.byID["a"][0]; j.Attempt != 1 || r.at["a"][0].Before(due) {
		t.Errorf("a ran as %+v at %v, due %v", j, r.at["a"][0], due)
	}
}

// Reschedule of a job leased ahead takes it back from its worker, which
// drops it; it runs once, at the new time.
func TestRescheduleLeasedAhead(t *testing.T) {
	rdb := newClient(t, startRedis(t).Addr)
	r := newRuns()
	q := newQueue(t, rdb, durable.WithHandler("k", r.handler))
	ctx := context.Background()
	mustSchedule(t, q, "a", time.Now().Add(1500*time.Millisecond))
	waitFor(t, 10*time.Second, "a leased ahead", func() bool { return q.Stats().Held == 1 })
	later := time.Now().Add(2500 * time.Millisecond)
	if ok, err := q.Reschedule(ctx, "a", later); !ok || err != nil {
		t.Fatalf("Reschedule: %v, %v", ok, err)
	}
	waitFor(t, 10*time.Second, "a run", func() bool { return r.count("a") == 1 })
	time.Sleep(100 * time.Millisecond)
	r.mu.Lock()
	defer r.mu.Unlock()
	if n, at := len(r.byID["a"]), r.at["a"][0]; n != 1 || at.Before(later) {
		t.Errorf("a ran %d times, first at %v; want once, at or after %v", n, at, later)
	}
}

// A kind's Timeout ends its handler's context (the cause says so, and is
// a context.DeadlineExceeded), and fails the attempt at the deadline even
// though the handler ignores it: a hung handler does not hold the job.
// A kind's Retry stands in for the Queue's.
func TestKindTimeoutAndRetry(t *testing.T) {
	rdb := newClient(t, startRedis(t).Addr)
	release := make(chan struct{})
	causes := make(chan error, 10)
	var mu sync.Mutex
	attempts := map[string]int{}
	q := newQueue(t, rdb, durable.WithRetry(5, func(int) time.Duration { return 10 * time.Millisecond }),
		durable.WithHandler("hang", func(ctx context.Context, j durable.Job) error {
			<-ctx.Done()
			causes <- context.Cause(ctx)
			<-release // ignores its context for a while
			return nil
		}, durable.Timeout(100*time.Millisecond), durable.Retry(2, func(int) time.Duration { return 10 * time.Millisecond })),
		durable.WithHandler("fail", func(_ context.Context, j durable.Job) error {
			mu.Lock()
			attempts[j.ID]++
			mu.Unlock()
			return errors.New("no")
		}),
		durable.WithConcurrency(8))
	defer close(release)
	ctx := context.Background()
	for id, kind := range map[string]string{"h": "hang", "f": "fail"} {
		if ok, err := q.ScheduleAfter(ctx, id, kind, 0, nil); !ok || err != nil {
			t.Fatal(ok, err)
		}
	}
	dead := func(id string) durable.Info {
		info, _, _ := q.Lookup(ctx, id)
		return info
	}
	waitFor(t, 10*time.Second, "both dead", func() bool { return dead("h").State == durable.Dead && dead("f").State == durable.Dead })
	if info := dead("h"); info.Attempt != 2 || !strings.Contains(info.Err, `handler of kind "hang" ran past its timeout of 100ms`) {
		t.Errorf("the hung job: %+v", info)
	}
	if info := dead("f"); info.Attempt != 5 {
		t.Errorf("the failing job: %+v; want 5 attempts, the Queue's", info)
	}
	if err := <-causes; !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "ran past its timeout") {
		t.Errorf("the handler's context ended with %v", err)
	}
	if st := q.Stats(); st.TimedOut != 2 || st.Running != 2 {
		t.Errorf("stats %+v; want 2 timed out, 2 hung handlers still running", st)
	}
}

// A handler's panic goes to the panic handler with the job, the value and
// the stack of the handler's goroutine; the attempt fails with the value.
func TestPanicHandler(t *testing.T) {
	rdb := newClient(t, startRedis(t).Addr)
	type report struct {
		j     durable.Job
		p     any
		stack string
	}
	got := make(chan report, 1)
	q := newQueue(t, rdb, durable.WithRetry(1, durable.Exponential(time.Millisecond, time.Millisecond)),
		durable.WithHandler("k", func(context.Context, durable.Job) error { panicInHandler(); return nil }),
		durable.WithPanicHandler(func(j durable.Job, p any, stack []byte) { got <- report{j, p, string(stack)} }))
	mustSchedule(t, q, "a", time.Now())
	r := <-got
	if r.j.ID != "a" || r.p != "boom" || !strings.Contains(r.stack, "panicInHandler") {
		t.Errorf("panic handler got %+v", r)
	}
	waitFor(t, 10*time.Second, "a dead", func() bool {
		info, _, _ := q.Lookup(context.Background(), "a")
		return info.State == durable.Dead && strings.Contains(info.Err, "panicked: boom")
	})
	if st := q.Stats(); st.Panics != 1 {
		t.Errorf("stats %+v", st)
	}
}

func panicInHandler() { panic("boom") }

// With Redis down, every failed call of the worker's is counted and goes
// to the error handler as a *CallError naming the call; once Redis is
// back, the worker runs the jobs again.
func TestErrorHandler(t *testing.T) {
	srv := startRedis(t)
	rdb := newClient(t, srv.Addr)
	errs := make(chan error, 1000)
	r := newRuns()
	q := newQueue(t, rdb, durable.WithPoll(50*time.Millisecond), durable.WithHandler("k", r.handler),
		durable.WithErrorHandler(func(err error) {
			select {
			case errs <- err:
			default:
			}
		}))
	mustSchedule(t, q, "before", time.Now())
	waitFor(t, 10*time.Second, "before run", func() bool { return r.count("before") == 1 })
	srv.Stop()
	var ce *durable.CallError
	select {
	case err := <-errs:
		if !errors.As(err, &ce) || ce.Op == "" || ce.Worker == "" || !strings.HasPrefix(err.Error(), `durable: queue "durable", worker `) {
			t.Errorf("error handler got %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no error reported within 10s of Redis going down")
	}
	if st := q.Stats(); st.Errors == 0 {
		t.Errorf("stats %+v; want errors counted", st)
	}
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	waitUp(t, rdb)
	// The Queue's calls fail at once for up to a second after one found
	// Redis unreachable, but for one every 100ms.
	waitFor(t, 5*time.Second, "a Schedule accepted", func() bool {
		ok, err := q.Schedule(context.Background(), "after", "k", time.Now(), nil)
		return ok && err == nil
	})
	waitFor(t, 10*time.Second, "after run", func() bool { return r.count("after") == 1 })
}

// Redis's calls across three replicas grow with the jobs, not with the
// replicas: jobs due one every 5 ms, scheduled ahead, cost a few claims
// each second across the queue, where a claim per due time per replica
// would be three a job. None starts early.
func TestClaimsDoNotGrowWithReplicas(t *testing.T) {
	rdb := newClient(t, startRedis(t).Addr)
	r := newRuns()
	var qs []*durable.Queue
	for i := range 3 {
		qs = append(qs, newQueue(t, rdb, durable.WithWorkerID(fmt.Sprint("w", i)), durable.WithHandler("k", r.handler)))
	}
	admin := newQueue(t, rdb, durable.WithKinds("k"))
	const n = 300
	start := time.Now().Add(2500 * time.Millisecond)
	due := map[string]time.Time{}
	for i := range n {
		id := fmt.Sprint("job-", i)
		due[id] = start.Add(time.Duration(i) * 5 * time.Millisecond)
		if ok, err := admin.Schedule(context.Background(), id, "k", due[id], nil); !ok || err != nil {
			t.Fatal(ok, err)
		}
	}
	waitFor(t, 20*time.Second, "every job run", func() bool { return r.total() == n })
	var claims, claimed uint64
	perReplica := []uint64{}
	for _, q := range qs {
		st := q.Stats()
		claims += st.Claims
		claimed += st.Claimed
		perReplica = append(perReplica, st.Claimed)
	}
	t.Logf("%d claims for %d jobs; jobs per replica %v", claims, n, perReplica)
	if claimed != n || claims > n/5 {
		t.Errorf("%d claims leased %d attempts of %d jobs; want them all, in at most %d claims", claims, claimed, n, n/5)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for id, at := range r.at {
		if len(at) != 1 || at[0].Before(due[id]) {
			t.Errorf("%s ran at %v, due %v", id, at, due[id])
		}
	}
}

// The due jobs of a paused kind do not hold back those of another kind
// due after them: claims set them aside, a window at a time, claiming
// again at once while a window held only those.
func TestPausedBacklogDoesNotBlock(t *testing.T) {
	rdb := newClient(t, startRedis(t).Addr)
	r := newRuns()
	ctx := context.Background()
	admin := newQueue(t, rdb) // no worker yet: the backlog waits in :due
	if err := admin.Pause(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	for i := range 200 {
		if ok, err := admin.Schedule(ctx, fmt.Sprint("a", i), "a", now, nil); !ok || err != nil {
			t.Fatal(ok, err)
		}
	}
	if ok, err := admin.Schedule(ctx, "b", "b", now.Add(time.Millisecond), nil); !ok || err != nil {
		t.Fatal(ok, err)
	}
	t0 := time.Now()
	newQueue(t, rdb, durable.WithBatch(8), durable.WithHandler("a", r.handler), durable.WithHandler("b", r.handler))
	waitFor(t, 10*time.Second, "b run", func() bool { return r.count("b") == 1 })
	t.Logf("b ran %v after the worker started, behind 200 paused jobs", time.Since(t0))
	if d := time.Since(t0); d > 700*time.Millisecond {
		t.Errorf("b ran %v after the worker started; want well within a poll (1s)", d)
	}
	if n := rdb.ZCard(ctx, "{durable}:park:a").Val(); n != 200 {
		t.Errorf("%d jobs of a parked, want 200", n)
	}
}

// A job due at once is announced to one live worker, not to every
// replica: 200 of them, one every 5 ms, cost about a claim each across
// three replicas, not three.
func TestNoticeGoesToOneWorker(t *testing.T) {
	rdb := newClient(t, startRedis(t).Addr)
	r := newRuns()
	var qs []*durable.Queue
	for i := range 3 {
		qs = append(qs, newQueue(t, rdb, durable.WithWorkerID(fmt.Sprint("w", i)), durable.WithHandler("k", r.handler)))
	}
	admin := newQueue(t, rdb, durable.WithKinds("k"))
	waitFor(t, 10*time.Second, "three live workers", func() bool { return rdb.ZCard(context.Background(), "{durable}:workers").Val() == 3 })
	var claims0 uint64
	for _, q := range qs {
		claims0 += q.Stats().Claims
	}
	const n = 200
	for i := range n {
		if ok, err := admin.ScheduleAfter(context.Background(), fmt.Sprint("job-", i), "k", 0, nil); !ok || err != nil {
			t.Fatal(ok, err)
		}
		time.Sleep(5 * time.Millisecond)
	}
	waitFor(t, 10*time.Second, "every job run", func() bool { return r.total() == n })
	var claims uint64
	var per []uint64
	for _, q := range qs {
		st := q.Stats()
		claims += st.Claims
		per = append(per, st.Claimed)
	}
	claims -= claims0
	t.Logf("%d claims for %d jobs due at once; jobs per replica %v", claims, n, per)
	if claims > n*3/2 {
		t.Errorf("%d claims for %d jobs; want about one a job, not one a replica", claims, n)
	}
}
