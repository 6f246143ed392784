package durable

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/timewheel/timewheel/durable/internal/store"
	"github.com/timewheel/timewheel/internal/redisserver"
)

// A feed on a cluster gets what a script SPUBLISHes to its channel; when
// the channel's slot moves to another primary, the feed subscribes again
// there, and gets what is published after the move. PUBSUB SHARDNUMSUB
// shows the subscription on the slot's primary only.
func TestFeedFollowsSlot(t *testing.T) {
	c := redisserver.SharedCluster(t)
	rdb := redis.NewClusterClient(&redis.ClusterOptions{Addrs: c.Addrs()})
	defer rdb.Close()
	const ch = "{feed-test}:ev"
	pub := redis.NewScript(store.LuaSPublish + "spublish(KEYS[1], ARGV[1])")
	f := subscribe(rdb, ch)
	defer f.close()
	ctx := context.Background()
	next := func(want string) {
		t.Helper()
		deadline := time.After(10 * time.Second)
		for {
			select {
			case m := <-f.C():
				switch m := m.(type) {
				case *redis.Subscription:
					if want == "subscribed" {
						return
					}
				case *redis.Message:
					if m.Payload == want {
						return
					}
					t.Fatalf("got %q, want %q", m.Payload, want)
				}
			case <-deadline:
				t.Fatalf("no %q in 10s", want)
			}
		}
	}
	next("subscribed")
	if err := pub.Run(ctx, rdb, []string{ch}, "one").Err(); err != nil && err != redis.Nil {
		t.Fatal(err)
	}
	next("one")
	slot := redisserver.Slot(ch)
	home, err := c.Primary(slot)
	if err != nil {
		t.Fatal(err)
	}
	ps, _ := c.Primaries()
	to := ps[0]
	if to == home {
		to = ps[1]
	}
	if err := c.MoveSlot(slot, to); err != nil {
		t.Fatal(err)
	}
	defer c.MoveSlot(slot, home)
	next("subscribed")
	for _, p := range ps {
		v, err := p.Do("PUBSUB", "SHARDNUMSUB", ch)
		if err != nil {
			t.Fatal(err)
		}
		n := v.([]any)[1].(int64)
		if want := map[bool]int64{true: 1, false: 0}[p == to]; n != want {
			t.Errorf("PUBSUB SHARDNUMSUB on %s = %d, want %d", p.Addr, n, want)
		}
	}
	if err := pub.Run(ctx, rdb, []string{ch}, "two").Err(); err != nil && err != redis.Nil {
		t.Fatal(err)
	}
	next("two")
}
