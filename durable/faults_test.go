package durable_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/timewheel/timewheel/durable"
	"github.com/timewheel/timewheel/internal/redisserver"
)

// A fault is one of issue 47's, done to a running redis-server from
// outside: it returns once the fault has ended.
type fault struct {
	name string
	do   func(t *testing.T, srv *redisserver.Server)
}

// faultFor is how long each fault lasts: longer than the call bound
// (WithCallTimeout, 1 s), shorter than the lease (5 s).
const faultFor = 3 * time.Second

// faults are the faults of issue 47.
var faults = []fault{
	{name: "pause-all", do: func(t *testing.T, srv *redisserver.Server) {
		mustDo(t, srv, "CLIENT", "PAUSE", fmt.Sprint(faultFor.Milliseconds()), "ALL")
		time.Sleep(faultFor)
	}},
	{name: "pause-write", do: func(t *testing.T, srv *redisserver.Server) {
		mustDo(t, srv, "CLIENT", "PAUSE", fmt.Sprint(faultFor.Milliseconds()), "WRITE")
		time.Sleep(faultFor)
	}},
	{name: "debug-sleep", do: func(t *testing.T, srv *redisserver.Server) {
		// A slow Redis: blocked 50 ms of every 100.
		for end := time.Now().Add(faultFor); time.Now().Before(end); {
			mustDo(t, srv, "DEBUG", "SLEEP", "0.05")
			time.Sleep(50 * time.Millisecond)
		}
	}},
	{name: "client-kill", do: func(t *testing.T, srv *redisserver.Server) {
		// Every connection cut twice, a second apart, the workers'
		// subscriptions included, whatever each was doing.
		for i := range 2 {
			mustDo(t, srv, "CLIENT", "KILL", "TYPE", "normal")
			mustDo(t, srv, "CLIENT", "KILL", "TYPE", "pubsub")
			if i == 0 {
				time.Sleep(time.Second)
			}
		}
		time.Sleep(faultFor - time.Second)
	}},
}

func mustDo(t *testing.T, srv *redisserver.Server, args ...string) {
	t.Helper()
	if _, err := srv.Do(args...); err != nil {
		t.Errorf("%v: %v", args, err)
	}
}

// What runFault counts.
type faultResult struct {
	acked, unacked  int           // Schedules that returned true, nil; and an error
	lost, twice     int           // acknowledged jobs that never ran; jobs that ran more than once
	early           int           // starts before the job's due time
	slowest         time.Duration // the longest Schedule call
	workerErrors    uint64        // the workers' Redis calls that failed (Stats.Errors)
	schedulesFaulty int           // Schedules that began while the fault lasted
	startsFaulty    int           // starts while the fault lasted
	latest          time.Duration // the latest start after its due time
}

// The faults of issue 47, each against a redis-server of its own while
// two workers run 200 jobs due over four seconds and four callers
// schedule more: no acknowledged job is lost, none runs twice, none
// starts before its due time. Then call-bound: no Schedule took longer
// than the call bound (1 s) and a second of slack.
func TestFaults(t *testing.T) {
	for _, f := range faults {
		t.Run(f.name, func(t *testing.T) {
			r := runFault(t, f)
			t.Logf("%s: %d Schedules acknowledged, %d not (an error), %d of them begun during the fault; lost %d, twice %d, early %d; %d starts during the fault, the latest start %v after its due time; worker call errors %d; slowest Schedule %v",
				f.name, r.acked, r.unacked, r.schedulesFaulty, r.lost, r.twice, r.early, r.startsFaulty, r.latest.Round(time.Millisecond),
				r.workerErrors, r.slowest.Round(time.Millisecond))
			if r.lost+r.twice+r.early > 0 {
				t.Errorf("lost %d, twice %d, early %d: want 0, 0, 0", r.lost, r.twice, r.early)
			}
			t.Run("call-bound", func(t *testing.T) {
				const bound = time.Second // WithCallTimeout's default
				if r.slowest > bound+time.Second {
					t.Errorf("a Schedule took %v; want at most the call bound, %v, and a second of slack", r.slowest.Round(time.Millisecond), bound)
				}
			})
		})
	}
}

// runFault runs f against a redis-server of its own started with the
// DEBUG command, while two workers (a client each) run jobs due over 4 s
// from 300 ms on, with f begun at 1 s and four callers scheduling a job
// due 300 ms ahead every 20 ms each until 500 ms after f.
func runFault(t *testing.T, f fault) faultResult {
	srv := startRedis(t, slices.Concat(redisserver.NoPersistence, []string{"--enable-debug-command", "local"})...)
	r := newRuns()
	work := func(ctx context.Context, j durable.Job) error {
		r.add(j)
		select {
		case <-time.After(20 * time.Millisecond):
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	var workers []*durable.Queue
	for i := range 2 {
		workers = append(workers, newQueue(t, newClient(t, srv.Addr), durable.WithWorkerID(fmt.Sprint("w", i)),
			durable.WithErrorHandler(func(error) {}), // the fault makes many; Stats counts them
			durable.WithHandler("k", work)))
	}
	rdb := newClient(t, srv.Addr)
	q := newQueue(t, rdb, durable.WithKinds("k"))
	ctx := context.Background()
	const n = 200
	start := time.Now().Add(300 * time.Millisecond)
	var (
		mu      sync.Mutex
		acked   []string      // guarded by mu
		unacked int           // guarded by mu
		slowest time.Duration // guarded by mu
		faulty  int           // guarded by mu
	)
	for i := range n {
		id := fmt.Sprint("pre-", i)
		if ok, err := q.Schedule(ctx, id, "k", start.Add(time.Duration(i)*4*time.Second/n), nil); !ok || err != nil {
			t.Fatal(ok, err)
		}
		acked = append(acked, id)
	}
	var faultFrom, faultTo time.Time // written before the callers read them, under mu
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for c := range 4 {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				case <-time.After(20 * time.Millisecond):
				}
				id := fmt.Sprintf("call-%d-%d", c, i)
				t0 := time.Now()
				ok, err := q.Schedule(ctx, id, "k", t0.Add(300*time.Millisecond), nil)
				d := time.Since(t0)
				mu.Lock()
				slowest = max(slowest, d)
				if ok && err == nil {
					acked = append(acked, id)
				} else {
					unacked++
				}
				if !faultFrom.IsZero() && t0.After(faultFrom) && (faultTo.IsZero() || t0.Before(faultTo)) {
					faulty++
				}
				mu.Unlock()
			}
		})
	}
	time.Sleep(time.Until(start.Add(700 * time.Millisecond)))
	mu.Lock()
	faultFrom = time.Now()
	mu.Unlock()
	f.do(t, srv)
	mu.Lock()
	faultTo = time.Now()
	mu.Unlock()
	time.Sleep(500 * time.Millisecond)
	close(stop)
	wg.Wait()

	// Every job in the store runs: a claim Redis ran after its caller
	// gave up holds its jobs for a lease (5 s) before another takes them.
	waitFor(t, 30*time.Second, "the store empty", func() bool { return empty(rdb, "durable") })
	res := faultResult{acked: len(acked), unacked: unacked, slowest: slowest, schedulesFaulty: faulty}
	for _, w := range workers {
		res.workerErrors += w.Stats().Errors
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, id := range acked {
		if len(r.byID[id]) == 0 {
			res.lost++
			t.Errorf("%s acknowledged, never ran", id)
		}
	}
	for id, js := range r.byID {
		if len(js) > 1 {
			res.twice++
			t.Errorf("%s ran %d times, at %v", id, len(js), r.at[id])
		}
		for k, j := range js {
			at := r.at[id][k]
			if at.Before(j.Due) {
				res.early++
				t.Errorf("%s started %v before its due time", id, j.Due.Sub(at))
			}
			res.latest = max(res.latest, at.Sub(j.Due))
			if at.After(faultFrom) && at.Before(faultTo) {
				res.startsFaulty++
			}
		}
	}
	return res
}
