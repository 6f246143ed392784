package browsertest

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"flag"
	"fmt"
	"image/png"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/redis/go-redis/v9"

	"github.com/timewheel/timewheel/durable"
	"github.com/timewheel/timewheel/durable/dashboard"
	"github.com/timewheel/timewheel/internal/redisserver"
)

var screenshots = flag.String("screenshots", "", "also write the dashboard's screenshots to this directory (PNG): durable-dashboard.png, the dead jobs, durable-dashboard-overview.png, the workers, history, kinds and attempts pages (durable-dashboard-workers.png ...) and durable-dashboard-schedules.png; docs/'s are made with -screenshots ../../../docs")

// chromium returns the path of the machine's chromium, or skips the test
// (fails it where CI is set: there the browser test must run).
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{os.Getenv("CHROMIUM"), "chromium", "chromium-browser", "google-chrome"} {
		if name == "" {
			continue
		}
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	msg := "no chromium on PATH (nor $CHROMIUM): install it (Debian, Ubuntu: apt-get install -y chromium) to run the dashboard's browser test"
	if os.Getenv("CI") != "" {
		t.Fatalf("%s; CI is set, so it must run", msg)
	}
	t.Skip(msg)
	return ""
}

// browser starts a headless chromium for the test, and returns a context
// of one tab in it, for actions of at most 90 s in all; the browser stops
// when the test ends.
func browser(t *testing.T, exe string) context.Context {
	t.Helper()
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(exe),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.UserDataDir(t.TempDir()),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.WindowSize(1280, 900),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelTab := chromedp.NewContext(actx)
	t.Cleanup(func() { cancelTab(); cancelAlloc() })
	// The first call starts the browser, on a context without a deadline:
	// the deadline would stop the browser.
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("starting %s: %v", exe, err)
	}
	ctx, cancelTime := context.WithTimeout(ctx, 90*time.Second)
	t.Cleanup(cancelTime)
	return ctx
}

// shop is a redis-server holding two queues as a shop's would be at a
// bad moment: "orders", whose worker runs a few jobs now and has seen
// some die, and "emails", whose worker is down and one of whose kinds is
// paused, so that its jobs wait.
type shop struct {
	rdb            *redis.Client
	orders, emails *durable.Queue
	fixed          atomic.Bool // the charge handler's bug is fixed: it succeeds
	mu             sync.Mutex
	charged        map[string]int // guarded by mu: runs of the charge handler by ID
}

// markup is a hostile job's ID and payload.
const markup = `<script>alert("owned")</script><img src=x onerror=alert(2)>`

func newShop(t *testing.T) *shop {
	t.Helper()
	rs := redisserver.ForTest(t)
	s := &shop{rdb: redis.NewClient(&redis.Options{Addr: rs.Addr}), charged: map[string]int{}}
	t.Cleanup(func() { s.rdb.Close() })
	ctx := context.Background()
	release := make(chan struct{})
	s.orders = durable.New(s.rdb, durable.WithName("orders"), durable.WithRetry(1, durable.Exponential(time.Millisecond, time.Millisecond)),
		durable.WithHandler("charge", func(_ context.Context, j durable.Job) error {
			s.mu.Lock()
			s.charged[j.ID]++
			s.mu.Unlock()
			if s.fixed.Load() {
				return nil
			}
			return fmt.Errorf("payments: card declined (code 402) for %s", j.Payload)
		}),
		durable.WithHandler("cancel-unpaid", func(context.Context, durable.Job) error { return errors.New("orders: row locked: deadline exceeded") }),
		durable.WithHandler("ship", func(ctx context.Context, _ durable.Job) error {
			select {
			case <-release:
			case <-ctx.Done():
			}
			return nil
		}))
	t.Cleanup(func() {
		close(release)
		s.orders.Close(context.Background())
	})
	for i, amount := range []string{"EUR 12.00", "EUR 99.90", "EUR 7.50"} {
		s.orders.ScheduleAfter(ctx, fmt.Sprintf("charge-%d", 1041+i), "charge", 0, []byte(fmt.Sprintf(`{"order":%d,"amount":"%s"}`, 1041+i, amount)))
	}
	s.orders.ScheduleAfter(ctx, "cancel-1038", "cancel-unpaid", 0, []byte(`{"order":1038}`))
	s.orders.ScheduleAfter(ctx, markup, "charge", 0, []byte(markup))
	for i := range 2 {
		s.orders.ScheduleAfter(ctx, fmt.Sprintf("ship-%d", 1030+i), "ship", 0, []byte(`{"carrier":"dhl"}`))
	}
	for i := range 12 {
		s.orders.ScheduleAfter(ctx, fmt.Sprintf("cancel-%d", 1050+i), "cancel-unpaid", time.Duration(5+i)*time.Minute, []byte(fmt.Sprintf(`{"order":%d}`, 1050+i)))
	}
	s.emails = durable.New(s.rdb, durable.WithName("emails"))
	t.Cleanup(func() { s.emails.Close(context.Background()) })
	for i := range 3 {
		s.emails.Schedule(ctx, fmt.Sprintf("welcome-%d", 77+i), "welcome", time.Now().Add(-time.Duration(3-i)*time.Second), []byte("user=77"))
	}
	for i := range 40 {
		s.emails.ScheduleAfter(ctx, fmt.Sprintf("reminder-%d", i), "reminder", time.Duration(i+1)*time.Hour, nil)
	}
	if err := s.emails.Pause(ctx, "welcome"); err != nil {
		t.Fatal(err)
	}
	s.waitCounts(t, s.orders, func(c durable.Counts) bool { return c.Dead == 5 && c.Running == 2 })
	return s
}

// waitCounts waits until q's Counts satisfy ok.
func (s *shop) waitCounts(t *testing.T, q *durable.Queue, ok func(durable.Counts) bool) durable.Counts {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		c, err := q.Counts(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if ok(c) {
			return c
		}
		if time.Now().After(deadline) {
			t.Fatalf("Counts of %s = %+v, not as the test waits for", q.Name(), c)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// The dashboard in a real browser: the page shows the queues' figures
// and the dead jobs with their errors, a hostile job as text that runs
// nothing; a click on a dead job's Retry button runs it again (its bug
// fixed) and it leaves Redis; a form posted to the dashboard from
// another site's page is refused and changes nothing; a job is found by
// its ID. It takes the screenshots of docs/durable.md.
func TestDashboardInBrowser(t *testing.T) {
	exe := chromium(t)
	s := newShop(t)
	srv := httptest.NewServer(dashboard.New(dashboard.Options{Actions: true, Payloads: true}, s.orders, s.emails))
	defer srv.Close()
	ctx := browser(t, exe)
	var dialogs atomic.Int32
	if err := chromedp.Listen(ctx, func(ev any) {
		if _, ok := ev.(*page.EventJavascriptDialogOpening); ok {
			dialogs.Add(1)
		}
	}); err != nil {
		t.Fatal(err)
	}

	// The overview: both queues, the emails waiting.
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/"), chromedp.WaitVisible(chromedp.CSS(`#queue-emails`))); err != nil {
		t.Fatal(err)
	}
	overview := run(t, ctx, chromedp.Text(chromedp.CSS(`main`)))
	keep(t, "durable-dashboard-overview.png", run(t, ctx, chromedp.FullScreenshot(100)))
	for _, want := range []string{"orders", "emails", "5\ndead", "2\nrunning", "3\ndue, not yet claimed", "Paused: kind welcome"} {
		if !strings.Contains(overview, want) {
			t.Errorf("overview: no %q in\n%s", want, overview)
		}
	}

	// The dead jobs of orders: errors, payloads, the hostile job as text.
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/?q=orders&state=dead"), chromedp.WaitVisible(chromedp.CSS(`table`))); err != nil {
		t.Fatal(err)
	}
	dead := run(t, ctx, chromedp.Text(chromedp.CSS(`table`)))
	for _, want := range []string{"charge-1042", "payments: card declined (code 402) for {\"order\":1042,\"amount\":\"EUR 99.90\"}", "orders: row locked", markup} {
		if !strings.Contains(dead, want) {
			t.Errorf("dead jobs: no %q in\n%s", want, dead)
		}
	}
	scripts := run(t, ctx, chromedp.Evaluate[int](`document.querySelectorAll('script').length`))
	images := run(t, ctx, chromedp.Evaluate[int](`document.querySelectorAll('img').length`))
	if scripts != 0 || images != 0 || dialogs.Load() != 0 {
		t.Errorf("the hostile job became markup: %d scripts, %d images, %d dialogs", scripts, images, dialogs.Load())
	}
	keep(t, "durable-dashboard.png", run(t, ctx, chromedp.FullScreenshot(100)))

	// Click Retry on charge-1042, its bug fixed: it runs once more and
	// leaves the store; the page says so.
	s.fixed.Store(true)
	if err := chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(`form:has(input[name=id64][value="`+id64("charge-1042")+`"]) button[value=retry]`)),
		chromedp.WaitVisible(chromedp.CSS(`.msg.done`)),
	); err != nil {
		t.Fatal(err)
	}
	if done := run(t, ctx, chromedp.Text(chromedp.CSS(`.msg.done`))); done != `Retried job "charge-1042": due now.` {
		t.Errorf("after Retry the page says %q", done)
	}
	s.waitCounts(t, s.orders, func(c durable.Counts) bool { return c.Dead == 4 })
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, ok, err := s.orders.Lookup(context.Background(), "charge-1042")
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("charge-1042 still in Redis after its retry")
		}
		time.Sleep(10 * time.Millisecond)
	}
	s.mu.Lock()
	runs := s.charged["charge-1042"]
	s.mu.Unlock()
	if runs != 2 {
		t.Errorf("charge-1042 ran %d times; want 2 (the failure, the retry)", runs)
	}

	// Find a job by its ID from the overview's form.
	if err := chromedp.Do(ctx,
		chromedp.Navigate(srv.URL+"/"),
		chromedp.SendKeys(chromedp.CSS(`#queue-orders form.find input[name=id]`), "cancel-1038"),
		chromedp.Click(chromedp.CSS(`#queue-orders form.find button`)),
		chromedp.WaitVisible(chromedp.CSS(`.badge.dead`)),
	); err != nil {
		t.Fatal(err)
	}
	if job := run(t, ctx, chromedp.Text(chromedp.CSS(`main`))); !strings.Contains(job, "Job cancel-1038") || !strings.Contains(job, "orders: row locked: deadline exceeded") {
		t.Errorf("the job found by its ID:\n%s", job)
	}

	// A dead job whose ID holds a NUL and a byte that is not UTF-8: its
	// Retry button retries it, and the page says so.
	bin := "cancel-\x00\xff-1039"
	s.orders.ScheduleAfter(context.Background(), bin, "cancel-unpaid", 0, nil)
	s.waitCounts(t, s.orders, func(c durable.Counts) bool { return c.Dead == 5 })
	if err := chromedp.Do(ctx,
		chromedp.Navigate(srv.URL+"/?q=orders&state=dead"),
		chromedp.Click(chromedp.CSS(`form:has(input[name=id64][value="`+id64(bin)+`"]) button[value=retry]`)),
		chromedp.WaitVisible(chromedp.CSS(`.msg.done`)),
	); err != nil {
		t.Fatal(err)
	}
	if done := run(t, ctx, chromedp.Text(chromedp.CSS(`.msg.done`))); done != `Retried job "cancel-\x00\xff-1039": due now.` {
		t.Errorf("after Retry of a job of a binary ID the page says %q", done)
	}

	// Cancel of a running job asks first, on a page with no script; its
	// Yes button cancels it.
	if err := chromedp.Do(ctx,
		chromedp.Navigate(srv.URL+"/?q=orders&state=running"),
		chromedp.Click(chromedp.CSS(`form:has(input[name=id64][value="`+id64("ship-1030")+`"]) button[value=cancel]`)),
		chromedp.WaitVisible(chromedp.CSS(`.confirm`)),
	); err != nil {
		t.Fatal(err)
	}
	if q := run(t, ctx, chromedp.Text(chromedp.CSS(`.confirm p`))); !strings.Contains(q, `Cancel job "ship-1030"? It is running`) {
		t.Errorf("the confirmation asks %q", q)
	}
	if in, _, _ := s.orders.Lookup(context.Background(), "ship-1030"); in.State != durable.Running {
		t.Errorf("ship-1030 before the confirmation: %v", in.State)
	}
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`.confirm button`)), chromedp.WaitVisible(chromedp.CSS(`.msg.done`))); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := s.orders.Lookup(context.Background(), "ship-1030"); ok {
		t.Error("ship-1030 still there after the confirmed cancel")
	}

	// Another site's page posts a forged form to the dashboard as soon as
	// it loads: the browser sends it (Sec-Fetch-Site: cross-site), the
	// dashboard refuses it, and charge-1043 stays dead.
	evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<!doctype html><body onload="document.forms[0].submit()">
<form method="post" action="%s/"><input name="q" value="orders"><input name="action" value="retry"><input name="id" value="charge-1043"></form>`, srv.URL)
	}))
	defer evil.Close()
	evilURL := strings.Replace(evil.URL, "127.0.0.1", "localhost", 1) // another site, not only another port
	if err := chromedp.Do(ctx, chromedp.Navigate(evilURL+"/")); err != nil {
		t.Fatal(err)
	}
	var body string
	deadline = time.Now().Add(20 * time.Second)
	for !strings.Contains(body, "cross-origin request refused") {
		if time.Now().After(deadline) {
			t.Fatalf("the forged form's page: %q", body)
		}
		time.Sleep(50 * time.Millisecond)
		body, _ = chromedp.Run(ctx, chromedp.Evaluate[string](`document.body ? document.body.innerText : ""`))
	}
	if in, ok, err := s.orders.Lookup(context.Background(), "charge-1043"); err != nil || !ok || in.State != durable.Dead {
		t.Errorf("charge-1043 after the forged form: %+v, %v, %v; want it dead", in, ok, err)
	}
}

// id64 is a job's ID as the page's forms carry it.
func id64(id string) string { return base64.RawURLEncoding.EncodeToString([]byte(id)) }

// keep checks that shot is a PNG of a page's size, and writes it to
// -screenshots/name if the flag is set.
func keep(t *testing.T, name string, shot []byte) {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(shot))
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	if size := img.Bounds().Size(); size.X < 1000 || size.Y < 400 {
		t.Fatalf("screenshot %s: %v, not a page's size", name, size)
	}
	if *screenshots == "" {
		return
	}
	path := filepath.Join(*screenshots, name)
	if err := os.WriteFile(path, shot, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %s (%v)", path, img.Bounds().Size())
}

// run runs a, failing the test on an error.
func run[T any](t *testing.T, ctx context.Context, a chromedp.Action[T]) T {
	t.Helper()
	v, err := chromedp.Run(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	return v
}
