package durable

import (
	"context"
	"fmt"
	"time"

	"github.com/timewheel/timewheel/durable/internal/store"
)

// An AttemptInfo is one of a job's past attempts that failed, as the
// store keeps it (the last 10 a job), or one it has no record of.
type AttemptInfo struct {
	Attempt int
	Worker  string
	Started time.Time // on Redis's clock, as the worker mapped it
	Ended   time.Time // on Redis's clock
	Err     string    // its first 300 bytes
	// Died is set on the attempt that was the job's last: Ended is when
	// the job died.
	Died bool
	// Lost is set for an attempt with no record between two that have
	// one, or before the job's current one: it ended without a failure
	// (its worker died, hung or lost the lease), and the lease ran out.
	Lost bool
}

// Attempts returns the failed attempts of the job id that the store
// keeps, oldest first, with those it lost in between (Lost), up to the
// attempts info says it made (info from Lookup; its zero value to skip
// that). A succeeded attempt deletes its job, so it has none. It costs
// one round trip, O(10).
func (q *Queue) Attempts(ctx context.Context, id string, info Info) ([]AttemptInfo, error) {
	if err := q.check(ctx, "Attempts", id); err != nil {
		return nil, err
	}
	k, br := q.shardOf(id)
	var ts []store.Try
	err := q.doOn(ctx, br, "tries", func(ctx context.Context) (err error) {
		ts, err = q.st.Tries(ctx, k, id)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("durable: Attempts %q: %w", id, err)
	}
	var out []AttemptInfo
	next := 0
	if len(ts) > 0 {
		next = ts[0].Attempt
	}
	for _, t := range ts {
		for ; next > 0 && next < t.Attempt; next++ {
			out = append(out, AttemptInfo{Attempt: next, Lost: true})
		}
		out = append(out, AttemptInfo{Attempt: t.Attempt, Worker: t.Worker, Started: time.UnixMicro(t.Started),
			Ended: time.UnixMicro(t.Ended), Err: t.Err, Died: t.Died})
		next = t.Attempt + 1
	}
	// The attempts made since the last record: those before the current
	// one (a running job's, or the last of a pending or dead one) ended
	// without a record.
	last := info.Attempt
	if info.State == Running || info.Worker != "" {
		last--
	}
	for ; next > 0 && next <= last; next++ {
		out = append(out, AttemptInfo{Attempt: next, Lost: true})
	}
	return out, nil
}
