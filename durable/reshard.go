package durable

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/timewheel/timewheel/durable/internal/store"
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
//
// First it writes k as the queue's shard count in its layout record,
// over a record of one shard: from then on the Queues of the name made
// without WithShards(k) fail their calls (ErrShards). It returns an
// error wrapping ErrShards for a record of another count.
func (q *Queue) MoveToShards(ctx context.Context) (moved, left int, err error) {
	if err := q.usable(ctx, "MoveToShards", ""); err != nil {
		return 0, 0, err
	}
	if err := q.moveLayout(ctx); err != nil {
		return 0, 0, fmt.Errorf("durable: MoveToShards: %w", err)
	}
	if len(q.shards) == 1 {
		return 0, 0, nil
	}
	k0 := q.shards[0]
	for _, dead := range []bool{false, true} {
		for cursor := uint64(0); ; {
			var ids []string
			err := q.doOn(ctx, q.brs[0], "scan", func(ctx context.Context) (err error) {
				ids, cursor, err = q.st.Scan(ctx, k0, dead, cursor, 256)
				return err
			})
			if err != nil {
				return moved, left, fmt.Errorf("durable: MoveToShards: %w", err)
			}
			for _, id := range ids {
				t := q.shardIndex(id)
				if t == 0 {
					continue
				}
				ok, err := q.moveOne(ctx, id, t)
				if ok {
					moved++
				} else {
					left++
				}
				if err != nil {
					return moved, left, fmt.Errorf("durable: MoveToShards %q: %w", id, err)
				}
			}
			if cursor == 0 {
				break
			}
		}
	}
	return moved, left, nil
}

// moveLayout has the layout record say the Queue's shard count: it
// writes it over a record of one shard (the step MoveToShards takes),
// and refuses any other count.
func (q *Queue) moveLayout(ctx context.Context) error {
	l, err := q.readLayout(ctx, len(q.shards))
	switch {
	case err != nil:
		return err
	case l.Shards == len(q.shards):
	case l.Shards == 1:
		err = q.callOn(ctx, &q.br, "layout", q.cfg.callTimeout, func(ctx context.Context) error {
			return q.st.SetLayout(ctx, q.k, len(q.shards))
		})
		if err != nil {
			return err
		}
	default:
		return q.shardsError(l.Shards)
	}
	q.laid.Store(true)
	return nil
}

// moveOne moves the job id from shard 0 to shard t, if it may, and
// reports whether it did.
func (q *Queue) moveOne(ctx context.Context, id string, t int) (bool, error) {
	k0 := q.shards[0]
	var snap store.Snapshot
	var ok bool
	err := q.doOn(ctx, q.brs[0], "snap", func(ctx context.Context) (err error) {
		snap, ok, err = q.st.Snap(ctx, k0, id, moveMargin.Microseconds())
		return err
	})
	if err != nil || !ok {
		return false, err
	}
	// A change the replicas fell short of (WithReplicated) is made on
	// the primary: the move goes on, so that the job is not left in both
	// shards, and the shortfall is returned at the end.
	var short error
	call := func(i int, op string, f func(context.Context, store.Keys, string, store.Snapshot) (bool, error)) (bool, error) {
		var done bool
		err := q.doWrite(ctx, q.brs[i], op, func(ctx context.Context) (err error) {
			done, err = f(ctx, q.shards[i], id, snap)
			return err
		})
		if errors.Is(err, ErrNotReplicated) {
			short, err = err, nil
		}
		return done, err
	}
	if put, err := call(t, "put", q.st.Put); err != nil || !put {
		return false, cmp.Or(err, short)
	}
	dropped, err := call(0, "drop", q.st.Drop)
	if err != nil || dropped {
		return dropped, cmp.Or(err, short)
	}
	// Changed in shard 0 meanwhile: the copy goes, unless changed too.
	_, err = call(t, "drop", q.st.Drop)
	return false, cmp.Or(err, short)
}
