package dashboard_test

import (
	"context"
	"fmt"
	"html"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/timewheel/timewheel/durable"
	"github.com/timewheel/timewheel/durable/dashboard"
)

// The workers, history and kinds pages, a kind's list and a job's
// attempts, each with what it must show, markup escaped, no script; and
// each page's round trips to Redis within its bound, for 8 jobs and for
// 5,008 alike.
func TestObservePages(t *testing.T) {
	f := newFixture(t, dashboard.Options{})
	for _, c := range []struct {
		query string
		want  []string
	}{
		{"q=q", []string{`href="?q=q&amp;view=workers"`, `view=history`, `view=kinds`}},
		{"q=q&view=workers", []string{`<span class="badge closed">closed</span>`, "Up since", html.EscapeString(markup)}},
		{"q=q&view=history", []string{`<svg class="chart"`, "Attempts a minute", "<b>4</b><span>died</span>", "<b>4</b><span>started</span>", "last hour, by minute"}},
		{"q=q&view=history&span=month&kind=mail", []string{"<b>3</b><span>died</span>", "last 30 days, by hour", "Attempts a hour"}},
		{"q=q&view=history&span=day", []string{"last day, by minute"}},
		{"q=q&view=kinds", []string{"<code>mail</code>", `href="?q=q&amp;state=dead&amp;kind=mail">3</a>`, `state=pending&amp;kind=mail">1</a>`}},
		{"q=q&state=dead&kind=mail", []string{"mail-0", "mail-2", "Jobs of kind <code>mail</code> only"}},
		{"q=q&id=mail-1", []string{"Past attempts", "smtp: 550 no such user mail-1", `<span class="badge dead">died</span>`}},
		{"q=q&id=" + url.QueryEscape(markup), []string{"failed: " + html.EscapeString(markup)}},
	} {
		status, body := f.get(t, c.query)
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
