package dashboard

import (
	"net/http"
	"time"

	"github.com/timewheel/timewheel/durable"
)

// The workers page (?view=workers) lists the registry's workers, newest
// heartbeat first, each live, closed or gone, with the attempts it ran
// at its last heartbeat; for a gone one, when each job it held runs
// again. workers.html's "workers" draws them. It costs one round trip,
// and one a shard holding jobs of a gone worker.

func init() {
	routes["workers"] = route{tab: "workers", get: (*handler).workers}
}

// workersView is what the workers page shows.
type workersView struct {
	Workers []durable.WorkerInfo
	Now     time.Time // Redis's clock
}

// workers is the page of the queue's workers.
func (h *handler) workers(r *request, v *view) int {
	ws, now, err := r.q.Workers(r.ctx, durable.MaxWorkers)
	if err != nil {
		v.Err = err.Error()
		return errStatus(err)
	}
	v.Section, v.Data = "workers", &workersView{Workers: ws, Now: now}
	return http.StatusOK
}

// workerState names a worker's state for the page.
func workerState(w durable.WorkerInfo) string {
	switch {
	case w.Gone:
		return "gone"
	case w.Closed:
		return "closed"
	}
	return "live"
}

// ago writes how long before now t was.
func ago(now, t time.Time) string {
	if t.IsZero() {
		return "–"
	}
	return dur(now.Sub(t)) + " ago"
}

// stamp writes a time in UTC with ms.
func stamp(t time.Time) string {
	if t.IsZero() {
		return "–"
	}
	return t.UTC().Format("2006-01-02 15:04:05.000")
}
