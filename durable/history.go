package durable

import (
	"context"
	"fmt"
	"time"

	"github.com/timewheel/timewheel/durable/internal/store"
)

// A Point is the queue's (or a kind's) figures over one minute or hour:
// the attempts started, and those that ended, by how; and how late the
// started ones were, from due time to start. Every worker (a Queue with
// handlers) adds its figures once a second.
type Point struct {
	At        time.Time // the minute's (hour's) start, on Redis's clock
	Started   int64
	Succeeded int64
	Failed    int64 // Retried + Died
	Retried   int64
	Died      int64
	// Lateness counts the started attempts by lateness, as
	// Stats.Lateness does (buckets of LatenessBounds).
	Lateness [len(latenessBounds) + 1]int64
	LateMax  time.Duration
}

// Quantile returns the upper bound of the Lateness bucket that holds the
// q quantile of the point's starts, as Stats.Quantile does. It costs
// O(len(LatenessBounds())).
func (p Point) Quantile(q float64) time.Duration {
	var s Stats
	for i, n := range p.Lateness {
		s.Lateness[i] = uint64(n)
	}
	return s.Quantile(q)
}

// History returns the figures of kind ("" for the whole queue) by minute
// over the last day (1,440 points), or with hourly by hour over the
// last 30 days (720), oldest first, each minute (hour) with a point,
// zero where nothing ran. It costs one round trip, O(points).
//
// Redis holds a kind's history in two hashes of at most 1,440 and 720
// fields (docs/durable.md says what they cost); they expire a day and
// 30 days after their last write.
func (q *Queue) History(ctx context.Context, kind string, hourly bool) ([]Point, error) {
	if err := q.checkOp(ctx, "History", kind); err != nil {
		return nil, err
	}
	var bs []store.Bucket
	var now int64
	err := q.doOn(ctx, &q.br, "history", func(ctx context.Context) (err error) {
		bs, now, err = q.st.History(ctx, q.k, hourly, kind, kind == "")
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("durable: History: %w", err)
	}
	span, n := time.Minute, int64(store.Minutes)
	if hourly {
		span, n = time.Hour, store.Hours
	}
	cur := now / span.Microseconds()
	out := make([]Point, n)
	for i := range out {
		out[i].At = time.UnixMicro((cur - n + 1 + int64(i)) * span.Microseconds())
	}
	for _, b := range bs {
		i := b.Index - (cur - n + 1)
		if i < 0 || i >= n {
			continue
		}
		p := &out[i]
		p.Started, p.Succeeded, p.Failed = b.Figs[store.Started], b.Figs[store.Succeeded], b.Figs[store.FailedN]
		p.Retried, p.Died = b.Figs[store.Retried], b.Figs[store.Died]
		p.LateMax = time.Duration(b.Figs[store.LateMax]) * time.Microsecond
		copy(p.Lateness[:], b.Figs[store.Figures:])
	}
	return out, nil
}

// Sum returns the points added up into one: the counts summed, the
// lateness's buckets merged, the max the greatest; At the first's. It
// costs O(len(points)).
func Sum(points []Point) Point {
	var s Point
	for i, p := range points {
		if i == 0 {
			s.At = p.At
		}
		s.Started += p.Started
		s.Succeeded += p.Succeeded
		s.Failed += p.Failed
		s.Retried += p.Retried
		s.Died += p.Died
		s.LateMax = max(s.LateMax, p.LateMax)
		for j, n := range p.Lateness {
			s.Lateness[j] += n
		}
	}
	return s
}

// HistoryKinds returns the kinds with a history in the last 30 days,
// those that ran last first, at most limit. It costs one round trip,
// O(log kinds + limit).
func (q *Queue) HistoryKinds(ctx context.Context, limit int) ([]string, error) {
	if err := q.checkOp(ctx, "HistoryKinds", ""); err != nil {
		return nil, err
	}
	var ks []string
	err := q.doOn(ctx, &q.br, "historyKinds", func(ctx context.Context) (err error) {
		ks, err = q.st.HistoryKinds(ctx, q.k, limit)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("durable: HistoryKinds: %w", err)
	}
	return ks, nil
}
