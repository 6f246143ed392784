package browsertest

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/redis/go-redis/v9"

	"github.com/timewheel/timewheel/durable"
	"github.com/timewheel/timewheel/durable/dashboard"
	"github.com/timewheel/timewheel/durable/internal/store"
)

// The workers, history, kinds and attempts pages in a real browser, each
// with what it must show and no script; it takes their screenshots for
// docs/durable.md. The shop's orders queue gets an hour of history
// written as its workers would have (a worker died 35 minutes ago, and
// its jobs waited for their leases), and a worker that died 9 s ago
// holding ship-1032; a payments queue's worker kills a job after three
// attempts.
func TestObservePagesInBrowser(t *testing.T) {
	exe := chromium(t)
	s := newShop(t)
	ctx := context.Background()
	seedHistory(t, s.rdb, "orders")
	seedGoneWorker(t, s.rdb)
	var tries atomic.Int32
	pay := durable.New(s.rdb, durable.WithName("payments"), durable.WithWorkerID("pay-1:3090:x1"),
		durable.WithRetry(3, durable.Exponential(time.Millisecond, time.Millisecond)),
		durable.WithHandler("capture", func(context.Context, durable.Job) error {
			if tries.Add(1) < 3 {
				return errors.New("psp: gateway timeout after 10s (upstream 504)")
			}
			return errors.New("psp: card declined (code 402): insufficient funds")
		}))
	t.Cleanup(func() { pay.Close(context.Background()) })
	pay.ScheduleAfter(ctx, "capture-2207", "capture", 0, []byte(`{"order":2207}`))
	s.waitCounts(t, pay, func(c durable.Counts) bool { return c.Dead == 1 })
	waitBeat(t, s.orders, 2)

	srv := httptest.NewServer(dashboard.New(dashboard.Options{}, s.orders, s.emails, pay))
	defer srv.Close()
	b := browser(t, exe)
	for _, p := range []struct {
		query, wait, png string
		want             []string
	}{
		{"q=orders&view=workers", "#workers", "durable-dashboard-workers.png", []string{"gone", "live", "runs again then", "ship-1030", "ship-1031", "ship-1032"}},
		{"q=orders&view=history&span=hour", "#history svg", "durable-dashboard-history.png", []string{"Attempts a minute", "lateness p99", "died"}},
		{"q=orders&view=kinds", "#kinds", "durable-dashboard-kinds.png", []string{"charge", "cancel-unpaid", "ship"}},
		{"q=payments&id=capture-2207", ".attempts", "durable-dashboard-attempts.png", []string{"Past attempts", "gateway timeout", "card declined", "died"}},
	} {
		if err := chromedp.Do(b, chromedp.Navigate(srv.URL+"/?"+p.query), chromedp.WaitVisible(chromedp.CSS(p.wait))); err != nil {
			t.Fatalf("?%s: %v", p.query, err)
		}
		text := run(t, b, chromedp.Text(chromedp.CSS(`main`)))
		for _, w := range p.want {
			if !strings.Contains(text, w) {
				t.Errorf("?%s: no %q in\n%s", p.query, w, text)
			}
		}
		if n := run(t, b, chromedp.Evaluate[int](`document.querySelectorAll('script').length`)); n != 0 {
			t.Errorf("?%s: %d scripts", p.query, n)
		}
		keep(t, p.png, run(t, b, chromedp.FullScreenshot(100)))
	}
}

// waitBeat waits until a live worker of q has sent a heartbeat, not its
// first, that shows running attempts: its first comes before its jobs
// start, and has no start time.
func waitBeat(t *testing.T, q *durable.Queue, running int) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		ws, _, err := q.Workers(context.Background(), 10)
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range ws {
			if !w.Gone && !w.Closed && w.Running == running && !w.Started.IsZero() {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no live worker of %s with %d running attempts in its heartbeat: %+v", q.Name(), running, ws)
		}
	}
}

// seedHistory writes an hour of figures for queue name's kinds, a
// minute at a time, as the workers' flushes would have: ship and charge
// at about 1,000 and 200 starts a minute, lateness mostly under 5 ms;
// 35 to 31 minutes ago a worker died, so that its jobs waited for their
// leases (5 s) and a retry storm failed charges.
func seedHistory(t *testing.T, rdb *redis.Client, name string) {
	t.Helper()
	st := store.Open(rdb, store.Replication{})
	defer st.Close()
	k := store.NewKeys("{" + name + "}:")
	now, err := rdb.Time(context.Background()).Result()
	if err != nil {
		t.Fatal(err)
	}
	nb := len(durable.LatenessBounds()) + 1
	for m := 60; m >= 1; m-- {
		at := now.Add(-time.Duration(m) * time.Minute)
		wave := 1 + 0.25*math.Sin(float64(m)/6)
		storm := m >= 31 && m <= 35
		figs := map[string][]int64{}
		for _, kind := range []string{"ship", "charge", "cancel-unpaid"} {
			rate := map[string]float64{"ship": 1000, "charge": 220, "cancel-unpaid": 40}[kind] * wave
			f := make([]int64, store.Figures+nb)
			f[store.Started] = int64(rate)
			fail := int64(rate * 0.01)
			died := int64(0)
			if kind == "charge" && storm {
				fail, died = int64(rate*0.3), int64(rate*0.05)
			}
			f[store.FailedN], f[store.Retried], f[store.Died] = fail, fail-died, died
			f[store.Succeeded] = f[store.Started] - fail
			b := f[store.Figures:]
			b[0], b[1], b[2] = f[store.Started]*6/10, f[store.Started]*3/10, f[store.Started]/10-2
			b[4], b[6] = 1, 1
			f[store.LateMax] = int64(60_000 + 9_000*m%40_000)
			if storm {
				b[0], b[10], b[11] = b[0]-40, 30, 10 // waited for a lease of 5 s
				f[store.LateMax] = 4_100_000 + int64(m)*13_000
			}
			figs[kind] = f
		}
		if err := st.Record(context.Background(), k, at.UnixMicro(), figs); err != nil {
			t.Fatal(err)
		}
	}
}

// seedGoneWorker writes a worker of orders whose heartbeats stopped 9 s
// ago, holding ship-1032 under a lease that ends in 21 s.
func seedGoneWorker(t *testing.T, rdb *redis.Client) {
	t.Helper()
	ctx := context.Background()
	now, err := rdb.Time(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	w := "web-3:2231:k2f9"
	beat := now.Add(-9 * time.Second).UnixMicro()
	us := func(t int64) string { return strconv.FormatInt(t, 10) }
	rdb.ZAdd(ctx, "{orders}:procs", redis.Z{Score: float64(beat), Member: w})
	rdb.HSet(ctx, "{orders}:proc:"+w, "beat", beat, "host", "web-3", "pid", 2231, "every", 2_000_000, "conc", 64, "shards", 1,
		"kinds", "cancel-unpaid\x1fcharge\x1fship", "running", 1, "held", 0, "started", us(now.Add(-47*time.Minute).UnixMicro()),
		"jobs", fmt.Sprintf("ship-1032\x1fship\x1f1\x1f%d\x1f0", beat-1_400_000))
	rdb.HSet(ctx, "{orders}:job", "ship-1032", "ship\x00"+`{"carrier":"dhl"}`)
	rdb.HSet(ctx, "{orders}:run", "ship-1032", "1|"+w+"|"+us(beat-1_400_000))
	end := float64(now.Add(21 * time.Second).UnixMicro())
	rdb.ZAdd(ctx, "{orders}:due", redis.Z{Score: end, Member: "ship-1032"})
	rdb.ZAdd(ctx, "{orders}:lease", redis.Z{Score: end, Member: "ship-1032"})
}
