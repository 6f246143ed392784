package dashboard_test

import (
	"context"
	"html"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/timewheel/timewheel/durable"
	"github.com/timewheel/timewheel/durable/dashboard"
	"github.com/timewheel/timewheel/internal/redisserver"
)

// The schedules page against a real redis-server: every schedule with
// its spec, zone, kind, next and last runs, counts and policies, a
// hostile name as text; Pause and Resume from their forms (a name of
// markup and a NUL included), Remove through its confirmation page; an
// action on no schedule says so; without actions no form; Redis down is
// a 502.
func TestSchedulesPage(t *testing.T) {
	t.Cleanup(func() { waitDialersGone(t) })
	rs := redisserver.ForTest(t)
	rdb := redis.NewClient(&redis.Options{Addr: rs.Addr})
	defer rdb.Close()
	ctx := context.Background()
	q := durable.New(rdb, durable.WithName("q"), durable.WithHandler("report", func(context.Context, durable.Job) error { return nil }))
	defer q.Close(ctx)
	sc := q.Schedules()
	hostile := markup + "\x00\xff"
	for _, p := range []durable.Periodic{
		{Name: "daily-report", Spec: "0 9 * * *", Zone: "America/New_York", Kind: "report", Overlap: durable.OverlapDelay},
		{Name: "tick", Spec: "@every 100ms", Kind: "report", Missed: durable.MissedRunAll, CatchUp: 5},
		{Name: hostile, Spec: "@hourly", Kind: "report", Missed: durable.MissedSkip},
	} {
		if _, err := sc.Upsert(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for s, _, _ := sc.Get(ctx, "tick"); s.Counts.Runs < 2; s, _, _ = sc.Get(ctx, "tick") {
		if time.Now().After(deadline) {
			t.Fatalf("tick: %+v; want 2 runs", s)
		}
		time.Sleep(10 * time.Millisecond)
	}
	srv := httptest.NewServer(dashboard.New(dashboard.Options{Actions: true}, q))
	defer srv.Close()
	f := &fixture{rdb: rdb, q: q, srv: srv}

	if _, page := f.get(t, "q=q"); !strings.Contains(page, `href="?q=q&amp;view=schedules">schedules</a>`) {
		t.Errorf("the queue's page has no link to its schedules\n%s", page)
	}
	status, page := f.get(t, "q=q&view=schedules")
	for _, want := range []string{
		"<code>0 9 * * *</code><br><small>America/New_York</small>", "E", // the next 9:00 in New York: EST or EDT
		"missed: run last<br>overlap: delay", "missed: run all (up to 5)<br>overlap: skip", "missed: skip<br>overlap: skip",
		"after its instant</small>", "&lt;script&gt;alert(1)&lt;/script&gt;",
		`name="sched64" value="` + dashboard.EncodeID(hostile) + `"`, `value="pause-schedule"`, `value="remove-schedule"`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("schedules page: no %q", want)
		}
	}
	if status != 200 || strings.Contains(page, "<script>") {
		t.Fatalf("schedules page: %d, markup not escaped\n%s", status, page)
	}
	if i := strings.Index(page, "daily-report"); i < 0 || i < strings.Index(page, ">tick<") {
		t.Errorf("daily-report (tomorrow) listed before tick (now)")
	}

	// Pause and resume the hostile one by its encoded name.
	form := url.Values{"q": {"q"}, "sched64": {dashboard.EncodeID(hostile)}, "back": {"schedules"}}
	form.Set("action", "pause-schedule")
	page = f.follow(t, form)
	if s, _, _ := sc.Get(ctx, hostile); !s.Paused || !strings.Contains(page, `<p class="msg done" role="status">Paused schedule`) || !strings.Contains(page, `value="resume-schedule"`) {
		t.Errorf("after Pause: paused %v\n%s", s.Paused, page)
	}
	form.Set("action", "resume-schedule")
	if page = f.follow(t, form); !strings.Contains(page, "the runs it missed go to its missed policy") {
		t.Errorf("after Resume:\n%s", page)
	}
	if s, _, _ := sc.Get(ctx, hostile); s.Paused {
		t.Error("still paused after Resume")
	}

	// Remove asks first, and changes nothing until confirmed.
	head, _, _ := sc.Get(ctx, "daily-report")
	resp, body := f.post(t, url.Values{"q": {"q"}, "action": {"remove-schedule"}, "sched64": {dashboard.EncodeID("daily-report")}, "back": {"schedules"}}, sameOrigin...)
	if _, ok, _ := sc.Get(ctx, "daily-report"); resp.StatusCode != 200 || !ok || !strings.Contains(body, "Remove schedule &#34;daily-report&#34; (&#34;0 9 * * *&#34;, kind &#34;report&#34;)? It has run 0 times; its next run, due") {
		t.Fatalf("remove, unconfirmed: %d, exists %v\n%s", resp.StatusCode, ok, body)
	}
	confirm := url.Values{}
	for _, m := range regexp.MustCompile(`<input type="hidden" name="([^"]*)" value="([^"]*)">`).FindAllStringSubmatch(body[strings.Index(body, `class="panel confirm"`):], -1) {
		confirm.Add(m[1], html.UnescapeString(m[2]))
	}
	page = f.follow(t, confirm)
	if _, ok, _ := sc.Get(ctx, "daily-report"); ok || !strings.Contains(page, "Removed schedule &#34;daily-report&#34;.") || strings.Contains(page, "<code>0 9 * * *</code>") {
		t.Errorf("remove confirmed: exists %v\n%s", ok, page)
	}
	if _, ok, _ := q.Lookup(ctx, durable.RunID("daily-report", head.Next)); ok {
		t.Error("the removed schedule's next run is still a job")
	}
	if page = f.follow(t, confirm); !strings.Contains(page, `<p class="msg none" role="status">No schedule &#34;daily-report&#34;: nothing removed.`) {
		t.Errorf("remove of no schedule:\n%s", page)
	}
	resp, body = f.post(t, url.Values{"q": {"q"}, "action": {"pause-schedule"}, "back": {"schedules"}}, sameOrigin...)
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(body, "pause-schedule needs a schedule&#39;s name") {
		t.Errorf("pause of no name: %d\n%s", resp.StatusCode, body)
	}

	// Read-only: the schedules, no form.
	ro := newFixtureOn(t, f, dashboard.Options{})
	if _, page := ro.get(t, "q=q&view=schedules"); !strings.Contains(page, ">tick<") || strings.Contains(page, "sched64") || strings.Contains(page, "<form method=\"post\"") {
		t.Errorf("read-only schedules page:\n%s", page)
	}

	// Redis gone: a 502 with the error, not an empty list.
	rs.Stop()
	if status, page := f.get(t, "q=q&view=schedules"); status != http.StatusBadGateway || strings.Contains(page, "No schedule.") || !strings.Contains(page, `class="msg err"`) {
		t.Errorf("with Redis down: %d\n%s", status, page)
	}
}

// waitDialersGone waits until go-redis's pools have no goroutine left
// that dials again after a failed dial: it sleeps 1 s between tries and
// sees its pool closed only then. The test stopped Redis, and may be the
// package's last, whose leftovers TestMain's goleak would report.
func waitDialersGone(t *testing.T) {
	buf := make([]byte, 1<<20)
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if !strings.Contains(string(buf[:runtime.Stack(buf, true)]), "ConnPool).tryDial") {
			return
		}
		if time.Now().After(deadline) {
			t.Error("go-redis still redials 5 s after its clients closed")
			return
		}
	}
}
