package dashboard_test

import (
	"context"
	"errors"
	"fmt"
	"html"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/timewheel/timewheel/durable"
	"github.com/timewheel/timewheel/durable/dashboard"
	"github.com/timewheel/timewheel/internal/redisserver"
)

// The workers, history and kinds pages, a kind's list and a job's
// attempts, each with what it must show, markup escaped, no script; and
// each page's round trips to Redis within its bound, for 8 jobs and for
// 5,008 alike.
func TestObservePages(t *testing.T) {
	f := newWorkedFixture(t, dashboard.Options{})
	shown := newFixtureOn(t, f, dashboard.Options{Payloads: true})
	for _, c := range []struct {
		f     *fixture
		query string
		want  []string
	}{
		{f, "q=q", []string{`href="?q=q&amp;view=workers"`, `href="?q=q&amp;view=history"`, `href="?q=q&amp;view=kinds"`}},
		{f, "q=q&view=workers", []string{`<span class="badge closed">closed</span>`, "Up since", html.EscapeString(markup)}},
		{f, "q=q&view=history", []string{`<svg class="chart"`, "Attempts a minute", "<b>4</b><span>died</span>", "<b>4</b><span>started</span>", "last hour, by minute"}},
		{f, "q=q&view=history&span=month&kind=mail", []string{"<b>3</b><span>died</span>", "last 30 days, by hour", "Attempts a hour"}},
		{f, "q=q&view=history&span=day", []string{"last day, by minute"}},
		{f, "q=q&view=kinds", []string{"<code>mail</code>", `href="?q=q&amp;state=dead&amp;kind=mail">3</a>`, `state=pending&amp;kind=mail">1</a>`}},
		{f, "q=q&state=dead&kind=mail", []string{"mail-0", "mail-2", "Jobs of kind <code>mail</code> only"}},
		{f, "q=q&id=mail-1", []string{"Past attempts", "smtp: 550 no such user mail-1", `<span class="badge dead">died</span>`}},
		// The attempts' errors are redacted as the job's is: the payload
		// hidden where an error quotes it, unless Options.Payloads.
		{f, "q=q&id=" + url.QueryEscape(markup), []string{`<td class="err">failed: [payload hidden]</td>`}},
		{shown, "q=q&id=" + url.QueryEscape(markup), []string{`<td class="err">failed: ` + html.EscapeString(markup) + `</td>`}},
	} {
		status, body := c.f.get(t, c.query)
		if status != http.StatusOK {
			t.Errorf("GET ?%s: %d", c.query, status)
		}
		for _, w := range c.want {
			if !strings.Contains(body, w) {
				t.Errorf("GET ?%s: no %q in the page", c.query, w)
			}
		}
		if strings.Contains(body, "<script") || strings.Contains(body, "<img") {
			t.Errorf("GET ?%s: markup in the page", c.query)
		}
	}
	if _, body := f.get(t, "q=q&state=dead&kind=nope"); !strings.Contains(body, "No dead job") {
		t.Error("a list of a kind with no job does not say so")
	}
	if status, _ := f.get(t, "q=q&view=nope"); status != http.StatusNotFound {
		t.Errorf("GET ?view=nope: %d; want 404", status)
	}
	for _, q := range []string{"q=q&state=dead&kind=a%00b", "q=q&view=history&kind=" + strings.Repeat("k", durable.MaxKindLen+1)} {
		if status, _ := f.get(t, q); status != http.StatusBadRequest {
			t.Errorf("GET ?%.40s: %d; want 400 for a kind no job can have", q, status)
		}
	}

	// Round trips: a client that the Queue uses as it is, counted.
	var calls atomic.Int64
	rdb := redis.NewClient(&redis.Options{Addr: f.rdb.Options().Addr, ContextTimeoutEnabled: true})
	rdb.AddHook(counter{&calls})
	defer rdb.Close()
	q := durable.New(rdb, durable.WithName("q"))
	defer q.Close(context.Background())
	srv := httptest.NewServer(dashboard.New(dashboard.Options{}, q))
	defer srv.Close()
	pages := []string{"view=workers", "view=history", "view=history&span=day", "view=kinds", "state=pending&kind=mail", "state=dead&kind=mail", "id=mail-1"}
	bound := []int64{2, 2, 2, 1, 4, 4, 2} // a shard: the workers and one for a gone worker's jobs; a history and its kinds; four Lists
	trips := func() []int64 {
		var out []int64
		for _, p := range pages {
			calls.Store(0)
			resp, err := http.Get(srv.URL + "/?q=q&" + p)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			out = append(out, calls.Load())
		}
		return out
	}
	trips() // the scripts loaded
	few := trips()
	pipe := f.rdb.Pipeline()
	for i := range 5000 {
		pipe.HSet(context.Background(), "{q}:job", fmt.Sprint("x-", i), "mail\x00")
		pipe.ZAdd(context.Background(), "{q}:due", redis.Z{Score: 1e15, Member: fmt.Sprint("x-", i)})
	}
	if _, err := pipe.Exec(context.Background()); err != nil {
		t.Fatal(err)
	}
	many := trips()
	for i := range pages {
		if few[i] > bound[i] || many[i] > bound[i] {
			t.Errorf("round trips of %v: %v with 8 jobs, %v with 5,008; want at most %v", pages, few, many, bound)
			break
		}
	}
}

// counter counts the commands and pipelines a client sends.
type counter struct{ n *atomic.Int64 }

func (c counter) DialHook(next redis.DialHook) redis.DialHook { return next }
func (c counter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error { c.n.Add(1); return next(ctx, cmd) }
}
func (c counter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error { c.n.Add(1); return next(ctx, cmds) }
}

// The workers, history and kinds pages and a kind's list with Redis
// down are a 502 with the error, never an empty page.
func TestObservePagesRedisDown(t *testing.T) {
	rs := redisserver.ForTest(t)
	// A pool that a few failed dials do not saturate: go-redis would
	// start a goroutine that probes the server each second, past Close.
	rdb := redis.NewClient(&redis.Options{Addr: rs.Addr, PoolSize: 1000})
	defer rdb.Close()
	q := durable.New(rdb, durable.WithName("q"))
	defer q.Close(context.Background())
	q.ScheduleAfter(context.Background(), "a", "k", time.Hour, nil)
	h := dashboard.New(dashboard.Options{Timeout: 300 * time.Millisecond}, q)
	rs.Stop()
	for _, path := range []string{"/?q=q&view=workers", "/?q=q&view=history", "/?q=q&view=kinds", "/?q=q&state=dead&kind=k"} {
		w := httpGet(h, path)
		body := w.Body.String()
		if w.Code != http.StatusBadGateway || strings.Contains(body, "No dead job") || strings.Contains(body, "No worker") || !strings.Contains(body, `class="msg err"`) {
			t.Errorf("GET %s with Redis down: %d\n%s", path, w.Code, body)
		}
	}
}

// newWorkedFixture is newFixture's queue with its dead jobs left by a
// worker, as the workers, history and attempts pages need: a worker
// whose handlers fail for good kills the jobs, then it is closed, so
// that nothing runs the jobs the tests retry.
func newWorkedFixture(t *testing.T, opts dashboard.Options) *fixture {
	t.Helper()
	rs := redisserver.ForTest(t)
	rdb := redis.NewClient(&redis.Options{Addr: rs.Addr})
	t.Cleanup(func() { rdb.Close() })
	ctx := context.Background()
	w := durable.New(rdb, durable.WithName("q"), durable.WithRetry(1, durable.Exponential(time.Millisecond, time.Millisecond)),
		durable.WithHandler("mail", func(_ context.Context, j durable.Job) error { return errors.New("smtp: 550 no such user " + j.ID) }),
		durable.WithHandler(markup, func(context.Context, durable.Job) error { return errors.New("failed: " + markup) }))
	for i := range 3 {
		w.ScheduleAfter(ctx, fmt.Sprint("mail-", i), "mail", 0, []byte("to=a@example.com"))
	}
	w.ScheduleAfter(ctx, markup, markup, 0, []byte(markup))
	q := durable.New(rdb, durable.WithName("q"))
	t.Cleanup(func() { q.Close(context.Background()) })
	deadline := time.Now().Add(20 * time.Second)
	for {
		c, err := q.Counts(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if c.Dead == 4 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("Counts = %+v; want 4 dead", c)
		}
		time.Sleep(10 * time.Millisecond)
	}
	w.Close(ctx)
	q.ScheduleAfter(ctx, "later", "mail", time.Hour, []byte("pending payload"))
	srv := httptest.NewServer(dashboard.New(opts, q))
	t.Cleanup(srv.Close)
	return &fixture{rdb: rdb, q: q, srv: srv}
}
