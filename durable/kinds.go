package durable

import (
	"context"
	"fmt"
	"slices"

	"github.com/timewheel/timewheel/durable/internal/store"
)

// KindsBudget is how many jobs a shard's walk reads at most in one
// KindCounts call.
const KindsBudget = 10_000

// A KindCount is a kind's jobs by state.
type KindCount struct {
	Kind                   string
	Pending, Running, Dead int64
}

// KindCounts are the queue's jobs counted by kind and state.
type KindCounts struct {
	Kinds []KindCount // by kind
	// Counted is how many jobs the walks read; Jobs how many the queue
	// holds. They differ for a queue of more than KindsBudget jobs a
	// shard: the counts are then those of the Counted jobs only.
	Counted, Jobs int64
}

// KindCounts counts the queue's jobs by kind and state: pending, running
// (held by a live lease for a due time that has come) and dead. It
// walks each shard's jobs up to KindsBudget of them, in one round trip a
// shard, so its cost is bounded whatever the queue's size, and past that
// many it counts a part: the first jobs of the hash's order, which does
// not follow kinds or due times. It costs one round trip a shard,
// O(KindsBudget·log n) each.
func (q *Queue) KindCounts(ctx context.Context) (KindCounts, error) {
	if err := q.checkOp(ctx, "KindCounts", ""); err != nil {
		return KindCounts{}, err
	}
	by := map[string]*KindCount{}
	var out KindCounts
	for i, k := range q.shards {
		var v store.KindsCounted
		err := q.doOn(ctx, q.brs[i], "kinds", func(ctx context.Context) (err error) {
			v, err = q.st.Kinds(ctx, k, "0", KindsBudget)
			return err
		})
		if err != nil {
			return KindCounts{}, fmt.Errorf("durable: KindCounts: %w", err)
		}
		out.Jobs += v.Jobs
		for _, c := range v.Kinds {
			s := by[c.Kind]
			if s == nil {
				s = &KindCount{Kind: c.Kind}
				by[c.Kind] = s
			}
			s.Pending += c.Pending
			s.Running += c.Running
			s.Dead += c.Dead
			out.Counted += c.Pending + c.Running + c.Dead
		}
	}
	for _, s := range by {
		out.Kinds = append(out.Kinds, *s)
	}
	slices.SortFunc(out.Kinds, func(a, b KindCount) int {
		switch {
		case a.Kind < b.Kind:
			return -1
		case a.Kind > b.Kind:
			return 1
		}
		return 0
	})
	return out, nil
}

// listKindCalls bounds the List calls of one ListKind.
const listKindCalls = 4

// ListKind is List of the jobs of kind only: it reads pages of List
// until it has limit jobs of kind, the list ends, or it made 4 calls,
// and returns them (up to 2·limit-1: a page is never cut) and the
// cursor to go on from ("" at the end). So a page may be short, or
// empty, while the cursor is not "". It costs at most 4 List calls.
func (q *Queue) ListKind(ctx context.Context, state State, kind, cursor string, limit int) ([]Info, string, error) {
	if err := q.checkOp(ctx, "ListKind", kind); err != nil {
		return nil, "", err
	}
	var out []Info
	for range listKindCalls {
		jobs, next, err := q.List(ctx, state, cursor, limit)
		if err != nil {
			return nil, "", err
		}
		for _, j := range jobs {
			if j.Kind == kind {
				out = append(out, j)
			}
		}
		cursor = next
		if cursor == "" || len(out) >= limit {
			break
		}
	}
	return out, cursor, nil
}
