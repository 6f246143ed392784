package dashboard

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/timewheel/timewheel/durable"
)

// The kinds page (?view=kinds) counts the queue's jobs by kind and state
// (durable.Queue.KindCounts), each count a link to the list of that
// kind's jobs in that state: the jobs route with &kind= (routes.go). It
// costs one round trip a shard; a list of a kind, at most four List
// calls.

func init() {
	routes["kinds"] = route{tab: "jobs by kind", get: (*handler).kinds}
}

// kinds is the page of the queue's jobs by kind.
func (h *handler) kinds(r *request, v *view) int {
	kc, err := r.q.KindCounts(r.ctx)
	if err != nil {
		v.Err = err.Error()
		return errStatus(err)
	}
	v.Section, v.Data = "kinds", &kc
	return http.StatusOK
}

// checkKind refuses a kind of a query that no job can have: over
// durable.MaxKindLen bytes, or holding a NUL.
func checkKind(kind string) error {
	if len(kind) > durable.MaxKindLen || strings.IndexByte(kind, 0) >= 0 {
		return fmt.Errorf("dashboard: kind %.40q is over %d bytes or holds a NUL", kind, durable.MaxKindLen)
	}
	return nil
}
