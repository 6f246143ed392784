package redisclaim_test

import (
	"context"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/timewheel/timewheel/cron"
	"github.com/timewheel/timewheel/cron/redisclaim"
)

// Each replica of a service makes the same scheduler with the same jobs on
// one Redis; each run of "report" runs on one replica. (It needs a Redis
// server, so it is compiled, not run; cd cron/redisclaim && go run
// ./example shows it working.)
func ExampleNew() {
	rdb := redis.NewUniversalClient(&redis.UniversalOptions{Addrs: []string{"redis:6379"}})
	s := cron.New(cron.WithClaimer(redisclaim.New(rdb)))
	if _, err := s.Add("report", "0 9 * * *", func(ctx context.Context, at time.Time) {
		// Send the report for the run of at, on one replica.
	}, cron.InZone("America/New_York")); err != nil {
		panic(err)
	}
	defer s.Stop(context.Background())
}
