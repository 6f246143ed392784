package durable_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/timewheel/timewheel/durable"
	"github.com/timewheel/timewheel/internal/redisserver"
)

// BenchmarkScheduleReplicated measures what WithReplicated costs a
// Schedule on the shared cluster (three primaries, a replica each, on
// this machine's loopback): one Schedule at a time (its latency: ns/op)
// and from 16 goroutines (its throughput: schedules/s), without the
// option and with WithReplicated(1, 1s).
//
//	cd durable && go test -run '^$' -bench ScheduleReplicated -benchtime 20000x
func BenchmarkScheduleReplicated(b *testing.B) {
	c := redisserver.SharedCluster(b)
	rdb := clusterClient(b, c)
	ctx := context.Background()
	for _, mode := range []string{"async", "replicated"} {
		var opts []durable.Option
		if mode == "replicated" {
			opts = append(opts, durable.WithReplicated(1, time.Second))
		}
		q := newQueue(b, rdb, append(opts, durable.WithName("bench-"+mode))...)
		var next atomic.Int64
		at := time.Now().Add(time.Hour)
		one := func(b *testing.B) {
			if _, err := q.Schedule(ctx, strconv.FormatInt(next.Add(1), 10), "k", at, nil); err != nil {
				b.Fatal(err)
			}
		}
		b.Run(mode+"/serial", func(b *testing.B) {
			for range b.N {
				one(b)
			}
		})
		b.Run(mode+"/parallel-16", func(b *testing.B) {
			b.SetParallelism(16)
			t0 := time.Now()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					one(b)
				}
			})
			b.ReportMetric(float64(b.N)/time.Since(t0).Seconds(), "schedules/s")
		})
	}
}

// BenchmarkAckReplicated measures what WithReplicated costs the worker's
// acks on the shared cluster: b.N jobs due at once, scheduled without the
// option, run by one worker of 64 handlers that return at once, without
// the option and with WithReplicated(1, 1s). It reports the jobs run a
// second (from the worker's start to the last ack) and ns/op, a job's
// share of that time.
//
//	cd durable && go test -run '^$' -bench AckReplicated -benchtime 5000x -count 3
func BenchmarkAckReplicated(b *testing.B) {
	c := redisserver.SharedCluster(b)
	rdb := clusterClient(b, c)
	ctx := context.Background()
	for _, mode := range []string{"async", "replicated"} {
		b.Run(mode, func(b *testing.B) {
			name := fmt.Sprintf("bench-ack-%s-%d", mode, b.N)
			admin := newQueue(b, rdb, durable.WithName(name), durable.WithKinds("k"))
			at := time.Now().Add(time.Hour)
			for i := range b.N {
				if _, err := admin.Schedule(ctx, strconv.Itoa(i), "k", at, nil); err != nil {
					b.Fatal(err)
				}
			}
			opts := []durable.Option{durable.WithName(name), durable.WithConcurrency(64),
				durable.WithHandler("k", func(context.Context, durable.Job) error { return nil })}
			if mode == "replicated" {
				opts = append(opts, durable.WithReplicated(1, time.Second))
			}
			if err := rdb.ZAdd(ctx, "{"+name+"}:due", zeros(b.N)...).Err(); err != nil { // due now
				b.Fatal(err)
			}
			b.ResetTimer()
			t0 := time.Now()
			q := newQueue(b, rdb, opts...)
			for q.Stats().Ran < uint64(b.N) {
				time.Sleep(time.Millisecond)
			}
			b.ReportMetric(float64(b.N)/time.Since(t0).Seconds(), "jobs/s")
			if st := q.Stats(); st.Errors > 0 {
				b.Errorf("%d failed calls", st.Errors)
			}
		})
	}
}

// zeros returns the members 0 ... n-1, each with score 0.
func zeros(n int) []redis.Z {
	z := make([]redis.Z, n)
	for i := range z {
		z[i] = redis.Z{Member: strconv.Itoa(i)}
	}
	return z
}

// BenchmarkClusterBurst measures 1e5 jobs due within one second, on one
// redis-server (alone, and with a replica, as each primary of the
// cluster has) against the shared cluster of three primaries with the
// queue in 3 shards (WithShards(3)): jobs scheduled 20 s ahead
// (DURABLE_BENCH_AHEAD changes it) from 16 goroutines, run by 3 replicas
// (goroutine groups in this process) of 64 handlers each, or of 192 on
// the cluster (64 a shard: a replica splits its handlers among the
// shards, and a claim leases at most a shard's free handlers). It reports the
// lateness (handler start minus due time), the jobs started per second
// from the first due time to the last start, and each primary's Redis CPU
// (INFO cpu, user and sys) per job, from before scheduling to the last
// start: cpu-µs/job/p1 and so on, in the order of their share, with their
// sum; and the runs of a job after its first (runs-again).
//
//	cd durable && go test -run '^$' -bench ClusterBurst -benchtime 1x -timeout 30m
func BenchmarkClusterBurst(b *testing.B) {
	ahead := 20 * time.Second
	if s := os.Getenv("DURABLE_BENCH_AHEAD"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil {
			b.Fatal(err)
		}
		ahead = d
	}
	for _, replica := range []bool{false, true} {
		name := "1-node"
		if replica {
			name = "1-node-with-a-replica" // as each primary of the cluster has
		}
		b.Run(name, func(b *testing.B) {
			srv := startRedis(b)
			if replica {
				host, port, _ := net.SplitHostPort(srv.Addr)
				r := startRedis(b, append([]string{"--replicaof", host, port}, redisserver.NoPersistence...)...)
				deadline := time.Now().Add(30 * time.Second)
				for {
					info, err := r.Info("replication")
					if err == nil && info["master_link_status"] == "up" {
						break
					}
					if time.Now().After(deadline) {
						b.Fatal("the replica did not sync in 30s")
					}
					time.Sleep(20 * time.Millisecond)
				}
			}
			for range b.N {
				burst(b, []*redisserver.Server{srv}, func() redis.UniversalClient {
					return redis.NewClient(&redis.Options{Addr: srv.Addr, PoolSize: 32})
				}, 1, 64, ahead, 100_000, time.Second)
			}
		})
	}
	for _, conc := range []int{64, 192} {
		b.Run(fmt.Sprintf("3-primaries-3-shards/handlers=%d", conc), func(b *testing.B) {
			onCluster(b, conc, ahead, 100_000, time.Second)
		})
	}
}

// BenchmarkClusterSpread is BenchmarkClusterBurst at a steady rate:
// 1e4 jobs due one every millisecond over 10 s, scheduled 5 s ahead, on
// one redis-server and on the cluster of three primaries (3 shards, 64
// handlers a shard), so that the lateness is the queue's and not that of
// a backlog. (Its Redis CPU per job counts the servers' own idle work
// over 15 s, a large share at this rate.)
//
//	cd durable && go test -run '^$' -bench ClusterSpread -benchtime 1x -timeout 30m
func BenchmarkClusterSpread(b *testing.B) {
	const n, window, ahead = 10_000, 10 * time.Second, 5 * time.Second
	b.Run("1-node", func(b *testing.B) {
		srv := startRedis(b)
		for range b.N {
			burst(b, []*redisserver.Server{srv}, func() redis.UniversalClient {
				return redis.NewClient(&redis.Options{Addr: srv.Addr, PoolSize: 32})
			}, 1, 64, ahead, n, window)
		}
	})
	b.Run("3-primaries-3-shards/handlers=192", func(b *testing.B) {
		onCluster(b, 192, ahead, n, window)
	})
}

// onCluster runs burst b.N times on the shared cluster, the queue in 3
// shards, with conc handlers a replica.
func onCluster(b *testing.B, conc int, ahead time.Duration, n int, window time.Duration) {
	c := redisserver.SharedCluster(b)
	ps, err := c.Primaries()
	if err != nil {
		b.Fatal(err)
	}
	for range b.N {
		burst(b, ps, func() redis.UniversalClient {
			return redis.NewClusterClient(&redis.ClusterOptions{Addrs: c.Addrs(), PoolSize: 32})
		}, 3, conc, ahead, n, window)
	}
}

// burst runs n jobs due evenly within window, from ahead from now, on a
// queue of k shards, and reports as BenchmarkClusterBurst says.
// primaries are the servers whose CPU it reads.
func burst(b *testing.B, primaries []*redisserver.Server, client func() redis.UniversalClient, k, conc int, ahead time.Duration, n int, window time.Duration) {
	const replicas = 3
	name := fmt.Sprintf("burst-%d", time.Now().UnixNano())
	late := make([]time.Duration, n)
	seen := make([]atomic.Int32, n)
	var done, lastStart, again atomic.Int64
	all := make(chan struct{})
	handle := func(p []byte) {
		now := time.Now()
		i := binary.LittleEndian.Uint32(p[8:])
		if seen[i].Add(1) != 1 {
			again.Add(1)
			return
		}
		late[i] = now.Sub(time.Unix(0, int64(binary.LittleEndian.Uint64(p))))
		lastStart.Store(now.UnixNano())
		if done.Add(1) == int64(n) {
			close(all)
		}
	}
	ctx := context.Background()
	var closers []func()
	defer func() {
		for _, f := range slices.Backward(closers) {
			f()
		}
	}()
	for range replicas {
		c := client()
		q := durable.New(c, durable.WithName(name), durable.WithShards(k), durable.WithConcurrency(conc),
			durable.WithHandler("k", func(_ context.Context, j durable.Job) error {
				handle(j.Payload)
				return nil
			}))
		closers = append(closers, func() { c.Close() }, func() { q.Close(ctx) })
	}
	sc := client()
	q := durable.New(sc, durable.WithName(name), durable.WithShards(k))
	closers = append(closers, func() { sc.Close() }, func() { q.Close(ctx) })

	cpu0 := redisCPU(b, primaries)
	first := time.Now().Add(ahead)
	b.ResetTimer()
	var wg sync.WaitGroup
	for g := range 16 {
		wg.Go(func() {
			for i := g; i < n; i += 16 {
				due := first.Add(time.Duration(int64(window) * int64(i) / int64(n)))
				p := make([]byte, 12)
				binary.LittleEndian.PutUint64(p, uint64(due.UnixNano()))
				binary.LittleEndian.PutUint32(p[8:], uint32(i))
				if _, err := q.Schedule(ctx, "job-"+strconv.Itoa(i), "k", due, p); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	if time.Now().After(first) {
		b.Fatalf("scheduling took past the first due time: make DURABLE_BENCH_AHEAD longer")
	}
	select {
	case <-all:
	case <-time.After(ahead + window + 5*time.Minute):
		b.Fatalf("%d of %d jobs ran", done.Load(), n)
	}
	b.StopTimer()
	cpu1 := redisCPU(b, primaries)
	slices.Sort(late)
	q99 := func(p float64) float64 { return float64(late[int(p*float64(n-1))]) / 1e6 }
	b.ReportMetric(q99(0.5), "p50-ms")
	b.ReportMetric(q99(0.99), "p99-ms")
	b.ReportMetric(q99(1), "max-ms")
	b.ReportMetric(float64(late[0])/1e6, "min-ms")
	b.ReportMetric(float64(n)/time.Unix(0, lastStart.Load()).Sub(first).Seconds(), "jobs/s")
	var per []float64
	sum := 0.0
	for i := range primaries {
		us := (cpu1[i] - cpu0[i]).Seconds() * 1e6 / float64(n)
		per = append(per, us)
		sum += us
	}
	slices.Sort(per)
	for i, us := range slices.Backward(per) {
		b.ReportMetric(us, fmt.Sprintf("cpu-µs/job/p%d", len(per)-i))
	}
	b.ReportMetric(sum, "cpu-µs/job/all")
	b.ReportMetric(float64(again.Load()), "runs-again")
	b.ReportMetric(0, "ns/op")
}

// redisCPU returns each server's CPU time (INFO cpu, user and sys).
func redisCPU(b *testing.B, servers []*redisserver.Server) []time.Duration {
	var out []time.Duration
	for _, s := range servers {
		info, err := s.Info("cpu")
		if err != nil {
			b.Fatal(err)
		}
		var sec float64
		for _, f := range []string{"used_cpu_user", "used_cpu_sys"} {
			v, err := strconv.ParseFloat(strings.TrimSpace(info[f]), 64)
			if err != nil {
				b.Fatalf("INFO cpu %s: %v", f, err)
			}
			sec += v
		}
		out = append(out, time.Duration(sec*1e9))
	}
	return out
}
