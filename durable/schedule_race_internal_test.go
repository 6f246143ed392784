package durable

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/timewheel/timewheel/durable/internal/store"
	"github.com/timewheel/timewheel/internal/redisserver"
)

// Claims that move a schedule's head on between Remove's (or Pause's)
// read and its change made runs that the change did not know of: they
// stayed, held ahead up to 2 s, after Remove returned. Here the hook
// stands for a burst of claims: it moves the head 50 instants (5 s) on
// between the two calls. The change refuses a head past the runs it was
// given, and reads again: no run is left.
func TestSchedChangeRacesClaims(t *testing.T) {
	for _, op := range []string{"Remove", "Pause"} {
		t.Run(op, func(t *testing.T) {
			rs := redisserver.ForTest(t)
			rdb := redis.NewClient(&redis.Options{Addr: rs.Addr})
			defer rdb.Close()
			ctx := context.Background()
			q := New(rdb, WithKinds("tick"))
			defer q.Close(ctx)
			sc := q.Schedules()
			if _, err := sc.Upsert(ctx, Periodic{Name: "p", Spec: "@every 100ms", Kind: "tick"}); err != nil {
				t.Fatal(err)
			}
			calls := 0
			testHookSchedCall = func(k store.Keys, rec store.Sched) {
				if calls++; calls > 1 {
					return
				}
				from, at := rec.HeadID, time.UnixMicro(rec.Head)
				for range 50 {
					at = at.Add(100 * time.Millisecond)
					r, err := q.st.AdvanceSched(ctx, k, store.AdvanceArgs{Name: "p", From: from, To: ceilMicro(at), ToID: RunID("p", at), Ver: rec.Ver})
					if err != nil || r != store.AdvancedOn {
						t.Fatalf("AdvanceSched = %v, %v", r, err)
					}
					from = RunID("p", at)
				}
			}
			defer func() { testHookSchedCall = nil }()
			var ok bool
			var err error
			if op == "Remove" {
				ok, err = sc.Remove(ctx, "p")
			} else {
				ok, err = sc.Pause(ctx, "p")
			}
			if !ok || err != nil {
				t.Fatalf("%s = %v, %v", op, ok, err)
			}
			if calls != 2 {
				t.Errorf("%s read the schedule %d times; want 2", op, calls)
			}
			if n := rdb.HLen(ctx, "{durable}:job").Val(); n != 0 {
				t.Errorf("%d runs left after %s: %v", n, op, rdb.HKeys(ctx, "{durable}:job").Val())
			}
		})
	}
}
