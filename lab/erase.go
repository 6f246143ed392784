package lab

import (
	"fmt"

	"github.com/timewheel/timewheel/queue"
)

// erased is a queue with its handles as any: Structure.New, for code that
// runs every structure through one path. A handle it is given must be one
// it returned.
type erased[H comparable] struct{ q queue.Queue[H] }

func (e erased[H]) Schedule(when int64) any           { return e.q.Schedule(when) }
func (e erased[H]) Cancel(h any) bool                 { return e.q.Cancel(h.(H)) }
func (e erased[H]) Reschedule(h any, when int64) bool { return e.q.Reschedule(h.(H), when) }
func (e erased[H]) Next() (int64, bool)               { return e.q.Next() }
func (e erased[H]) Len() int                          { return e.q.Len() }
func (e erased[H]) Expire(now int64, fire func(any)) int {
	return e.q.Expire(now, func(h H) { fire(h) })
}

// Verify checks the queue's invariants with its own Verify. Every
// structure of the lab has one: one that does not fails every Verify.
func (e erased[H]) Verify() error {
	if v, ok := e.q.(interface{ Verify() error }); ok {
		return v.Verify()
	}
	return fmt.Errorf("lab: %T has no Verify method", e.q)
}
