package dashboard_test

import (
	"context"
	"errors"
	"fmt"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/timewheel/timewheel/durable"
	"github.com/timewheel/timewheel/durable/dashboard"
	"github.com/timewheel/timewheel/durable/internal/listcursor"
	"github.com/timewheel/timewheel/internal/redisserver"
)

// kill makes jobs dead on rdb's queue "q": each id of kind "echo", whose
// handler fails quoting the payload, with payload "card=4111".
func kill(t *testing.T, rdb redis.UniversalClient, ids ...string) {
	t.Helper()
	ctx := context.Background()
	w := durable.New(rdb, durable.WithName("q"), durable.WithRetry(1, durable.Exponential(time.Millisecond, time.Millisecond)),
		durable.WithHandler("echo", func(_ context.Context, j durable.Job) error { return errors.New("bad payload " + string(j.Payload)) }))
	defer w.Close(ctx)
	for _, id := range ids {
		w.ScheduleAfter(ctx, id, "echo", 0, []byte("card=4111"))
	}
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		n := 0
		for _, id := range ids {
			if in, ok, _ := w.Lookup(ctx, id); ok && in.State == durable.Dead {
				n++
			}
		}
		if n == len(ids) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the jobs did not die")
		}
	}
}

// follow posts form, follows its 303, and returns the page it leads to.
func (f *fixture) follow(t *testing.T, form url.Values) string {
	t.Helper()
	resp, body := f.post(t, form, sameOrigin...)
	loc := resp.Header.Get("Location")
	if resp.StatusCode != http.StatusSeeOther || !strings.HasPrefix(loc, "?") {
		t.Fatalf("POST %v: %d, Location %q\n%s", form, resp.StatusCode, loc, body)
	}
	_, page := f.get(t, loc[1:])
	return page
}

// hidden returns the form fields of the page's forms whose id64 is id's.
func hiddenID(t *testing.T, page, id string) string {
	t.Helper()
	m := regexp.MustCompile(`name="id64" value="([^"]*)"`).FindAllStringSubmatch(page, -1)
	for _, x := range m {
		if x[1] == dashboard.EncodeID(id) {
			return x[1]
		}
	}
	t.Fatalf("no form with the id64 of %q in the page", id)
	return ""
}

// Defect 1: a dead job whose ID holds a NUL and bytes that are not UTF-8
// is retried, deleted and cancelled from its forms; an action on no job
// says so, not in green.
func TestBinaryIDs(t *testing.T) {
	f := newFixture(t, dashboard.Options{Actions: true})
	a, b := "a\x00\xff\xfeb", "c\x00\xc3("
	kill(t, f.rdb, a, b)
	_, list := f.get(t, "q=q&state=dead")
	page := f.follow(t, url.Values{"q": {"q"}, "action": {"retry"}, "id64": {hiddenID(t, list, a)}, "back": {"dead"}})
	if f.state(t, a) != durable.Pending || !strings.Contains(page, `<p class="msg done" role="status">Retried job &#34;a\x00\xff\xfeb&#34;: due now.</p>`) {
		t.Errorf("retry of %q: state %v, page %s", a, f.state(t, a), page)
	}
	page = f.follow(t, url.Values{"q": {"q"}, "action": {"delete"}, "id64": {hiddenID(t, list, b)}, "back": {"dead"}})
	if f.state(t, b) != 0 || !strings.Contains(page, "Deleted job") {
		t.Errorf("delete of %q: state %v", b, f.state(t, b))
	}
	// Cancel, confirmed, from the job's own page.
	_, jobPage := f.get(t, "q=q&id64="+dashboard.EncodeID(a))
	page = f.follow(t, url.Values{"q": {"q"}, "action": {"cancel"}, "id64": {hiddenID(t, jobPage, a)}, "back": {"job"}, "confirm": {"yes"}})
	if f.state(t, a) != 0 || !strings.Contains(page, "Cancelled job") {
		t.Errorf("cancel of %q: state %v", a, f.state(t, a))
	}
	// The ID as a browser sent it before (U+FFFD for each bad byte)
	// names no job, and the page says so.
	page = f.follow(t, url.Values{"q": {"q"}, "action": {"retry"}, "id": {strings.ToValidUTF8("c\x00\xc3(", "\uFFFD")}})
	if !strings.Contains(page, `<p class="msg none" role="status">No dead job`) || strings.Contains(page, "msg done") {
		t.Errorf("retry of no job: the page does not say nothing was done\n%s", page)
	}
}

// Defect 5: a list with Redis down is a 502 with the error, never an
// empty list; a failed action is the page with the error.
func TestRedisDown(t *testing.T) {
	rs := redisserver.ForTest(t)
	rdb := redis.NewClient(&redis.Options{Addr: rs.Addr})
	defer rdb.Close()
	q := durable.New(rdb, durable.WithName("q"))
	defer q.Close(context.Background())
	q.ScheduleAfter(context.Background(), "a", "k", time.Hour, nil)
	h := dashboard.New(dashboard.Options{Actions: true, Timeout: time.Second}, q)
	rs.Stop()
	for _, path := range []string{"/?q=q&state=dead", "/?q=q&state=running", "/?q=q&id=a"} {
		w := httpGet(h, path)
		body := w.Body.String()
		if w.Code != http.StatusBadGateway || strings.Contains(body, "No dead job") || strings.Contains(body, "No running job") || !strings.Contains(body, `class="msg err"`) {
			t.Errorf("GET %s with Redis down: %d\n%s", path, w.Code, body)
		}
	}
	w := httpPost(h, url.Values{"q": {"q"}, "action": {"retry"}, "id": {"a"}})
	if body := w.Body.String(); w.Code != http.StatusBadGateway || !strings.Contains(body, "<!doctype html>") || !strings.Contains(body, `class="msg err"`) {
		t.Errorf("POST retry with Redis down: %d\n%s", w.Code, body)
	}
}

// Defect 9: the message of the page after an action cannot be made up
// by a link: neither the old done=…&n=… nor a msg without its signature.
func TestMessageNotForgeable(t *testing.T) {
	f := newFixture(t, dashboard.Options{Actions: true})
	for _, q := range []string{
		"q=trial&done=delete-all&n=5000",
		"q=q&done=delete-all&n=5000",
		"q=q&msg=" + url.QueryEscape(fmt.Sprintf("d%d Deleted 5000 jobs.", time.Now().Unix())) + "&sig=AAAA",
		"q=q&msg=" + url.QueryEscape(fmt.Sprintf("d%d Deleted 5000 jobs.", time.Now().Unix())),
	} {
		if _, body := f.get(t, q); strings.Contains(body, "5000") || strings.Contains(body, "Deleted") {
			t.Errorf("?%s: the page shows a made-up message", q)
		}
	}
}

// Defect 2: the running list among 2,000 pending jobs, none running,
// says so on its first page with no next page; the next link's cursor is
// the command's (listcursor).
func TestRunningListAndCursor(t *testing.T) {
	f := newFixture(t, dashboard.Options{PageSize: 2})
	ctx := context.Background()
	for i := range 2000 {
		f.q.ScheduleAfter(ctx, fmt.Sprintf("p%04d", i), "mail", time.Hour, nil)
	}
	_, body := f.get(t, "q=q&state=running")
	if !strings.Contains(body, "No running job.") || strings.Contains(body, `rel="next"`) {
		t.Errorf("running list, none running: no 'No running job.' or a next link\n%s", body)
	}
	_, next, err := f.q.List(ctx, durable.Pending, "", 2)
	if err != nil {
		t.Fatal(err)
	}
	_, body = f.get(t, "q=q&state=pending")
	m := regexp.MustCompile(`<a href="([^"]*)" rel="next">`).FindStringSubmatch(body)
	if m == nil {
		t.Fatal("no next link on the pending list")
	}
	u, _ := url.ParseQuery(strings.TrimPrefix(html.UnescapeString(m[1]), "?"))
	if u.Get("cursor") != listcursor.Encode(next) {
		t.Errorf("next link's cursor %q; want the command's %q", u.Get("cursor"), listcursor.Encode(next))
	}
}

// A 1 KiB ID is cut in the list, and shown whole on the job's page.
func TestLongIDCut(t *testing.T) {
	f := newFixture(t, dashboard.Options{})
	long := strings.Repeat("x", durable.MaxIDLen)
	f.q.ScheduleAfter(context.Background(), long, "mail", 2*time.Hour, nil)
	_, body := f.get(t, "q=q&state=pending")
	if strings.Contains(body, strings.Repeat("x", 65)) || !strings.Contains(body, strings.Repeat("x", 64)+"…") {
		t.Error("the list shows the 1 KiB ID whole")
	}
	if _, body = f.get(t, "q=q&id64="+dashboard.EncodeID(long)); !strings.Contains(body, long) {
		t.Error("the job's page does not show its whole ID")
	}
}

// Cancel, delete all and retry all ask first, on a page whose own form
// posts the action with confirm=yes; a running job's question says it
// runs.
func TestConfirmation(t *testing.T) {
	f := newFixture(t, dashboard.Options{Actions: true})
	ctx := context.Background()
	stop := make(chan struct{})
	w := durable.New(f.rdb, durable.WithName("q"), durable.WithHandler("block", func(ctx context.Context, _ durable.Job) error {
		select {
		case <-stop:
		case <-ctx.Done():
		}
		return nil
	}))
	defer w.Close(ctx)
	defer close(stop)
	w.ScheduleAfter(ctx, "run-1", "block", 0, nil)
	waitState(t, f, "run-1", durable.Running)
	resp, body := f.post(t, url.Values{"q": {"q"}, "action": {"cancel"}, "id64": {dashboard.EncodeID("run-1")}, "back": {"running"}}, sameOrigin...)
	if resp.StatusCode != 200 || !strings.Contains(body, "It is running: its handler&#39;s context is cancelled") || f.state(t, "run-1") != durable.Running {
		t.Fatalf("cancel of a running job, unconfirmed: %d, state %v\n%s", resp.StatusCode, f.state(t, "run-1"), body)
	}
	form := url.Values{}
	for _, m := range regexp.MustCompile(`<input type="hidden" name="([^"]*)" value="([^"]*)">`).FindAllStringSubmatch(body[strings.Index(body, `class="panel confirm"`):], -1) {
		form.Add(m[1], html.UnescapeString(m[2]))
	}
	if form.Get("confirm") != "yes" {
		t.Fatalf("the confirmation form posts %v", form)
	}
	if page := f.follow(t, form); f.state(t, "run-1") != 0 || !strings.Contains(page, "Cancelled job &#34;run-1&#34;.") {
		t.Errorf("cancel confirmed: state %v", f.state(t, "run-1"))
	}
	resp, body = f.post(t, url.Values{"q": {"q"}, "action": {"delete-all"}, "back": {"dead"}}, sameOrigin...)
	if c, _ := f.q.Counts(ctx); resp.StatusCode != 200 || c.Dead != 4 || !strings.Contains(body, "Delete every dead job of every kind, for good? The queue holds 4 dead jobs") {
		t.Errorf("delete-all, unconfirmed: %d, %d dead\n%s", resp.StatusCode, c.Dead, body)
	}
}

func waitState(t *testing.T, f *fixture, id string, want durable.State) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); f.state(t, id) != want; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s not %v", id, want)
		}
	}
}

// With payloads hidden, an error that quotes its job's payload shows
// "[payload hidden]" there; Options.Redact rewrites every error.
func TestRedaction(t *testing.T) {
	f := newFixture(t, dashboard.Options{})
	kill(t, f.rdb, "e-1")
	for _, q := range []string{"q=q&state=dead", "q=q&id=e-1"} {
		if _, body := f.get(t, q); strings.Contains(body, "card=4111") || !strings.Contains(body, "bad payload [payload hidden]") {
			t.Errorf("?%s: the payload shows in the error", q)
		}
	}
	g := newFixtureOn(t, f, dashboard.Options{Redact: func(s string) string { return strings.ReplaceAll(s, "no such user", "[user]") }})
	if _, body := g.get(t, "q=q&id=mail-1"); strings.Contains(body, "no such user") || !strings.Contains(body, "smtp: 550 [user] mail-1") {
		t.Error("Options.Redact did not rewrite the error")
	}
}
