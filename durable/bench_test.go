package durable_test

import (
	"context"
	"encoding/binary"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/timewheel/timewheel/durable"
)

// usedMemory returns Redis's used_memory.
func usedMemory(b *testing.B, rdb redis.UniversalClient) int64 {
	return int64(infoField(b, rdb, "memory", "used_memory"))
}

func infoField(b *testing.B, rdb redis.UniversalClient, section, field string) float64 {
	info, err := rdb.Info(context.Background(), section).Result()
	if err != nil {
		b.Fatal(err)
	}
	for line := range strings.Lines(info) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), field+":"); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				b.Fatal(err)
			}
			return f
		}
	}
	b.Fatalf("INFO %s has no %s", section, field)
	return 0
}

// The benchmark against asynq, with worker processes, is in the module
// bench/durable, so that asynq never enters this module's requirements.

// BenchmarkMillionPending holds 1e6 jobs pending an hour ahead in Redis
// (no persistence, to schedule them sooner), starts 3 replicas (goroutine
// groups, as above) and runs 1e4 jobs due over 2 s among them. It reports
// Redis used_memory per pending job, the lateness of the 1e4, and the
// replicas' heap: what they hold does not grow with the jobs pending.
//
//	cd durable && go test -run '^$' -bench MillionPending -benchtime 1x
func BenchmarkMillionPending(b *testing.B) {
	srv := startRedis(b)
	rdb := newClient(b, srv.Addr)
	ctx := context.Background()
	for range b.N {
		rdb.FlushAll(ctx)
		mem0 := usedMemory(b, rdb)
		sc := redis.NewUniversalClient(&redis.UniversalOptions{Addrs: []string{srv.Addr}, PoolSize: 32})
		q := durable.New(sc)
		later := time.Now().Add(time.Hour)
		const pending = 1_000_000
		var wg sync.WaitGroup
		for g := range 16 {
			wg.Go(func() {
				p := make([]byte, 12)
				for i := g; i < pending; i += 16 {
					if _, err := q.Schedule(ctx, "later-"+strconv.Itoa(i), "k", later.Add(time.Duration(i)*time.Millisecond), p); err != nil {
						b.Error(err)
						return
					}
				}
			})
		}
		wg.Wait()
		mem1 := usedMemory(b, rdb)
		heap0 := heapInUse()
		const n = 10_000
		late := make([]time.Duration, 0, n)
		var mu sync.Mutex
		all := make(chan struct{})
		var queues []*durable.Queue
		for range 3 {
			queues = append(queues, durable.New(sc, durable.WithHandler("k", func(_ context.Context, j durable.Job) error {
				now := time.Now()
				mu.Lock()
				defer mu.Unlock()
				late = append(late, now.Sub(time.Unix(0, int64(binary.LittleEndian.Uint64(j.Payload)))))
				if len(late) == n {
					close(all)
				}
				return nil
			})))
		}
		first := time.Now().Add(3 * time.Second)
		for i := range n {
			due := first.Add(2 * time.Second * time.Duration(i) / n)
			p := binary.LittleEndian.AppendUint64(nil, uint64(due.UnixNano()))
			if _, err := q.Schedule(ctx, "soon-"+strconv.Itoa(i), "k", due, p); err != nil {
				b.Fatal(err)
			}
		}
		select {
		case <-all:
		case <-time.After(time.Minute):
			b.Fatal("the 1e4 jobs did not run")
		}
		heap1 := heapInUse()
		for _, q := range queues {
			q.Close(ctx)
		}
		q.Close(ctx)
		sc.Close()
		slices.Sort(late)
		b.ReportMetric(float64(mem1-mem0)/pending, "B/pending-job")
		b.ReportMetric(float64(late[n/2])/1e6, "p50-ms")
		b.ReportMetric(float64(late[n*99/100])/1e6, "p99-ms")
		b.ReportMetric(float64(late[n-1])/1e6, "max-ms")
		b.ReportMetric(float64(heap1-heap0)/3, "heap-B/replica")
		b.ReportMetric(0, "ns/op")
	}
}

// heapInUse returns the heap in use after a collection.
func heapInUse() int64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapInuse)
}
