package durable

import (
	"context"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/timewheel/timewheel"
)

// This file holds the checks every call of the Queue's API makes before
// it reaches Redis, and the conversions of its arguments.

// checkWheel panics, naming New, if w is a zero Wheel: its methods would
// panic on the worker's goroutines, where the caller could not recover.
func checkWheel(w *timewheel.Wheel) {
	defer func() {
		if recover() != nil {
			panic("durable: New: WithWheel of a zero timewheel.Wheel; make one with timewheel.New")
		}
	}()
	w.Err()
}

// usable panics on a Queue not made by New, and refuses op, on subject
// (an ID or a kind), with a nil ctx or once the Queue is closed.
func (q *Queue) usable(ctx context.Context, op, subject string) error {
	if q == nil || q.rdb == nil {
		panic(fmt.Sprintf("durable: %s on a Queue not made by New", op))
	}
	q.mu.Lock()
	closed := q.closed
	q.mu.Unlock()
	switch {
	case ctx == nil:
		return fmt.Errorf("durable: %s %q: nil context", op, subject)
	case closed:
		return fmt.Errorf("durable: %s %q: %w", op, subject, ErrClosed)
	}
	return nil
}

// check refuses an operation on a zero or closed Queue, with a nil ctx,
// or with a bad ID.
func (q *Queue) check(ctx context.Context, op, id string) error {
	if err := q.usable(ctx, op, id); err != nil {
		return err
	}
	return checkID(op, id)
}

// checkID refuses an empty or too long ID.
func checkID(op, id string) error {
	switch {
	case id == "":
		return fmt.Errorf("durable: %s: empty ID", op)
	case len(id) > MaxIDLen:
		return fmt.Errorf("durable: %s: ID %.40q... of %d bytes, over MaxIDLen (%d)", op, id, len(id), MaxIDLen)
	}
	return nil
}

// checkOp refuses an operation on the queue or on a kind ("" for none)
// as check does, and a bad kind.
func (q *Queue) checkOp(ctx context.Context, op, kind string) error {
	if err := q.usable(ctx, op, kind); err != nil || kind == "" {
		return err
	}
	return q.checkKind(op, kind, kind)
}

// checkKind refuses a kind too long, with a NUL, or not named.
func (q *Queue) checkKind(op, id, kind string) error {
	switch {
	case len(kind) > MaxKindLen || strings.IndexByte(kind, 0) >= 0:
		return fmt.Errorf("durable: %s %q: kind %.40q is over %d bytes or holds a NUL", op, id, kind, MaxKindLen)
	case q.kinds != nil && !q.kinds[kind]:
		return fmt.Errorf("durable: %s %q: unknown kind %q (no handler or WithKinds names it)", op, id, kind)
	}
	return nil
}

// checkWheel refuses a change to the jobs once the worker's wheel is
// closed: the worker would never start one.
func (q *Queue) checkWheel(op, id string) error {
	if q.wheel != nil && q.wheel.Err() != nil {
		return fmt.Errorf("durable: %s %q: the worker's wheel (WithWheel) is closed, so this replica would start no job: %w", op, id, timewheel.ErrClosed)
	}
	return nil
}

// ceilMicro returns t in µs since the Unix epoch, rounded up: a job is
// never due before the time it was given.
func ceilMicro(t time.Time) int64 {
	s, ns := t.Unix(), int64(t.Nanosecond())
	if s < math.MinInt64/1_000_000+1 {
		return math.MinInt64 / 1000
	}
	return s*1_000_000 + ceilDiv(ns, 1000)
}

func ceilDiv(a, b int64) int64 {
	if a <= 0 {
		return a / b
	}
	return (a + b - 1) / b
}

// split returns a blob's kind and payload.
func split(blob string) (string, []byte) {
	kind, payload, _ := strings.Cut(blob, "\x00")
	return kind, []byte(payload)
}

// wheelOrNew returns the configured wheel, or a new one the worker owns.
func wheelOrNew(cfg *config) (*timewheel.Wheel, bool) {
	if cfg.wheel != nil {
		return cfg.wheel, false
	}
	return timewheel.New(), true
}
