package durable

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// moveMargin is how far ahead a pending job must be due for MoveToShards
// to move it: no worker claims it, in either shard, while it moves.
const moveMargin = 10 * time.Second

// MoveToShards moves the jobs of shard 0 whose IDs map to another shard
// into that shard, and returns how many it moved and how many it left.
// It is the step from one shard to k: a Queue made WithShards(k) on the
// name of a queue of one shard finds in shard 0 the jobs scheduled
// before, and its ID-based calls (Lookup, Cancel, Reschedule) look for
// them in their new shards.
//
// It moves the dead jobs, and the pending jobs due more than 10 s ahead
// that no worker holds. It leaves the others of shard 0 that map
// elsewhere: those due sooner, leased, parked (their kind paused), or
// whose ID the new layout holds already. They still run, from shard 0,
// whose worker every Queue of the name runs; call it again later to move
// those still there. Workers and callers may go on meanwhile.
//
// Each job is copied into its shard, then deleted from shard 0 if it is
// unchanged there (else the copy is deleted). The downside of a copy
// across slots is a window: should the call stop between the two, the
// job is in both shards, and runs twice unless a later call, which
// deletes it from shard 0, comes before it is due. It costs three round
// trips a job moved, and one per 256 jobs of shard 0 read.
// WithReplicated, a move that fewer replicas than asked acknowledged is
// still made whole on the primaries, and the call stops there with an
// error wrapping ErrNotReplicated.
func (q *Queue) MoveToShards(ctx context.Context) (moved, left int, err error) {
	if err := q.checkOp(ctx, "MoveToShards", ""); err != nil {
		return 0, 0, err
	}
	if len(q.shards) == 1 {
		return 0, 0, nil
	}
	k0 := q.shards[0]
	for _, key := range []string{k0.due(), k0.dead()} {
		for cursor := uint64(0); ; {
			var ids []string
			err := q.doOn(ctx, q.brs[0], func(ctx context.Context) (err error) {
				if key == k0.due() {
					ids, cursor, err = q.rdb.ZScan(ctx, key, cursor, "", 256).Result()
				} else {
					ids, cursor, err = q.rdb.HScan(ctx, key, cursor, "", 256).Result()
				}
				return err
			})
			if err != nil {
				return moved, left, fmt.Errorf("durable: MoveToShards: %w", err)
			}
			for i := 0; i < len(ids); i += 2 { // id, score or error
				t := q.shardIndex(ids[i])
				if t == 0 {
					continue
				}
				ok, err := q.moveOne(ctx, ids[i], t)
				if ok {
					moved++
				} else {
					left++
				}
				if err != nil {
					return moved, left, fmt.Errorf("durable: MoveToShards %q: %w", ids[i], err)
				}
			}
			if cursor == 0 {
				break
			}
		}
	}
	return moved, left, nil
}

// moveOne moves the job id from shard 0 to shard t, if it may, and
// reports whether it did.
func (q *Queue) moveOne(ctx context.Context, id string, t int) (bool, error) {
	k0 := q.shards[0]
	var snap []any
	err := q.doOn(ctx, q.brs[0], func(ctx context.Context) (err error) {
		snap, err = snapScript.Run(ctx, q.rdb, k0.all, k0.prefix, id, moveMargin.Microseconds()).Slice()
		if err == redis.Nil {
			err = nil // not to be moved now
		}
		return err
	})
	if err != nil || len(snap) < 4 {
		return false, err
	}
	state := make([]any, 4) // blob, score, run, dead: "" for none
	for i := range state {
		s, _ := snap[i].(string)
		state[i] = s
	}
	// A change the replicas fell short of (WithReplicated) is made on
	// the primary: the move goes on, so that the job is not left in both
	// shards, and the shortfall is returned at the end.
	var short error
	call := func(i int, s *redis.Script, args ...any) (int, error) {
		k := q.shards[i]
		var n int64
		err := q.doWrite(ctx, q.brs[i], func(ctx context.Context) error {
			cmd := q.eval(ctx, s, k.all, append([]any{k.prefix, id}, args...)...)
			n, _ = cmd.Val().(int64)
			return cmd.Err()
		})
		if errors.Is(err, ErrNotReplicated) {
			short, err = err, nil
		}
		return int(n), err
	}
	if put, err := call(t, putScript, append(state, horizon)...); err != nil || put == 0 {
		return false, cmp.Or(err, short)
	}
	dropped, err := call(0, dropScript, state...)
	if err != nil || dropped == 1 {
		return dropped == 1, cmp.Or(err, short)
	}
	// Changed in shard 0 meanwhile: the copy goes, unless changed too.
	_, err = call(t, dropScript, state...)
	return false, cmp.Or(err, short)
}
