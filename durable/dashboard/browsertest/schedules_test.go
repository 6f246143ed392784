package browsertest

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/redis/go-redis/v9"

	"github.com/timewheel/timewheel/durable"
	"github.com/timewheel/timewheel/durable/dashboard"
	"github.com/timewheel/timewheel/internal/redisserver"
)

// The schedules page in a real browser: a billing queue's schedules, a
// few of which have run (one skipping runs that overlap a slow one), one
// paused. It takes docs/durable-dashboard-schedules.png, then pauses a
// schedule and removes another through its confirmation page, by
// clicks, and checks Redis after each.
func TestSchedulesInBrowser(t *testing.T) {
	exe := chromium(t)
	rs := redisserver.ForTest(t)
	rdb := redis.NewClient(&redis.Options{Addr: rs.Addr})
	defer rdb.Close()
	ctx := context.Background()
	quick := func(context.Context, durable.Job) error { return nil }
	slow := func(ctx context.Context, _ durable.Job) error {
		select {
		case <-time.After(2500 * time.Millisecond):
		case <-ctx.Done():
		}
		return nil
	}
	q := durable.New(rdb, durable.WithName("billing"), durable.WithHandler("invoice", quick),
		durable.WithHandler("sync", quick), durable.WithHandler("digest", slow), durable.WithHandler("close-books", quick))
	defer q.Close(ctx)
	sc := q.Schedules()
	for _, p := range []durable.Periodic{
		{Name: "nightly-invoices", Spec: "0 2 * * *", Zone: "America/New_York", Kind: "invoice", Payload: []byte(`{"batch":500}`)},
		{Name: "sync-inventory", Spec: "@every 1s", Kind: "sync", Overlap: durable.OverlapDelay},
		{Name: "usage-digest", Spec: "@every 1s", Kind: "digest"},
		{Name: "month-end-close", Spec: "0 0 1 * *", Zone: "Europe/Berlin", Kind: "close-books", Missed: durable.MissedRunAll, CatchUp: 3},
		{Name: "weekly-cleanup", Spec: "@weekly", Kind: "invoice", Missed: durable.MissedSkip, Overlap: durable.OverlapAllow},
	} {
		if _, err := sc.Upsert(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := sc.Pause(ctx, "month-end-close"); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		s, _, err := sc.Get(ctx, "usage-digest")
		if err != nil {
			t.Fatal(err)
		}
		if s.Counts.Skipped >= 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("usage-digest: %+v; want 2 runs skipped", s)
		}
		time.Sleep(20 * time.Millisecond)
	}
	srv := httptest.NewServer(dashboard.New(dashboard.Options{Actions: true, Payloads: true}, q))
	defer srv.Close()
	bctx := browser(t, exe)

	if err := chromedp.Do(bctx, chromedp.Navigate(srv.URL+"/?q=billing&view=schedules"), chromedp.WaitVisible(chromedp.CSS(`table.scheds`))); err != nil {
		t.Fatal(err)
	}
	text := run(t, bctx, chromedp.Text(chromedp.CSS(`#schedules`)))
	for _, want := range []string{"nightly-invoices", "0 2 * * *", "America/New_York", "month-end-close paused", "missed: run all (up to 3)", "overlap: delay", "after its instant"} {
		if !strings.Contains(text, want) {
			t.Errorf("schedules: no %q in\n%s", want, text)
		}
	}
	if scripts := run(t, bctx, chromedp.Evaluate[int](`document.querySelectorAll('script').length`)); scripts != 0 {
		t.Errorf("%d scripts in the page", scripts)
	}
	keep(t, "durable-dashboard-schedules.png", run(t, bctx, chromedp.FullScreenshot(100)))

	// Pause sync-inventory by its button.
	row := func(name string) string { return `form:has(input[name=sched64][value="` + id64(name) + `"])` }
	if err := chromedp.Do(bctx,
		chromedp.Click(chromedp.CSS(row("sync-inventory")+` button[value=pause-schedule]`)),
		chromedp.WaitVisible(chromedp.CSS(`.msg.done`)),
	); err != nil {
		t.Fatal(err)
	}
	if done := run(t, bctx, chromedp.Text(chromedp.CSS(`.msg.done`))); done != `Paused schedule "sync-inventory": no run until it is resumed.` {
		t.Errorf("after Pause the page says %q", done)
	}
	if s, _, _ := sc.Get(ctx, "sync-inventory"); !s.Paused {
		t.Error("sync-inventory not paused after its Pause button")
	}

	// Remove weekly-cleanup: the confirmation page, then its Yes button.
	if err := chromedp.Do(bctx,
		chromedp.Click(chromedp.CSS(row("weekly-cleanup")+` button[value=remove-schedule]`)),
		chromedp.WaitVisible(chromedp.CSS(`.confirm`)),
	); err != nil {
		t.Fatal(err)
	}
	if question := run(t, bctx, chromedp.Text(chromedp.CSS(`.confirm p`))); !strings.HasPrefix(question, `Remove schedule "weekly-cleanup" ("@weekly", kind "invoice")? It has run 0 times; its next run, due`) {
		t.Errorf("the confirmation asks %q", question)
	}
	if _, ok, _ := sc.Get(ctx, "weekly-cleanup"); !ok {
		t.Fatal("weekly-cleanup gone before the confirmation")
	}
	if err := chromedp.Do(bctx, chromedp.Click(chromedp.CSS(`.confirm button`)), chromedp.WaitVisible(chromedp.CSS(`.msg.done`))); err != nil {
		t.Fatal(err)
	}
	if done := run(t, bctx, chromedp.Text(chromedp.CSS(`.msg.done`))); done != `Removed schedule "weekly-cleanup".` {
		t.Errorf("after Remove the page says %q", done)
	}
	if _, ok, _ := sc.Get(ctx, "weekly-cleanup"); ok {
		t.Error("weekly-cleanup still there after the confirmed Remove")
	}
}
