package dashboard

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"time"

	"github.com/timewheel/timewheel/durable"
	"github.com/timewheel/timewheel/durable/internal/listcursor"
)

// This file holds the GET side: the view the template renders, and the
// pages by route.

// A route is one page of a queue, chosen by ?view=. Its get fills v (and
// v.Section, the template that shows what it adds) and returns the
// status. A route of its own file adds itself to routes in an init, with
// its section in a *.html file of its own.
type route struct {
	tab string // the link's text in the queue's tabs; "" for none
	get func(h *handler, r *request, v *view) int
}

// routes are the pages of a queue by ?view=. Without it, a query with an
// ID is "job", one with a state "jobs", else "queue": the figures. The
// workers, history and kinds pages add themselves (workers.go,
// history.go, kinds.go).
var routes = map[string]route{
	"queue": {get: (*handler).queue},
	"jobs":  {get: (*handler).jobs},
	"job":   {get: (*handler).job},
}

// tabs are the routes with a tab, in the order they show.
func tabs() []string {
	var out []string
	for name, r := range routes {
		if r.tab != "" {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// A request is a GET of one queue's page.
type request struct {
	ctx   context.Context
	query url.Values
	q     *durable.Queue
}

// view is what the template renders.
type view struct {
	Opts   Options
	Queues []string // every queue's name, for the tabs
	Queue  string   // the queue shown, "" for the overview of all
	View   string   // the route shown: "queue", "jobs", "workers", ...
	Tabs   []tab    // the queue's pages of other files
	Cards  []card   // the overview: one per queue shown
	Done   string   // what the last action did
	None   string   // what the last action found nothing to do on
	Err    string   // what went wrong

	// A list of jobs.
	State  string
	Kind   string // the kind the list is of, "" for every kind (kinds.go)
	States []string
	Jobs   []durable.Info
	Next   string // the next page's link, "" if none
	First  bool   // the first page

	// One job.
	Job     *durable.Info
	Missing string // the ID of a job not found

	Confirm *confirm // an action to confirm (actions.go)

	Section string // the template of a route of another file
	Data    any    // what that route shows
}

type tab struct{ View, Text string }

type card struct {
	Name   string
	Counts durable.Counts
	Paused []string
	All    bool // the whole queue paused
	Stats  durable.Stats
	P50    time.Duration
	P99    time.Duration
}

// newView returns the view of queue name ("" for the overview).
func (h *handler) newView(name string) *view {
	v := &view{Opts: h.opts, Queue: name, States: []string{"pending", "running", "dead"}}
	for _, q := range h.queues {
		v.Queues = append(v.Queues, q.Name())
	}
	if name != "" {
		for _, t := range tabs() {
			v.Tabs = append(v.Tabs, tab{t, routes[t].tab})
		}
	}
	return v
}

func (h *handler) get(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), h.opts.Timeout)
	defer cancel()
	qv := r.URL.Query()
	name := qv.Get("q")
	v := h.newView(name)
	v.Done, v.None = h.flash(qv)
	if name == "" {
		h.render(w, r, h.cards(ctx, v, h.queues), v)
		return
	}
	q := h.byName[name]
	if q == nil {
		v.Queue, v.Tabs = "", nil
		v.Err = fmt.Sprintf("no queue %q here", name)
		h.render(w, r, http.StatusNotFound, v)
		return
	}
	which := qv.Get("view")
	switch {
	case which != "":
	case qv.Has("id") || qv.Has("id64"):
		which = "job"
	case qv.Has("state"):
		which = "jobs"
	default:
		which = "queue"
	}
	rt, ok := routes[which]
	if !ok {
		v.Err = fmt.Sprintf("no view %q", which)
		h.render(w, r, http.StatusNotFound, v)
		return
	}
	v.View = which
	h.render(w, r, rt.get(h, &request{ctx, qv, q}, v), v)
}

// cards fills the overview's cards of queues, and returns the status.
func (h *handler) cards(ctx context.Context, v *view, queues []*durable.Queue) int {
	for _, q := range queues {
		c := card{Name: q.Name(), Stats: q.Stats()}
		var err error
		if c.Counts, err = q.Counts(ctx); err == nil {
			c.Paused, err = q.Paused(ctx)
		}
		if err != nil {
			v.Err = err.Error()
			return errStatus(err)
		}
		if i := slices.Index(c.Paused, ""); i >= 0 {
			c.All, c.Paused = true, slices.Delete(c.Paused, i, i+1)
		}
		c.P50, c.P99 = c.Stats.Quantile(0.5), c.Stats.Quantile(0.99)
		v.Cards = append(v.Cards, c)
	}
	return http.StatusOK
}

// queue is the page of one queue's figures.
func (h *handler) queue(r *request, v *view) int {
	return h.cards(r.ctx, v, []*durable.Queue{r.q})
}

// jobs is the page of a queue's jobs in a state, a page at a time, under
// its figures. With &kind=, it is the page of that kind's jobs only
// (durable.Queue.ListKind), without the figures: at most four List calls.
func (h *handler) jobs(r *request, v *view) int {
	state := r.query.Get("state")
	st, err := durable.ParseState(state)
	if err != nil {
		v.Err = err.Error()
		return http.StatusBadRequest
	}
	cursor := r.query.Get("cursor")
	raw, err := listcursor.Decode(cursor)
	if err != nil {
		v.Err = err.Error()
		return http.StatusBadRequest
	}
	kind := r.query.Get("kind")
	if err := checkKind(kind); err != nil {
		v.Err = err.Error()
		return http.StatusBadRequest
	}
	if kind == "" {
		if status := h.cards(r.ctx, v, []*durable.Queue{r.q}); status != http.StatusOK {
			return status
		}
	}
	v.State, v.Kind, v.First = state, kind, cursor == ""
	var jobs []durable.Info
	var next string
	if kind == "" {
		jobs, next, err = r.q.List(r.ctx, st, raw, h.opts.PageSize)
	} else {
		jobs, next, err = r.q.ListKind(r.ctx, st, kind, raw, h.opts.PageSize)
	}
	if err != nil {
		v.Err = err.Error()
		return errStatus(err)
	}
	for i := range jobs {
		jobs[i].Err = h.redact(jobs[i].Err, jobs[i].Payload)
	}
	v.Jobs = jobs
	if next != "" {
		link := url.Values{"q": {r.q.Name()}, "state": {state}, "cursor": {listcursor.Encode(next)}}
		if kind != "" {
			link.Set("kind", kind)
		}
		v.Next = "?" + link.Encode()
	}
	return http.StatusOK
}

// job is the page of one job, found by its ID: id as typed, or id64
// (encodeID) from a link or a form.
func (h *handler) job(r *request, v *view) int {
	id, err := queryID(r.query)
	if err != nil {
		v.Err = err.Error()
		return http.StatusBadRequest
	}
	info, ok, err := r.q.Lookup(r.ctx, id)
	switch {
	case err != nil:
		v.Err = err.Error()
		return errStatus(err)
	case !ok:
		v.Missing = id
		return http.StatusNotFound
	}
	h.attempts(r, v, info) // attempts.go
	info.Err = h.redact(info.Err, info.Payload)
	v.Job = &info
	return http.StatusOK
}
