package dashboard_test

import (
	"context"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"go.uber.org/goleak"

	"github.com/timewheel/timewheel/durable"
	"github.com/timewheel/timewheel/durable/dashboard"
	"github.com/timewheel/timewheel/internal/redisserver"
)

// quiet drops go-redis's log lines, one per failed dial while a test has
// stopped the server.
type quiet struct{}

func (quiet) Printf(context.Context, string, ...any) {}

func TestMain(m *testing.M) {
	redis.SetLogger(quiet{})
	goleak.VerifyTestMain(m)
}

// markup is what a hostile job carries in its ID, kind, payload and
// error: none of it may reach the page as markup.
const markup = `<script>alert(1)</script><img src=x onerror=alert(2)>"'&`

// fixture is a redis-server with a queue "q" holding dead jobs (one of
// them all markup), a pending one, and a dashboard of it on a test
// server.
type fixture struct {
	rdb *redis.Client
	q   *durable.Queue
	srv *httptest.Server
}

// newFixture starts it, the dashboard made with opts.
func newFixture(t *testing.T, opts dashboard.Options) *fixture {
	t.Helper()
	rs := redisserver.ForTest(t)
	rdb := redis.NewClient(&redis.Options{Addr: rs.Addr})
	t.Cleanup(func() { rdb.Close() })
	ctx := context.Background()
	// The dead jobs, as a worker whose handlers failed for good leaves
	// them (the layout is in durable/internal/store/keys.go): no worker
	// runs here, so nothing runs the jobs the tests retry.
	dead := map[string][2]string{markup: {markup, "failed: " + markup}}
	for i := range 3 {
		dead[fmt.Sprint("mail-", i)] = [2]string{"mail", fmt.Sprint("smtp: 550 no such user mail-", i)}
	}
	for id, d := range dead {
		payload := "to=a@example.com"
		if id == markup {
			payload = markup
		}
		for _, c := range []*redis.IntCmd{
			rdb.HSet(ctx, "{q}:job", id, d[0]+"\x00"+payload),
			rdb.HSet(ctx, "{q}:run", id, "1"),
			rdb.HSet(ctx, "{q}:dead", id, d[1]),
		} {
			if err := c.Err(); err != nil {
				t.Fatal(err)
			}
		}
	}
	q := durable.New(rdb, durable.WithName("q"))
	t.Cleanup(func() { q.Close(context.Background()) })
	q.ScheduleAfter(ctx, "later", "mail", time.Hour, []byte("pending payload"))
	srv := httptest.NewServer(dashboard.New(opts, q))
	t.Cleanup(srv.Close)
	return &fixture{rdb: rdb, q: q, srv: srv}
}

// newFixtureOn returns a fixture on f's queue with a dashboard made with
// opts.
func newFixtureOn(t *testing.T, f *fixture, opts dashboard.Options) *fixture {
	srv := httptest.NewServer(dashboard.New(opts, f.q))
	t.Cleanup(srv.Close)
	return &fixture{rdb: f.rdb, q: f.q, srv: srv}
}

// httpGet serves a GET of path from h.
func httpGet(h http.Handler, path string) *httptest.ResponseRecorder {
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest("GET", path, nil))
	return w
}

// httpPost serves a POST of form from h.
func httpPost(h http.Handler, form url.Values) *httptest.ResponseRecorder {
	w := httptest.NewRecorder()
	r := httptest.NewRequest("POST", "/", strings.NewReader(form.Encode()))
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	h.ServeHTTP(w, r)
	return w
}

// noRedirect is a client that returns redirects instead of following.
var noRedirect = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// get fetches the dashboard's page at query, and returns its status and
// body.
func (f *fixture) get(t *testing.T, query string) (int, string) {
	t.Helper()
	resp, err := http.Get(f.srv.URL + "/?" + query)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// post posts form to the dashboard with the headers hdr (key, value,
// ...), and returns the response, its body read.
func (f *fixture) post(t *testing.T, form url.Values, hdr ...string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", f.srv.URL+"/", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := noRedirect.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// state returns the state of job id, 0 if it is gone.
func (f *fixture) state(t *testing.T, id string) durable.State {
	t.Helper()
	in, ok, err := f.q.Lookup(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if !ok {
		return 0
	}
	return in.State
}

// sameOrigin is what a browser sends with a form posted from the
// dashboard's own page.
var sameOrigin = []string{"Sec-Fetch-Site", "same-origin"}

// By default the dashboard reads: no form, no button, no payload; a POST
// is refused even from its own origin, and changes nothing.
func TestActionsOffByDefault(t *testing.T) {
	f := newFixture(t, dashboard.Options{})
	code, body := f.get(t, "")
	if code != 200 || !strings.Contains(body, "read-only") || !regexp.MustCompile(`<b>4</b><span>dead</span>`).MatchString(body) {
		t.Fatalf("overview: %d\n%s", code, body)
	}
	for _, q := range []string{"", "q=q", "q=q&state=dead", "q=q&state=pending", "q=q&id=mail-0", "q=q&id=later"} {
		_, body := f.get(t, q)
		if strings.Contains(body, `method="post"`) || strings.Contains(body, `name="action"`) {
			t.Errorf("?%s: an action's form with actions off", q)
		}
		if strings.Contains(body, "to=a@example.com") || strings.Contains(body, "pending payload") {
			t.Errorf("?%s: a payload shown without Options.Payloads", q)
		}
	}
	if _, body := f.get(t, "q=q&id=mail-0"); !strings.Contains(body, "16 bytes (hidden: Options.Payloads)") {
		t.Errorf("job page: no payload size\n%s", body)
	}
	for _, action := range []string{"retry", "delete", "cancel"} {
		resp, body := f.post(t, url.Values{"q": {"q"}, "action": {action}, "id": {"mail-0"}}, sameOrigin...)
		if resp.StatusCode != http.StatusForbidden || !strings.Contains(body, "actions are off") {
			t.Errorf("POST %s with actions off: %d %q", action, resp.StatusCode, body)
		}
	}
	if f.state(t, "mail-0") != durable.Dead {
		t.Error("a POST with actions off changed mail-0")
	}
}

// A GET changes nothing, whatever its query says; every response forbids
// script, framing and caching.
func TestGetChangesNothing(t *testing.T) {
	f := newFixture(t, dashboard.Options{Actions: true})
	for _, q := range []string{
		"q=q&action=retry&id=mail-0",
		"q=q&action=delete&id=mail-0",
		"q=q&action=cancel&id=later",
		"q=q&action=retry-all&confirm=yes",
		"q=q&action=pause",
		"action=delete-all&q=q&confirm=yes&state=dead",
	} {
		for _, method := range []string{"GET", "HEAD"} {
			req, _ := http.NewRequest(method, f.srv.URL+"/?"+q, nil)
			req.Header.Set("Sec-Fetch-Site", "same-origin")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != 200 {
				t.Errorf("%s ?%s: %d", method, q, resp.StatusCode)
			}
			csp := resp.Header.Get("Content-Security-Policy")
			if !strings.Contains(csp, "default-src 'none'") || !strings.Contains(csp, "frame-ancestors 'none'") ||
				resp.Header.Get("Cache-Control") != "no-store" {
				t.Errorf("%s ?%s: headers %v", method, q, resp.Header)
			}
		}
	}
	c, _ := f.q.Counts(context.Background())
	if c.Dead != 4 || c.Pending != 1 || f.state(t, "mail-0") != durable.Dead || f.state(t, "later") != durable.Pending {
		t.Errorf("after the GETs: %+v", c)
	}
	req, _ := http.NewRequest("PUT", f.srv.URL+"/?q=q", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("PUT: %d", resp.StatusCode)
	}
}

// A POST from another origin is refused and changes nothing; the same
// form from the dashboard's own page retries the job.
func TestCrossOriginPostRefused(t *testing.T) {
	f := newFixture(t, dashboard.Options{Actions: true})
	form := url.Values{"q": {"q"}, "action": {"retry"}, "id": {"mail-0"}, "back": {"dead"}}
	for _, hdr := range [][]string{
		{"Sec-Fetch-Site", "cross-site"},
		{"Sec-Fetch-Site", "same-site"},
		{"Origin", "http://evil.example"},                     // a browser without Sec-Fetch-Site
		{"Sec-Fetch-Site", "cross-site", "Origin", f.srv.URL}, // the header wins
	} {
		resp, body := f.post(t, form, hdr...)
		if resp.StatusCode != http.StatusForbidden || !strings.Contains(body, "cross-origin request refused") {
			t.Errorf("POST with %q: %d %q; want 403", hdr, resp.StatusCode, body)
		}
	}
	if f.state(t, "mail-0") != durable.Dead {
		t.Fatal("a cross-origin POST retried mail-0")
	}
	resp, _ := f.post(t, form, "Sec-Fetch-Site", "same-origin", "Origin", f.srv.URL)
	loc := resp.Header.Get("Location")
	if resp.StatusCode != http.StatusSeeOther || !strings.HasPrefix(loc, "?") || !strings.Contains(loc, "state=dead") {
		t.Fatalf("same-origin POST: %d, Location %q", resp.StatusCode, loc)
	}
	if f.state(t, "mail-0") != durable.Pending {
		t.Error("the same-origin POST did not retry mail-0")
	}
	if _, body := f.get(t, loc[1:]); !strings.Contains(body, `<p class="msg done" role="status">Retried job &#34;mail-0&#34;: due now.</p>`) {
		t.Error("the page after the POST does not say what it did")
	}
}

// A forged form (fields the page never sends) is refused or does
// nothing: an action of another name, a queue not mounted, a retry of a
// job that is not dead, a bulk action without its confirmation, a body
// too large; a done message that is not one of the page's own.
func TestForgedForm(t *testing.T) {
	f := newFixture(t, dashboard.Options{Actions: true})
	for _, c := range []struct {
		form url.Values
		code int
	}{
		{url.Values{"q": {"q"}, "action": {"flushall"}}, 400},
		{url.Values{"q": {"other"}, "action": {"retry"}, "id": {"mail-0"}}, 404},
		{url.Values{"q": {"q"}, "action": {"delete-all"}}, 200},                   // the confirmation page
		{url.Values{"q": {"q"}, "action": {"retry-all"}, "confirm": {"on"}}, 200}, // the same
		{url.Values{"q": {"q"}, "action": {"cancel"}, "id": {"later"}}, 200},      // the same
		{url.Values{"q": {"q"}, "action": {"retry"}, "id64": {"!!"}}, 400},
		{url.Values{"q": {"q"}, "action": {"retry"}, "id": {""}}, 400},
		{url.Values{"q": {"q"}, "action": {"cancel"}}, 400},
		{url.Values{"q": {"q"}, "action": {"delete"}, "id": {strings.Repeat("x", durable.MaxIDLen+1)}}, 400},
		{url.Values{"q": {"q"}, "action": {"retry"}, "id": {strings.Repeat("x", 20<<10)}}, 400},
	} {
		resp, body := f.post(t, c.form, sameOrigin...)
		if resp.StatusCode != c.code {
			t.Errorf("POST %.80v: %d %q; want %d", c.form, resp.StatusCode, body, c.code)
		}
	}
	// A retry or a delete of a pending job: not dead, left alone, and
	// the page says so (not in green).
	for action, want := range map[string]string{"retry": "No dead job &#34;later&#34;: nothing retried.", "delete": "No dead job &#34;later&#34;: nothing deleted."} {
		resp, _ := f.post(t, url.Values{"q": {"q"}, "action": {action}, "id": {"later"}, "back": {"https://evil.example/"}}, sameOrigin...)
		loc := resp.Header.Get("Location")
		if resp.StatusCode != 303 || !strings.HasPrefix(loc, "?") || strings.Contains(loc, "evil") {
			t.Fatalf("%s of a pending job: %d, Location %q", action, resp.StatusCode, loc)
		}
		if _, body := f.get(t, loc[1:]); !strings.Contains(body, `<p class="msg none" role="status">`+want+`</p>`) {
			t.Errorf("%s of a pending job: the page does not say %q", action, want)
		}
	}
	c, _ := f.q.Counts(context.Background())
	if c.Dead != 4 || c.Pending != 1 {
		t.Errorf("after the forged forms: %+v", c)
	}
	if _, body := f.get(t, "q=q&done=%3Cb%3Eowned%3C/b%3E&n=1"); strings.Contains(body, "owned") {
		t.Error("the page shows a done message the link made up")
	}
}

// A job made of markup is shown as text: escaped, never as markup, in
// the list of dead jobs and on its own page, with its payload.
func TestMarkupEscaped(t *testing.T) {
	f := newFixture(t, dashboard.Options{Actions: true, Payloads: true})
	for _, q := range []string{"q=q&state=dead", "q=q&id=" + url.QueryEscape(markup), ""} {
		code, body := f.get(t, q)
		if code != 200 {
			t.Fatalf("?%s: %d", q, code)
		}
		if strings.Contains(body, "<script") || strings.Contains(body, "<img") || strings.Contains(body, "onerror=alert") && !strings.Contains(body, "&lt;img src=x onerror=alert(2)&gt;") {
			t.Errorf("?%s: markup of a job in the page\n%s", q, body)
		}
		if q != "" && !strings.Contains(body, "&lt;script&gt;alert(1)&lt;/script&gt;&lt;img src=x onerror=alert(2)&gt;&#34;&#39;&amp;") {
			t.Errorf("?%s: the job's text is not shown escaped\n%s", q, body)
		}
	}
	_, body := f.get(t, "q=q&id=mail-1")
	if !strings.Contains(body, "<pre>to=a@example.com</pre>") || !strings.Contains(body, "smtp: 550 no such user mail-1") {
		t.Errorf("job page: no payload or error\n%s", body)
	}
	// A link to the markup job works: its ID is in the link, encoded.
	_, list := f.get(t, "q=q&state=dead")
	m := regexp.MustCompile(`href="(\?q=q&amp;id64=` + regexp.QuoteMeta(dashboard.EncodeID(markup)) + `)"`).FindStringSubmatch(list)
	if m == nil {
		t.Fatalf("no link to the markup job in\n%s", list)
	}
	if code, _ := f.get(t, strings.TrimPrefix(html.UnescapeString(m[1]), "?")); code != 200 {
		t.Errorf("the markup job's link: %d", code)
	}
}

// Pages of a list follow the next link; a bad cursor or state is a 400;
// an unknown queue and a missing job are 404s.
func TestPagesAndErrors(t *testing.T) {
	rs := redisserver.ForTest(t)
	rdb := redis.NewClient(&redis.Options{Addr: rs.Addr})
	defer rdb.Close()
	q := durable.New(rdb, durable.WithName("big"))
	defer q.Close(context.Background())
	for i := range 25 {
		q.ScheduleAfter(context.Background(), fmt.Sprintf("j%02d", i), "k", time.Hour+time.Duration(i)*time.Second, nil)
	}
	srv := httptest.NewServer(dashboard.New(dashboard.Options{PageSize: 10}, q))
	defer srv.Close()
	seen := map[string]bool{}
	next := srv.URL + "/?q=big&state=pending"
	for pages := 0; next != ""; pages++ {
		if pages > 5 {
			t.Fatal("no end to the pages")
		}
		resp, err := http.Get(next)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		for _, m := range regexp.MustCompile(`>(j\d\d)</a>`).FindAllStringSubmatch(string(b), -1) {
			if seen[m[1]] {
				t.Errorf("%s twice", m[1])
			}
			seen[m[1]] = true
		}
		next = ""
		if m := regexp.MustCompile(`<a href="([^"]*)" rel="next">`).FindStringSubmatch(string(b)); m != nil {
			next = srv.URL + "/" + html.UnescapeString(m[1])
		}
	}
	if len(seen) != 25 {
		t.Errorf("%d jobs over the pages; want 25", len(seen))
	}
	for q, want := range map[string]int{
		"q=big&id=" + strings.Repeat("x", durable.MaxIDLen+1): 400,
		"q=nope":                         404,
		"q=big&id=nope":                  404,
		"q=big&state=done":               400,
		"q=big&state=pending&cursor=zzz": 400,
		"q=big&state=dead&cursor=1":      400,
	} {
		resp, err := http.Get(srv.URL + "/?" + q)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("?%.40s: %d; want %d", q, resp.StatusCode, want)
		}
	}
	// Redis gone: the page says so, with a 502.
	rs.Stop()
	resp, err := http.Get(srv.URL + "/?q=big")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadGateway || !strings.Contains(string(b), "durable: Counts:") {
		t.Errorf("with Redis down: %d\n%s", resp.StatusCode, b)
	}
}

func TestNewPanics(t *testing.T) {
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"})
	defer rdb.Close()
	a, b := durable.New(rdb, durable.WithName("a")), durable.New(rdb, durable.WithName("a"))
	for want, f := range map[string]func(){
		"dashboard: New: no queue":             func() { dashboard.New(dashboard.Options{}) },
		"dashboard: New: queue 1 is nil":       func() { dashboard.New(dashboard.Options{}, a, nil) },
		`dashboard: New: two queues named "a"`: func() { dashboard.New(dashboard.Options{}, a, b) },
		"dashboard: New: PageSize 1001 not in": func() { dashboard.New(dashboard.Options{PageSize: 1001}, a) },
	} {
		func() {
			defer func() {
				if p, _ := recover().(string); !strings.HasPrefix(p, want) {
					t.Errorf("panic %q; want %q", p, want)
				}
			}()
			f()
		}()
	}
}

// Pause and resume from the page: the whole queue, then a kind; the
// overview shows them paused.
func TestPauseResume(t *testing.T) {
	f := newFixture(t, dashboard.Options{Actions: true})
	ctx := context.Background()
	for _, form := range []url.Values{
		{"q": {"q"}, "action": {"pause"}},
		{"q": {"q"}, "action": {"pause"}, "kind": {"mail"}},
	} {
		resp, body := f.post(t, form, sameOrigin...)
		if resp.StatusCode != 303 {
			t.Fatalf("POST %v: %d %q", form, resp.StatusCode, body)
		}
	}
	if p, _ := f.q.Paused(ctx); len(p) != 2 || p[0] != "" || p[1] != "mail" {
		t.Fatalf("Paused = %q; want the queue and mail", p)
	}
	_, body := f.get(t, "q=q")
	for _, want := range []string{`<span class="badge paused">paused</span>`, "kind <code>mail</code>", "Resume the queue"} {
		if !strings.Contains(body, want) {
			t.Errorf("page while paused: no %q", want)
		}
	}
	for _, form := range []url.Values{
		{"q": {"q"}, "action": {"resume"}},
		{"q": {"q"}, "action": {"resume"}, "kind": {"mail"}},
	} {
		if resp, body := f.post(t, form, sameOrigin...); resp.StatusCode != 303 {
			t.Fatalf("POST %v: %d %q", form, resp.StatusCode, body)
		}
	}
	if p, _ := f.q.Paused(ctx); len(p) != 0 {
		t.Errorf("Paused after the resumes = %q", p)
	}
}

// A dashboard given a Queue whose shard count disagrees with the one the
// queue's layout in Redis holds shows an error that names both counts.
func TestShardsDisagree(t *testing.T) {
	rs := redisserver.ForTest(t)
	rdb := redis.NewClient(&redis.Options{Addr: rs.Addr})
	defer rdb.Close()
	ctx := context.Background()
	q3 := durable.New(rdb, durable.WithName("sharded"), durable.WithShards(3))
	defer q3.Close(ctx)
	if _, err := q3.ScheduleAfter(ctx, "a", "k", time.Hour, nil); err != nil {
		t.Fatal(err)
	}
	q2 := durable.New(rdb, durable.WithName("sharded"), durable.WithShards(2))
	defer q2.Close(ctx)
	srv := httptest.NewServer(dashboard.New(dashboard.Options{}, q2))
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/?q=sharded")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadGateway || !strings.Contains(html.UnescapeString(string(b)), `queue "sharded" has 3 shards in Redis, this Queue WithShards(2)`) {
		t.Errorf("GET of a queue of 3 shards made WithShards(2): %d\n%s", resp.StatusCode, b)
	}
}
