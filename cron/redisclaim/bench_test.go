package redisclaim_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/timewheel/timewheel"
	"github.com/timewheel/timewheel/clock"
	"github.com/timewheel/timewheel/cron"
	"github.com/timewheel/timewheel/cron/redisclaim"
)

// benchRound numbers the rounds of benchmarks on one server (-count,
// and the rounds that find b.N), so that each claims keys of its own.
var benchRound atomic.Int64

// fresh returns a key prefix no round has used.
func fresh(name string) redisclaim.Option {
	return redisclaim.WithPrefix(fmt.Sprintf("%s%d:", name, benchRound.Add(1)))
}

// BenchmarkClaim is the cost of one claim against a redis-server on the
// loopback: won (a new instant each time, the key is set), lost (the same
// instant, the key is there), won by 8 goroutines at once, and ping, a
// bare round trip, the floor under any claim.
func BenchmarkClaim(b *testing.B) {
	rdb := newClient(b, startRedis(b))
	ctx := context.Background()
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	b.Run("won", func(b *testing.B) {
		c := redisclaim.New(rdb, fresh("won"))
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			i++
			if won, err := c.Claim(ctx, "job", at.Add(time.Duration(i)*time.Second)); !won || err != nil {
				b.Fatal(won, err)
			}
		}
	})
	b.Run("lost", func(b *testing.B) {
		c := redisclaim.New(rdb, fresh("lost"))
		c.Claim(ctx, "job", at)
		b.ReportAllocs()
		for b.Loop() {
			if won, err := c.Claim(ctx, "job", at); won || err != nil {
				b.Fatal(won, err)
			}
		}
	})
	var n atomic.Int64                           // instants claimed in all rounds
	b.Run("won-parallel-8", func(b *testing.B) { // each round claims instants of its own
		c := redisclaim.New(rdb, fresh("parallel"))
		b.ReportAllocs()
		b.SetParallelism(8) // 8 goroutines per GOMAXPROCS
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if won, err := c.Claim(ctx, "job", at.Add(time.Duration(n.Add(1))*time.Second)); !won || err != nil {
					b.Error(won, err)
					return
				}
			}
		})
	})
	b.Run("ping", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := rdb.Ping(ctx).Err(); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkRun is the cost of one run of a job through a scheduler on a
// virtual clock, inline, with its claim on Redis and without a claimer:
// the difference is what claiming adds to a run.
func BenchmarkRun(b *testing.B) {
	rdb := newClient(b, startRedis(b))
	for _, tc := range []struct {
		name string
		opts func() []cron.Option
	}{
		{"unclaimed", func() []cron.Option { return nil }},
		{"redis", func() []cron.Option { return []cron.Option{cron.WithClaimer(redisclaim.New(rdb, fresh("run")))} }},
	} {
		b.Run(tc.name, func(b *testing.B) {
			clk := clock.NewVirtual(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
			w := timewheel.New(timewheel.WithClock(clk), timewheel.WithExecutor(timewheel.Inline()))
			defer w.Close()
			s := cron.New(append([]cron.Option{cron.WithWheel(w), cron.WithInline()}, tc.opts()...)...)
			defer s.Stop(context.Background())
			runs := 0
			s.Add("job", "* * * * * *", func(context.Context, time.Time) { runs++ })
			b.ReportAllocs()
			for b.Loop() {
				clk.Advance(time.Second)
			}
			if runs != b.N {
				b.Fatalf("%d runs in %d seconds", runs, b.N)
			}
		})
	}
}
