package durable_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/timewheel/timewheel/durable"
)

// The first Queue of a name writes its shard count; a later Queue given
// another fails every call with an error that names both counts, and so
// does one given none; Shards reads the count.
func TestLayoutShardsDisagree(t *testing.T) {
	rdb := newClient(t, startRedis(t).Addr)
	ctx := context.Background()
	if n, err := durable.Shards(ctx, rdb, "lay"); n != 0 || err != nil {
		t.Fatalf("Shards of a new name = %d, %v; want 0", n, err)
	}
	q3 := newQueue(t, rdb, durable.WithName("lay"), durable.WithShards(3), durable.WithKinds("k"))
	if _, err := q3.Schedule(ctx, "a", "k", time.Now().Add(time.Hour), nil); err != nil {
		t.Fatal(err)
	}
	if n, err := durable.Shards(ctx, rdb, "lay"); n != 3 || err != nil {
		t.Fatalf("Shards = %d, %v; want 3", n, err)
	}
	for _, c := range []struct {
		opts []durable.Option
		want string
	}{
		{[]durable.Option{durable.WithShards(2)}, `queue "lay" has 3 shards in Redis, this Queue WithShards(2)`},
		{nil, `queue "lay" has 3 shards in Redis, this Queue 1 shard (no WithShards)`},
	} {
		q := newQueue(t, rdb, append(c.opts, durable.WithName("lay"), durable.WithKinds("k"))...)
		_, err := q.Schedule(ctx, "b", "k", time.Now().Add(time.Hour), nil)
		if !errors.Is(err, durable.ErrShards) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Schedule: %v; want ErrShards with %q", err, c.want)
		}
		if _, err := q.Counts(ctx); !errors.Is(err, durable.ErrShards) {
			t.Errorf("Counts: %v; want ErrShards", err)
		}
	}
}

// A queue made before the layout record, with jobs and no record, reads
// as one shard: a Queue of three fails until MoveToShards, which writes
// three.
func TestLayoutOfAnOldQueue(t *testing.T) {
	rdb := newClient(t, startRedis(t).Addr)
	ctx := context.Background()
	old := time.Now().Add(time.Hour).UnixMicro()
	for i, id := range []string{"a", "b", "c", "d", "e", "f"} {
		rdb.HSet(ctx, "{old}:job", id, "k\x00")
		rdb.ZAdd(ctx, "{old}:due", redis.Z{Score: float64(old + int64(i)), Member: id})
	}
	if n, err := durable.Shards(ctx, rdb, "old"); n != 1 || err != nil {
		t.Fatalf("Shards of an old queue = %d, %v; want 1", n, err)
	}
	q := newQueue(t, rdb, durable.WithName("old"), durable.WithShards(3), durable.WithKinds("k"))
	if _, _, err := q.Lookup(ctx, "a"); !errors.Is(err, durable.ErrShards) || !strings.Contains(err.Error(), "has 1 shards in Redis, this Queue WithShards(3)") {
		t.Fatalf("Lookup before MoveToShards: %v; want ErrShards naming 1 and 3", err)
	}
	moved, left, err := q.MoveToShards(ctx)
	if err != nil || moved+left == 0 {
		t.Fatalf("MoveToShards = %d, %d, %v", moved, left, err)
	}
	if n, err := durable.Shards(ctx, rdb, "old"); n != 3 || err != nil {
		t.Fatalf("Shards after MoveToShards = %d, %v; want 3", n, err)
	}
	for _, id := range []string{"a", "b", "c", "d", "e", "f"} {
		if _, ok, err := q.Lookup(ctx, id); !ok || err != nil {
			t.Errorf("Lookup %s after MoveToShards: %v, %v", id, ok, err)
		}
	}
}
