// Command example runs three replicas of a service in one process, each
// with a cron.Scheduler of its own and a Redis client of its own, all
// claiming their runs on one Redis, and prints which replica ran which
// instant:
//
//	cd cron/redisclaim && go run ./example
//
// It starts a redis-server of the machine's for the run (Debian, Ubuntu:
// apt-get install -y redis-server), or uses the one at REDIS_ADDR.
//
// The replicas run a job every second, which takes a millisecond, for
// five seconds, on the real clock; replica c's clock is 1.5 seconds
// behind the others', as on a machine whose clock has drifted. c runs
// the first second or two alone: when the three start, a's and b's
// clocks are past them already. After that a and b race for each run,
// and c, 1.5 seconds after the run has returned, finds it claimed. With a
// lock released when the run returns, c would run every one of them
// again.
package main

import (
	"context"
	"fmt"
	"log"
	"os"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/timewheel/timewheel"
	"github.com/timewheel/timewheel/clock"
	"github.com/timewheel/timewheel/cron"
	"github.com/timewheel/timewheel/cron/redisclaim"
	"github.com/timewheel/timewheel/internal/redisserver"
)

// skewed is the real clock, off by skew.
type skewed struct {
	clock.Clock
	skew time.Duration
}

func (c skewed) Now() time.Time                  { return c.Clock.Now().Add(c.skew) }
func (c skewed) Since(t time.Time) time.Duration { return c.Now().Sub(t) }

type replica struct {
	name string
	w    *timewheel.Wheel
	s    *cron.Scheduler
	rdb  redis.UniversalClient
}

func main() {
	addr := os.Getenv("REDIS_ADDR")
	if addr == "" {
		dir, err := os.MkdirTemp("", "redisclaim-example")
		if err != nil {
			log.Fatal(err)
		}
		defer os.RemoveAll(dir)
		srv, err := redisserver.Start(dir)
		if err != nil {
			log.Fatal(err)
		}
		defer srv.Stop()
		addr = srv.Addr
	}

	var mu sync.Mutex // one line at a time
	prefix := fmt.Sprintf("example:%d:", time.Now().UnixNano())
	var replicas []*replica
	for _, r := range []struct {
		name string
		skew time.Duration
	}{{"a", 0}, {"b", 0}, {"c", -1500 * time.Millisecond}} {
		rdb := redis.NewUniversalClient(&redis.UniversalOptions{Addrs: []string{addr}})
		w := timewheel.New(timewheel.WithClock(skewed{clock.Real(), r.skew}))
		s := cron.New(cron.WithWheel(w), cron.WithLocation(time.UTC),
			cron.WithClaimer(redisclaim.New(rdb, redisclaim.WithPrefix(prefix), redisclaim.WithOwner(r.name))))
		_, err := s.Add("tick", "* * * * * *", func(_ context.Context, at time.Time) {
			time.Sleep(time.Millisecond) // the work
			mu.Lock()
			defer mu.Unlock()
			fmt.Printf("%s  ran on %s, whose clock read %s\n", at.Format("15:04:05"), r.name, w.Now().Format("15:04:05.000"))
		})
		if err != nil {
			log.Fatal(err)
		}
		replicas = append(replicas, &replica{r.name, w, s, rdb})
	}
	fmt.Println(`three replicas, c's clock 1.5s behind; "* * * * * *" for five seconds:`)
	time.Sleep(5*time.Second + 1600*time.Millisecond) // c's last run too

	for _, r := range replicas {
		r.s.Stop(context.Background())
		r.w.Close()
		st := r.s.Stats()
		fmt.Printf("%s: ran %d, found %d claimed by another, %d claim errors\n", r.name, st.Runs, st.ClaimsLost, st.ClaimErrors)
	}
	keys, _ := replicas[0].rdb.Keys(context.Background(), prefix+"*").Result()
	if len(keys) > 0 {
		owner, _ := replicas[0].rdb.Get(context.Background(), keys[0]).Result()
		ttl, _ := replicas[0].rdb.PTTL(context.Background(), keys[0]).Result()
		fmt.Printf("%d keys in Redis, such as %s = %q, which expires in %v\n", len(keys), keys[0], owner, ttl.Round(time.Second))
	}
	for _, r := range replicas {
		r.rdb.Close()
	}
}
