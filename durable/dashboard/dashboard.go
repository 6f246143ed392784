// Package dashboard serves a web page of durable queues: each queue's
// figures (pending, due, running, dead, how late the oldest due job is,
// paused kinds, this process's attempts and their lateness), its jobs by
// state a page at a time, one job, and the dead jobs with their errors.
// With actions turned on it also retries and deletes dead jobs, cancels
// jobs, and pauses and resumes a queue or a kind.
//
//	http.Handle("/admin/jobs/", requireAdmin(dashboard.New(dashboard.Options{Actions: true}, orders, emails)))
//
// The handler serves one page with query parameters and relative links,
// so it works mounted at any path, with or without http.StripPrefix. It
// is HTML and an inline style sheet from html/template: no script, no
// asset from elsewhere.
//
// # Security
//
// The dashboard is a door into production data, and it opens only as far
// as the program says:
//
//   - It does no authentication and no authorization: the program that
//     mounts it must put it behind its own (a middleware that checks the
//     operator's session, a port reached only from an admin network). It
//     must not be served to the public as it is.
//   - A GET (or HEAD) changes nothing; it only reads.
//   - Its actions are POSTs of forms, and are off unless Options.Actions
//     turns them on: without it the page shows no button, and a POST is
//     refused with 403. Cross-origin POSTs are refused (403) by
//     http.CrossOriginProtection (Sec-Fetch-Site, else Origin against
//     Host), so that another site cannot make an operator's browser post
//     a form to it. Requests with neither header (curl, scripts) pass
//     that check: authentication is what stops them.
//   - Payloads are shown only with Options.Payloads (they hold customers'
//     data, as a rule); without it, only their size. IDs, kinds, payloads
//     and errors are escaped by html/template, so a job cannot put markup
//     or script in the page; the page also sends a Content-Security-Policy
//     that allows no script at all and no framing (against clickjacking),
//     and Cache-Control: no-store.
package dashboard

import (
	"bytes"
	"context"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/timewheel/timewheel/durable"
)

// Options say what the dashboard may do and show. The zero value only
// reads, and shows no payload.
type Options struct {
	// Actions turns on the buttons and their POSTs: retry and delete dead
	// jobs (one, or all of a kind), cancel a job, pause and resume the
	// queue or a kind.
	Actions bool
	// Payloads shows the jobs' payloads (escaped); without it, their size.
	Payloads bool
	// PageSize is how many jobs a list shows at once: 50 if 0, at most
	// durable.MaxList.
	PageSize int
	// Timeout bounds the Redis calls of one request: 5 s if 0.
	Timeout time.Duration
}

// New returns the dashboard of queues. It panics with no queue, a nil
// one, two of one name, or a PageSize outside [0, durable.MaxList].
func New(opts Options, queues ...*durable.Queue) http.Handler {
	if len(queues) == 0 {
		panic("dashboard: New: no queue")
	}
	if opts.PageSize < 0 || opts.PageSize > durable.MaxList {
		panic(fmt.Sprintf("dashboard: New: PageSize %d not in [0, %d]", opts.PageSize, durable.MaxList))
	}
	if opts.PageSize == 0 {
		opts.PageSize = 50
	}
	if opts.Timeout <= 0 {
		opts.Timeout = 5 * time.Second
	}
	h := &handler{opts: opts, byName: map[string]*durable.Queue{}}
	for i, q := range queues {
		if q == nil {
			panic(fmt.Sprintf("dashboard: New: queue %d is nil", i))
		}
		if h.byName[q.Name()] != nil {
			panic(fmt.Sprintf("dashboard: New: two queues named %q", q.Name()))
		}
		h.byName[q.Name()] = q
		h.queues = append(h.queues, q)
	}
	cop := http.NewCrossOriginProtection()
	cop.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		secure(w)
		http.Error(w, "dashboard: cross-origin request refused", http.StatusForbidden)
	}))
	return cop.Handler(h)
}

//go:embed page.html
var files embed.FS

var page = template.Must(template.New("page.html").Funcs(template.FuncMap{
	"dur":     dur,
	"when":    when,
	"payload": payloadText,
	"short":   short,
}).ParseFS(files, "page.html"))

type handler struct {
	opts   Options
	queues []*durable.Queue
	byName map[string]*durable.Queue
}

// secure sets the headers of every response.
func secure(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; img-src data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-store")
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	secure(w)
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		h.get(w, r)
	case http.MethodPost:
		h.post(w, r)
	default:
		w.Header().Set("Allow", "GET, HEAD, POST")
		http.Error(w, "dashboard: method not allowed", http.StatusMethodNotAllowed)
	}
}

// view is what the template renders.
type view struct {
	Opts   Options
	Queues []string // every queue's name, for the tabs
	Queue  string   // the queue shown, "" for the overview of all
	Cards  []card   // the overview: one per queue shown
	Done   string   // what the last action did
	Err    string   // what went wrong

	// A list of jobs.
	State  string
	States []string
	Jobs   []durable.Info
	Next   string // the next page's link, "" if none
	First  bool   // the first page

	// One job.
	Job     *durable.Info
	Missing string // the ID of a job not found

	X *extra // the workers, history and kinds pages; a job's attempts (observe.go)
}

type card struct {
	Name   string
	Counts durable.Counts
	Paused []string
	All    bool // the whole queue paused
	Stats  durable.Stats
	P50    time.Duration
	P99    time.Duration
}

func (h *handler) get(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), h.opts.Timeout)
	defer cancel()
	qv := r.URL.Query()
	v := &view{Opts: h.opts, States: []string{"pending", "running", "dead"}}
	for _, q := range h.queues {
		v.Queues = append(v.Queues, q.Name())
	}
	v.Done = doneText(qv)
	status := http.StatusOK
	shown := h.queues
	if name := qv.Get("q"); name != "" {
		q := h.byName[name]
		if q == nil {
			v.Err = fmt.Sprintf("no queue %q here", name)
			h.render(w, r, http.StatusNotFound, v)
			return
		}
		v.Queue, shown = name, []*durable.Queue{q}
		if h.observe(ctx, w, r, q, v) {
			return
		}
		switch id, state := qv.Get("id"), qv.Get("state"); {
		case len(id) > durable.MaxIDLen:
			v.Err = fmt.Sprintf("an ID of %d bytes, over durable.MaxIDLen (%d)", len(id), durable.MaxIDLen)
			h.render(w, r, http.StatusBadRequest, v)
			return
		case id != "":
			info, ok, err := q.Lookup(ctx, id)
			switch {
			case err != nil:
				v.Err, status = err.Error(), http.StatusBadGateway
			case !ok:
				v.Missing, status = id, http.StatusNotFound
			default:
				v.Job = &info
				h.attempts(ctx, q, v)
			}
			h.render(w, r, status, v)
			return
		case state != "":
			st, err := durable.ParseState(state)
			if err != nil {
				v.Err = err.Error()
				h.render(w, r, http.StatusBadRequest, v)
				return
			}
			v.State = state
			cursor := qv.Get("cursor")
			v.First = cursor == ""
			jobs, next, err := q.List(ctx, st, cursor, h.opts.PageSize)
			if err != nil {
				v.Err = err.Error()
				h.render(w, r, http.StatusBadRequest, v)
				return
			}
			v.Jobs = jobs
			if next != "" {
				v.Next = "?" + url.Values{"q": {name}, "state": {state}, "cursor": {next}}.Encode()
			}
		}
	}
	for _, q := range shown {
		c := card{Name: q.Name(), Stats: q.Stats()}
		var err error
		if c.Counts, err = q.Counts(ctx); err == nil {
			c.Paused, err = q.Paused(ctx)
		}
		if err != nil {
			v.Err, status = err.Error(), http.StatusBadGateway
			break
		}
		if i := slices.Index(c.Paused, ""); i >= 0 {
			c.All, c.Paused = true, slices.Delete(c.Paused, i, i+1)
		}
		c.P50, c.P99 = c.Stats.Quantile(0.5), c.Stats.Quantile(0.99)
		v.Cards = append(v.Cards, c)
	}
	h.render(w, r, status, v)
}

func (h *handler) render(w http.ResponseWriter, r *http.Request, status int, v *view) {
	var b bytes.Buffer
	if err := page.Execute(&b, v); err != nil {
		http.Error(w, "dashboard: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Length", strconv.Itoa(b.Len()))
	w.WriteHeader(status)
	if r.Method != http.MethodHead {
		w.Write(b.Bytes())
	}
}

// maxForm bounds a POST's body: a form of a few fields.
const maxForm = 16 << 10

// post runs an action, then sends the browser back to a page that shows
// what it did (303, so that a reload does not post again).
func (h *handler) post(w http.ResponseWriter, r *http.Request) {
	if !h.opts.Actions {
		http.Error(w, "dashboard: actions are off (Options.Actions)", http.StatusForbidden)
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxForm)
	if err := r.ParseForm(); err != nil {
		http.Error(w, "dashboard: bad form: "+err.Error(), http.StatusBadRequest)
		return
	}
	f := r.PostForm
	name, action, id, kind := f.Get("q"), f.Get("action"), f.Get("id"), f.Get("kind")
	q := h.byName[name]
	if q == nil {
		http.Error(w, fmt.Sprintf("dashboard: no queue %q here", name), http.StatusBadRequest)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), h.opts.Timeout)
	defer cancel()
	back := url.Values{"q": {name}}
	if s := f.Get("back"); s == "pending" || s == "running" || s == "dead" {
		back.Set("state", s)
	} else if s == "job" && id != "" {
		back.Set("id", id)
	}
	if (action == "cancel" || action == "delete") && back.Has("id") {
		back.Del("id") // the job is gone: back to its queue
	}
	if (action == "retry" || action == "delete" || action == "cancel") && (id == "" || len(id) > durable.MaxIDLen) {
		http.Error(w, fmt.Sprintf("dashboard: %s needs the ID of a job (at most %d bytes)", action, durable.MaxIDLen), http.StatusBadRequest)
		return
	}
	if (action == "retry-all" || action == "delete-all") && f.Get("confirm") != "yes" {
		http.Error(w, "dashboard: "+action+" needs confirm=yes", http.StatusBadRequest)
		return
	}
	var n int
	var err error
	switch action {
	case "retry":
		n, err = q.RetryDead(ctx, id)
	case "delete":
		n, err = q.DeleteDead(ctx, id)
	case "retry-all":
		n, err = q.RetryAllDead(ctx, kind)
	case "delete-all":
		n, err = q.DeleteAllDead(ctx, kind)
	case "cancel":
		var ok bool
		ok, err = q.Cancel(ctx, id)
		if ok {
			n = 1
		}
	case "pause":
		if err = q.Pause(ctx, kind); err == nil {
			n = 1
		}
	case "resume":
		if err = q.Resume(ctx, kind); err == nil {
			n = 1
		}
	default:
		http.Error(w, fmt.Sprintf("dashboard: no action %q", action), http.StatusBadRequest)
		return
	}
	if err != nil {
		status := http.StatusBadGateway
		if errors.Is(err, context.DeadlineExceeded) {
			status = http.StatusGatewayTimeout
		}
		http.Error(w, err.Error(), status)
		return
	}
	back.Set("done", action)
	back.Set("n", strconv.Itoa(n))
	if kind != "" {
		back.Set("kind", kind)
	}
	// Relative to the page that posted: the dashboard's own path, wherever
	// it is mounted. http.Redirect would resolve it against the path's
	// directory.
	w.Header().Set("Location", "?"+back.Encode())
	w.WriteHeader(http.StatusSeeOther)
}

// doneText says what the action named in the query did, from a fixed
// set of sentences: a link cannot make the page say anything else.
func doneText(v url.Values) string {
	n, err := strconv.Atoi(v.Get("n"))
	if err != nil || n < 0 {
		return ""
	}
	kind := "the whole queue"
	if k := v.Get("kind"); k != "" {
		kind = "kind " + strconv.Quote(k)
	}
	jobs := func(n int) string {
		if n == 1 {
			return "1 job"
		}
		return strconv.Itoa(n) + " jobs"
	}
	switch v.Get("done") {
	case "retry", "retry-all":
		return "Retried " + jobs(n) + ": due now."
	case "delete", "delete-all":
		return "Deleted " + jobs(n) + "."
	case "cancel":
		if n == 0 {
			return "No such job: nothing cancelled."
		}
		return "Cancelled 1 job."
	case "pause":
		return "Paused " + kind + "."
	case "resume":
		return "Resumed " + kind + "."
	}
	return ""
}

// dur writes a duration for a person: rounded to ms, or s above 10 s.
func dur(d time.Duration) string {
	switch {
	case d == 0:
		return "0"
	case d < 10*time.Second:
		return d.Round(time.Millisecond).String()
	}
	return d.Round(time.Second).String()
}

// when writes a time in UTC with ms, and how far from now it is.
func when(t time.Time) string {
	if t.IsZero() {
		return "–"
	}
	d := time.Until(t)
	if d < 0 {
		return t.UTC().Format("2006-01-02 15:04:05.000") + " (" + dur(-d) + " ago)"
	}
	return t.UTC().Format("2006-01-02 15:04:05.000") + " (in " + dur(d) + ")"
}

// payloadText returns a payload as text: as it is if it is UTF-8, else
// Go-quoted. html/template escapes either.
func payloadText(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	return strconv.Quote(string(b))
}

// short cuts s to n runes, with an ellipsis.
func short(n int, s string) string {
	i := 0
	for j := range s {
		if i == n {
			return s[:j] + "…"
		}
		i++
	}
	return s
}
