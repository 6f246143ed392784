// Package dashboard serves a web page of durable queues: each queue's
// figures (pending, due, running, dead, how late the oldest due job is,
// paused kinds, this process's attempts and their lateness), its jobs by
// state a page at a time (of every kind, or of one), one job with its
// past attempts, and the dead jobs with their errors. A queue's workers,
// its history by minute and hour with the lateness, and its jobs by kind
// have pages of their own.
// With actions turned on it also retries and deletes dead jobs, cancels
// jobs, and pauses and resumes a queue or a kind. A page lists the
// queue's periodic schedules, which actions pause, resume and remove.
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
//     refused with 403. Cancel, retry all, delete all and a schedule's
//     Remove answer a confirmation page whose own form posts the action
//     again with confirm=yes. The message of the page after an action is signed,
//     so that a link cannot make it say anything. Cross-origin POSTs are refused (403) by
//     http.CrossOriginProtection (Sec-Fetch-Site, else Origin against
//     Host), so that another site cannot make an operator's browser post
//     a form to it. Requests with neither header (curl, scripts) pass
//     that check: authentication is what stops them.
//   - Payloads are shown only with Options.Payloads (they hold customers'
//     data, as a rule); without it, only their size, and an error that
//     quotes its job's payload shows "[payload hidden]" there.
//     Options.Redact rewrites every error shown. IDs, kinds, payloads
//     and errors are escaped by html/template, so a job cannot put markup
//     or script in the page; the page also sends a Content-Security-Policy
//     that allows no script at all and no framing (against clickjacking),
//     and Cache-Control: no-store.
package dashboard

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"strconv"
	"time"

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
	// Redact rewrites a job's last error before the page shows it, for
	// errors that quote customers' data. Without it, and without
	// Payloads, the page replaces the job's payload where its error
	// quotes it with "[payload hidden]".
	Redact func(string) string
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
	h := &handler{opts: opts, byName: map[string]*durable.Queue{}, key: newKey()}
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

//go:embed *.html
var files embed.FS

// page is the template of every page: page.html, and the sections of
// the views of other files (a *.html file each, its sections defined by
// name).
var page *template.Template

func init() {
	page = template.Must(template.New("page.html").Funcs(template.FuncMap{
		"dur":     dur,
		"when":    when,
		"payload": payloadText,
		"short":   short,
		"idtext":  idText,
		"id64":    encodeID,
		// The workers, history and kinds pages' and a job's attempts'.
		"ago":         ago,
		"stamp":       stamp,
		"workerState": workerState,
		"late":        lateText,
		"ranFor":      ranFor,
		"section": func(name string, v any) (template.HTML, error) {
			var b bytes.Buffer
			err := page.ExecuteTemplate(&b, name, v)
			return template.HTML(b.String()), err // escaped by html/template as it ran
		},
	}).ParseFS(files, "*.html"))
}

type handler struct {
	opts   Options
	queues []*durable.Queue
	byName map[string]*durable.Queue
	key    []byte // signs the messages of the pages after an action (flash.go)
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

// errStatus is the status of a page whose Redis call failed with err:
// 400 for a cursor no page gave, else 502 (Redis down, stalled, or
// refusing), the page saying why.
func errStatus(err error) int {
	if errors.Is(err, durable.ErrCursor) {
		return http.StatusBadRequest
	}
	return http.StatusBadGateway
}
