package dashboard

import "github.com/timewheel/timewheel/durable"

// The workers page (?view=workers) lists the registry's workers, newest
// heartbeat first, each live, closed or gone, with the attempts it ran
// at its last heartbeat; for a gone one, when each job it held runs
// again. observe.go reads them; observe.html's "workers" draws them.

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
