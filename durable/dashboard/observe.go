package dashboard

import (
	"context"
	"embed"
	"html/template"
	"net/http"
	"net/url"
	"time"

	"github.com/timewheel/timewheel/durable"
)

// This file routes the pages of what the workers did beside the jobs:
// ?view=workers (workers.go), ?view=history (history.go), ?view=kinds
// and the lists of one kind, ?state=...&kind=... (kinds.go). Each costs
// a bounded number of round trips whatever the queue's size: one for the
// workers (and one a shard holding jobs of a gone worker), one for a
// history, one a shard for the kinds, at most four for a list of a kind.

//go:embed observe.html
var observeFiles embed.FS

var _ = template.Must(page.Funcs(template.FuncMap{
	"ago":         ago,
	"workerState": workerState,
	"stamp":       stamp,
	"late":        lateText,
	"ranFor":      func(a durable.AttemptInfo) string { return dur(a.Ended.Sub(a.Started)) },
}).ParseFS(observeFiles, "observe.html"))

// extra is what the observe templates render: one of its parts is set.
type extra struct {
	View     string // "workers", "history", "kinds"; "" for a list of Kind
	Views    []string
	Kind     string // the kind a list or history is of
	Workers  []durable.WorkerInfo
	Now      time.Time // Redis's clock, for the workers
	History  *historyView
	Kinds    *durable.KindCounts
	Attempts []durable.AttemptInfo
	AttErr   string
}

// observe serves the pages of this file's doc for queue q, and reports
// whether it did.
func (h *handler) observe(ctx context.Context, w http.ResponseWriter, r *http.Request, q *durable.Queue, v *view) bool {
	qv := r.URL.Query()
	view, kind := qv.Get("view"), qv.Get("kind")
	if view == "" && (kind == "" || qv.Get("state") == "" || qv.Get("id") != "") {
		return false
	}
	v.X = &extra{View: view, Kind: kind, Views: []string{"workers", "history", "kinds"}}
	var err error
	status := http.StatusOK
	switch view {
	case "workers":
		v.X.Workers, v.X.Now, err = q.Workers(ctx, durable.MaxWorkers)
	case "history":
		v.X.History, err = h.history(ctx, q, kind, qv.Get("span"))
	case "kinds":
		var kc durable.KindCounts
		kc, err = q.KindCounts(ctx)
		v.X.Kinds = &kc
	case "":
		err = h.kindList(ctx, q, kind, qv, v)
	default:
		v.Err, status = "no view "+url.QueryEscape(view)+" (workers, history, kinds)", http.StatusNotFound
	}
	if err != nil {
		v.Err, status = err.Error(), http.StatusBadGateway
	}
	h.render(w, r, status, v)
	return true
}

// attempts adds the past attempts of the job shown to v.
func (h *handler) attempts(ctx context.Context, q *durable.Queue, v *view) {
	as, err := q.Attempts(ctx, v.Job.ID, *v.Job)
	v.X = &extra{Attempts: as}
	if err != nil {
		v.X.AttErr = err.Error()
	}
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
