package store_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/timewheel/timewheel/durable/internal/store"
)

// fail keeps a record of each failed attempt, the last MaxTries, the
// error cut and its separators made spaces; ack, cancel and dead's
// delete drop a job's records.
func TestScriptTries(t *testing.T) {
	servers(t, func(e *env) {
		e.rdb.Del(e.ctx, e.k.Tries())
		t.Cleanup(func() { e.rdb.Del(e.ctx, e.k.Tries()) })
		now := e.now()
		for a := 1; a <= store.MaxTries+2; a++ {
			tok := e.lease("a", "w1", a, now, now+lease)
			last := a == store.MaxTries+2
			f, err := e.st.Fail(e.ctx, e.k, store.FailArgs{ID: "a", Token: tok, Attempts: store.MaxTries + 2, Backoff: 1, Err: fmt.Sprintf("e%d\x1e\x1f%s", a, strings.Repeat("x", 400)), Worker: "w1", Started: now - 5})
			if err != nil || f.Dead != last {
				t.Fatalf("Fail of attempt %d = %+v, %v", a, f, err)
			}
		}
		tries, err := e.st.Tries(e.ctx, e.k, "a")
		if err != nil || len(tries) != store.MaxTries {
			t.Fatalf("Tries = %d records, %v; want %d", len(tries), err, store.MaxTries)
		}
		first, last := tries[0], tries[len(tries)-1]
		if first.Attempt != 3 || last.Attempt != store.MaxTries+2 || !last.Died || first.Died || last.Worker != "w1" || last.Started != now-5 || last.Ended < now {
			t.Errorf("Tries: first %+v, last %+v", first, last)
		}
		if want := fmt.Sprintf("e%d  ", store.MaxTries+2); !strings.HasPrefix(last.Err, want) || len(last.Err) != store.MaxTryErr {
			t.Errorf("the last error %.20q… of %d bytes; want %q… of %d", last.Err, len(last.Err), want, store.MaxTryErr)
		}
		if _, err := e.st.Dead(e.ctx, e.k, false, []string{"a"}); err != nil {
			t.Fatal(err)
		}
		for _, id := range []string{"b", "c"} {
			tok := e.lease(id, "w1", 1, now, now+lease)
			if _, err := e.st.Fail(e.ctx, e.k, store.FailArgs{ID: id, Token: tok, Attempts: 3, Backoff: 1, Err: "e", Worker: "w1", Started: now}); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := e.st.Cancel(e.ctx, e.k, "b"); err != nil {
			t.Fatal(err)
		}
		tok := e.lease("c", "w1", 2, now, now+lease)
		if _, err := e.st.Ack(e.ctx, e.k, "w1", []store.Held{{ID: "c", Token: tok}}); err != nil {
			t.Fatal(err)
		}
		if n := e.rdb.HLen(e.ctx, e.k.Tries()).Val(); n != 0 {
			t.Errorf("{name}:tries holds %d fields after the jobs were deleted, cancelled and acked", n)
		}
	})
}
