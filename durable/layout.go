package durable

import (
	"context"
	"errors"
	"fmt"

	"github.com/redis/go-redis/v9"

	"github.com/timewheel/timewheel/durable/internal/store"
	"github.com/timewheel/timewheel/internal/nilarg"
)

// The layout record. A queue's shard count (WithShards) decides in which
// shard every ID-based call looks for a job, so every Queue of a name
// must use the same. The count, and the version of the key scheme, live
// in Redis in {name}:layout (a hash: "shards", "version"; the store's
// keys.go has the layout), written by the first call of the first Queue
// that uses the name, and read by every later Queue at its first call,
// by the command (durable/cmd/durable) and, through its Queues, by the
// dashboard. A queue made before the record, with jobs but none, reads
// as one shard. MoveToShards, the step from one shard to k, writes k.

// ErrShards is wrapped by the error of every call of a Queue whose shard
// count (WithShards) disagrees with the one its queue's layout record in
// Redis holds. The error names both counts.
var ErrShards = errors.New("durable: shard count disagrees with the queue's layout in Redis")

// checkLayout returns nil once the queue's layout record agrees with the
// Queue's shard count, which it reads (and writes, for a new queue) at
// the first call; an error naming both counts (wrapping ErrShards)
// while it does not, read again at each call so that a MoveToShards
// elsewhere is seen. It costs one round trip until the record agrees,
// O(1) after.
func (q *Queue) checkLayout(ctx context.Context) error {
	if q.laid.Load() {
		return nil
	}
	l, err := q.readLayout(ctx, len(q.shards))
	if err != nil {
		return err
	}
	if l.Shards != len(q.shards) {
		return q.shardsError(l.Shards)
	}
	q.laid.Store(true)
	return nil
}

// readLayout reads the layout record, writing shards (0: read only) for a
// new queue.
func (q *Queue) readLayout(ctx context.Context, shards int) (store.Layout, error) {
	var l store.Layout
	err := q.callOn(ctx, &q.br, "layout", q.cfg.callTimeout, func(ctx context.Context) (err error) {
		l, err = q.st.Layout(ctx, q.k, shards)
		return err
	})
	return l, err
}

// shardsError is the error of a Queue of len(q.shards) shards on a queue
// whose record holds stored.
func (q *Queue) shardsError(stored int) error {
	given := fmt.Sprintf("WithShards(%d)", len(q.shards))
	if q.cfg.shards == 0 {
		given = "1 shard (no WithShards)"
	}
	return fmt.Errorf("%w: queue %q has %d shards in Redis, this Queue %s; make it WithShards(%d), or move the queue with MoveToShards", ErrShards, q.cfg.name, stored, given, stored)
}

// Shards returns the shard count of the queue name as its layout record
// in Redis holds it (what WithShards must give): 1 for a queue made
// before the record, and 0 for a name no Queue has used. It makes one
// call, bounded by ctx, through a client that holds ctx's deadline
// whatever rdb's options (see New). It costs one round trip.
func Shards(ctx context.Context, rdb redis.UniversalClient, name string) (int, error) {
	if nilarg.Is(rdb) {
		panic("durable: Shards: nil Redis client" + nilarg.Type(rdb))
	}
	st := store.Open(rdb, store.Replication{})
	defer st.Close()
	l, err := st.Layout(ctx, store.NewKeys("{"+name+"}:"), 0)
	if err != nil {
		return 0, fmt.Errorf("durable: Shards %q: %w", name, err)
	}
	return l.Shards, nil
}
