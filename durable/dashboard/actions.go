package dashboard

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"

	"github.com/timewheel/timewheel/durable"
)

// This file holds the POST side: the actions, their confirmation page,
// and the redirect to a page that says what an action did.

// An action is what a POST's action field names. Its run returns the
// sentence the next page shows, and whether it did anything; an action
// on nothing (a job gone, or not dead) says so.
type action struct {
	id bool // it needs a job's ID
	// sched: it needs a schedule's name (sched64, encodeID), which it gets
	// as its id (schedules.go).
	sched bool
	// confirm, if set, returns the question of the confirmation page
	// shown unless the form holds confirm=yes.
	confirm func(ctx context.Context, q *durable.Queue, id, kind string) (string, error)
	run     func(ctx context.Context, q *durable.Queue, id, kind string) (text string, did bool, err error)
}

// actions are the POSTs by their action field. An action of another file
// adds itself in an init.
var actions = map[string]action{
	"retry":      {id: true, run: oneDead("Retried", "retried", ": due now", (*durable.Queue).RetryDead)},
	"delete":     {id: true, run: oneDead("Deleted", "deleted", "", (*durable.Queue).DeleteDead)},
	"retry-all":  {confirm: askAll("Retry", ", due now"), run: allDead("Retried", "retried", ": due now", (*durable.Queue).RetryAllDead)},
	"delete-all": {confirm: askAll("Delete", ", for good"), run: allDead("Deleted", "deleted", "", (*durable.Queue).DeleteAllDead)},
	"cancel":     {id: true, confirm: askCancel, run: cancelJob},
	"pause":      {run: pauseKind(true)},
	"resume":     {run: pauseKind(false)},
}

// confirm is the confirmation page of an action: its question, and the
// fields its form posts again with confirm=yes.
type confirm struct {
	Question string
	Fields   url.Values
	Back     string // the link of the page the action was asked from
}

// maxForm bounds a POST's body: a form of a few fields.
const maxForm = 16 << 10

// post runs an action, then sends the browser back to the page it came
// from with a signed message of what it did (303, so that a reload does
// not post again). A form that is wrong, or an action that fails, gets
// the page with the error.
func (h *handler) post(w http.ResponseWriter, r *http.Request) {
	v := h.newView("")
	if !h.opts.Actions {
		v.Err = "dashboard: actions are off (Options.Actions)"
		h.render(w, r, http.StatusForbidden, v)
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxForm)
	if err := r.ParseForm(); err != nil {
		v.Err = "dashboard: bad form: " + err.Error()
		h.render(w, r, http.StatusBadRequest, v)
		return
	}
	f := r.PostForm
	name, kind := f.Get("q"), f.Get("kind")
	q := h.byName[name]
	if q == nil {
		v.Err = fmt.Sprintf("dashboard: no queue %q here", name)
		h.render(w, r, http.StatusNotFound, v)
		return
	}
	v = h.newView(name)
	a, ok := actions[f.Get("action")]
	if !ok {
		v.Err = fmt.Sprintf("dashboard: no action %q", f.Get("action"))
		h.render(w, r, http.StatusBadRequest, v)
		return
	}
	id := ""
	if a.id {
		var err error
		if id, err = queryID(f); err != nil {
			v.Err = fmt.Sprintf("%v: %s needs the ID of a job (at most %d bytes)", err, f.Get("action"), durable.MaxIDLen)
			h.render(w, r, http.StatusBadRequest, v)
			return
		}
	}
	if a.sched {
		var err error
		if id, err = querySched(f); err != nil {
			v.Err = err.Error()
			h.render(w, r, http.StatusBadRequest, v)
			return
		}
	}
	back := backTo(name, f.Get("back"), id)
	ctx, cancel := context.WithTimeout(r.Context(), h.opts.Timeout)
	defer cancel()
	if a.confirm != nil && f.Get("confirm") != "yes" {
		question, err := a.confirm(ctx, q, id, kind)
		if err != nil {
			v.Err = err.Error()
			h.render(w, r, errStatus(err), v)
			return
		}
		fields := url.Values{"q": {name}, "action": {f.Get("action")}, "back": {f.Get("back")}, "kind": {kind}, "confirm": {"yes"}}
		if a.id {
			fields.Set("id64", encodeID(id))
		}
		if a.sched {
			fields.Set("sched64", encodeID(id))
		}
		v.Confirm = &confirm{Question: question, Fields: fields, Back: "?" + back.Encode()}
		h.render(w, r, http.StatusOK, v)
		return
	}
	text, did, err := a.run(ctx, q, id, kind)
	if err != nil {
		v.Err = err.Error()
		h.render(w, r, errStatus(err), v)
		return
	}
	if did && (f.Get("action") == "cancel" || f.Get("action") == "delete") {
		back.Del("id64") // the job is gone: back to its queue
	}
	h.sign(back, did, text)
	// Relative to the page that posted: the dashboard's own path, wherever
	// it is mounted. http.Redirect would resolve it against the path's
	// directory.
	w.Header().Set("Location", "?"+back.Encode())
	w.WriteHeader(http.StatusSeeOther)
}

// backTo returns the query of the page an action was asked from: the
// queue's, its list of a state, the job's, or a page of another file
// (a route with a tab).
func backTo(name, back, id string) url.Values {
	v := url.Values{"q": {name}}
	switch {
	case back == "pending" || back == "running" || back == "dead":
		v.Set("state", back)
	case back == "job" && id != "":
		v.Set("id64", encodeID(id))
	case routes[back].tab != "":
		v.Set("view", back) // a page of another file
	}
	return v
}

// jobName is an ID in a sentence: quoted, at most 80 runes.
func jobName(id string) string { return short(80, strconv.Quote(id)) }

func kindName(kind string) string {
	if kind == "" {
		return "every kind"
	}
	return "kind " + short(80, strconv.Quote(kind))
}

func oneDead(did, verb, after string, f func(*durable.Queue, context.Context, ...string) (int, error)) func(context.Context, *durable.Queue, string, string) (string, bool, error) {
	return func(ctx context.Context, q *durable.Queue, id, _ string) (string, bool, error) {
		n, err := f(q, ctx, id)
		if err != nil || n == 0 {
			return "No dead job " + jobName(id) + ": nothing " + verb + ".", false, err
		}
		return did + " job " + jobName(id) + after + ".", true, nil
	}
}

func allDead(did, verb, after string, f func(*durable.Queue, context.Context, string) (int, error)) func(context.Context, *durable.Queue, string, string) (string, bool, error) {
	return func(ctx context.Context, q *durable.Queue, _, kind string) (string, bool, error) {
		n, err := f(q, ctx, kind)
		switch {
		case err != nil && n > 0:
			return "", false, fmt.Errorf("%s %d dead jobs of %s, then: %w", verb, n, kindName(kind), err)
		case err != nil:
			return "", false, err
		case n == 0:
			return "No dead job of " + kindName(kind) + ": nothing " + verb + ".", false, nil
		case n == 1:
			return did + " 1 dead job of " + kindName(kind) + after + ".", true, nil
		}
		return did + " " + strconv.Itoa(n) + " dead jobs of " + kindName(kind) + after + ".", true, nil
	}
}

func askAll(verb, after string) func(context.Context, *durable.Queue, string, string) (string, error) {
	return func(ctx context.Context, q *durable.Queue, _, kind string) (string, error) {
		c, err := q.Counts(ctx)
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("%s every dead job of %s%s? The queue holds %d dead jobs of every kind.", verb, kindName(kind), after, c.Dead), nil
	}
}

// askCancel asks to cancel a job, saying what its state means.
func askCancel(ctx context.Context, q *durable.Queue, id, _ string) (string, error) {
	in, ok, err := q.Lookup(ctx, id)
	switch {
	case err != nil:
		return "", err
	case !ok:
		return "Cancel job " + jobName(id) + "? It is not in the queue now: nothing would be done.", nil
	case in.State == durable.Running:
		return "Cancel job " + jobName(id) + "? It is running: its handler's context is cancelled, and the job is deleted for good.", nil
	}
	return "Cancel job " + jobName(id) + "? It is " + in.State.String() + ": it is deleted for good, and never runs.", nil
}

func cancelJob(ctx context.Context, q *durable.Queue, id, _ string) (string, bool, error) {
	ok, err := q.Cancel(ctx, id)
	if err != nil || !ok {
		return "No job " + jobName(id) + ": nothing cancelled.", false, err
	}
	return "Cancelled job " + jobName(id) + ".", true, nil
}

func pauseKind(pause bool) func(context.Context, *durable.Queue, string, string) (string, bool, error) {
	return func(ctx context.Context, q *durable.Queue, _, kind string) (string, bool, error) {
		what := "the whole queue"
		if kind != "" {
			what = "kind " + short(80, strconv.Quote(kind))
		}
		if pause {
			return "Paused " + what + ".", true, q.Pause(ctx, kind)
		}
		return "Resumed " + what + ".", true, q.Resume(ctx, kind)
	}
}
