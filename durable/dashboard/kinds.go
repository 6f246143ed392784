package dashboard

import (
	"context"
	"net/url"

	"github.com/timewheel/timewheel/durable"
)

// kindList fills v with a page of the jobs of kind in the state qv
// names, from qv's cursor: at most four List calls (durable.ListKind).
func (h *handler) kindList(ctx context.Context, q *durable.Queue, kind string, qv url.Values, v *view) error {
	state := qv.Get("state")
	st, err := durable.ParseState(state)
	if err != nil {
		return err
	}
	v.State = state
	cursor := qv.Get("cursor")
	v.First = cursor == ""
	jobs, next, err := q.ListKind(ctx, st, kind, cursor, h.opts.PageSize)
	if err != nil {
		return err
	}
	v.Jobs = jobs
	if next != "" {
		v.Next = "?" + url.Values{"q": {q.Name()}, "state": {state}, "kind": {kind}, "cursor": {next}}.Encode()
	}
	return nil
}
