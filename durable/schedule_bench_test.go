package durable_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/timewheel/timewheel/durable"
	"github.com/timewheel/timewheel/internal/redisserver"
)

// BenchmarkPeriodicRun measures what a run of a periodic schedule costs
// against a plain job at the same load, on one redis-server: the CPU of
// this process (the worker, and for plain jobs the Schedule calls made
// 1 s before each due time) and of redis-server, per run, in a window of
// b.N runs taken after 2.5 s of them (so that both have 2 s of work made
// ahead, as they keep in steady state); the scripts and the claims per
// run; the lateness from instant (due time) to start. Two loads: one
// schedule of "@every 20ms" against a job due every 20 ms, and 200
// schedules of "@every 1s" against 200 jobs due at each whole second.
//
//	cd durable && go test -run '^$' -bench 'PeriodicRun/load=one' -benchtime 500x -count 6 > p.txt
//	go test -run '^$' -bench 'PeriodicRun/load=200' -benchtime 1000x -count 6 >> p.txt
//	benchstat -col /kind p.txt
//
// The 200 runs' window is a whole number of seconds (1000x), as their
// work comes in bursts a second apart. docs/durable.md, "Periodic
// schedules", has the figures.
func BenchmarkPeriodicRun(b *testing.B) {
	for _, l := range []struct {
		name   string
		scheds int
		every  time.Duration
	}{{"one-every-20ms", 1, 20 * time.Millisecond}, {"200-every-1s", 200, time.Second}} {
		for _, kind := range []string{"job", "periodic"} {
			b.Run("load="+l.name+"/kind="+kind, func(b *testing.B) { benchRuns(b, l.scheds, l.every, kind == "periodic") })
		}
	}
}

// benchRuns runs the load of scheds runs every every, as schedules or as
// jobs, and reports the figures of b.N runs.
func benchRuns(b *testing.B, scheds int, every time.Duration, periodic bool) {
	srv := startRedis(b)
	rdb := newClient(b, srv.Addr)
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	rate := float64(scheds) / every.Seconds()
	warm, n := int64(2.5*rate), int64(b.N)
	var count atomic.Int64
	var mu sync.Mutex
	var late []time.Duration // guarded by mu
	marks := [2]chan struct{}{make(chan struct{}), make(chan struct{})}
	q := newQueue(b, rdb, durable.WithHandler("tick", func(_ context.Context, j durable.Job) error {
		now := time.Now()
		_, due, ok := durable.ParseRunID(j.ID)
		if !ok {
			due = time.Unix(0, int64(binary.LittleEndian.Uint64(j.Payload)))
		}
		switch c := count.Add(1); {
		case c == warm:
			close(marks[0])
		case c > warm && c <= warm+n:
			mu.Lock()
			late = append(late, now.Sub(due))
			mu.Unlock()
			if c == warm+n {
				close(marks[1])
			}
		}
		return nil
	}))
	if periodic {
		for i := range scheds {
			p := durable.Periodic{Name: "s" + strconv.Itoa(i), Spec: "@every " + every.String(), Kind: "tick"}
			if _, err := q.Schedules().Upsert(ctx, p); err != nil {
				b.Fatal(err)
			}
		}
	} else {
		go scheduleLoad(ctx, b, q, scheds, every)
	}
	wait := func(c chan struct{}, runs int64) {
		select {
		case <-c:
		case <-time.After(time.Duration(float64(runs)/rate*float64(time.Second)) + 30*time.Second):
			b.Fatalf("%d runs started; waited for %d", count.Load(), runs)
		}
	}
	wait(marks[0], warm)
	cpu0, red0, scripts0, claims0 := rusageCPU(b), redisCPU(b, []*redisserver.Server{srv})[0], scriptCalls(b, rdb), q.Stats().Claims
	b.ResetTimer()
	wait(marks[1], n)
	b.StopTimer()
	cpu1, red1, scripts1, claims1 := rusageCPU(b), redisCPU(b, []*redisserver.Server{srv})[0], scriptCalls(b, rdb), q.Stats().Claims
	stop()
	mu.Lock()
	slices.Sort(late)
	p := func(f float64) float64 { return float64(late[int(f*float64(len(late)-1))]) / 1e6 }
	b.ReportMetric(p(0.5), "p50-ms")
	b.ReportMetric(p(0.99), "p99-ms")
	mu.Unlock()
	per := func(d time.Duration) float64 { return float64(d) / 1e3 / float64(n) }
	b.ReportMetric(per(cpu1-cpu0+red1-red0), "cpu-µs/run")
	b.ReportMetric(per(red1-red0), "redis-µs/run")
	b.ReportMetric((scripts1-scripts0)/float64(n), "scripts/run")
	b.ReportMetric(float64(claims1-claims0)/float64(n), "claims/run")
	b.ReportMetric(0, "ns/op")
}

// scheduleLoad schedules jobs of "tick" until ctx ends: scheds due at
// each multiple of every, each 1 s before its due time, its due time in
// its payload.
func scheduleLoad(ctx context.Context, b *testing.B, q *durable.Queue, scheds int, every time.Duration) {
	const ahead = time.Second
	for due, i := time.Now().Truncate(every).Add(ahead+every), 0; ; due = due.Add(every) {
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Until(due.Add(-ahead))):
		}
		for range scheds {
			i++
			pl := binary.LittleEndian.AppendUint64(nil, uint64(due.UnixNano()))
			if _, err := q.Schedule(ctx, fmt.Sprint("j", i), "tick", due, pl); err != nil && ctx.Err() == nil {
				b.Error(err)
				return
			}
		}
	}
}

// rusageCPU returns this process's CPU time, user and system.
func rusageCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// scriptCalls returns the EVALSHA and EVAL calls redis-server has served.
func scriptCalls(b *testing.B, rdb redis.UniversalClient) float64 {
	info, err := rdb.Info(context.Background(), "commandstats").Result()
	if err != nil {
		b.Fatal(err)
	}
	var n float64
	for _, cmd := range []string{"evalsha", "eval"} {
		if _, rest, ok := strings.Cut(info, "cmdstat_"+cmd+":calls="); ok {
			v, _ := strconv.ParseFloat(rest[:strings.IndexByte(rest, ',')], 64)
			n += v
		}
	}
	return n
}
