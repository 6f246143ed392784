package durable_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/timewheel/timewheel/durable"
)

// What the pages show beside the jobs, from a worker that runs them: its
// heartbeat in the registry with the job it runs, and once it closed,
// closed; a worker whose heartbeat stopped shown as gone, with the job
// it held and when its lease ends; the history of the attempts, by kind
// and for the queue; a dead job's attempts; the jobs by kind and state.
func TestObserve(t *testing.T) {
	srv := startRedis(t)
	rdb := newClient(t, srv.Addr)
	ctx := context.Background()
	release := make(chan struct{})
	q := durable.New(rdb, durable.WithName("obs"), durable.WithWorkerID("w1"), durable.WithConcurrency(4),
		durable.WithRetry(2, durable.Exponential(time.Millisecond, time.Millisecond)),
		durable.WithHandler("ok", func(context.Context, durable.Job) error { return nil }),
		durable.WithHandler("bad", func(context.Context, durable.Job) error { return errors.New("card declined") }),
		durable.WithHandler("hold", func(ctx context.Context, _ durable.Job) error {
			select {
			case <-release:
			case <-ctx.Done():
			}
			return nil
		}))
	defer q.Close(ctx)
	view := newQueue(t, rdb, durable.WithName("obs"))
	for i := range 3 {
		q.ScheduleAfter(ctx, fmt.Sprint("ok-", i), "ok", 0, nil)
	}
	q.ScheduleAfter(ctx, "bad-1", "bad", 0, nil)
	q.ScheduleAfter(ctx, "hold-1", "hold", 0, nil)
	q.ScheduleAfter(ctx, "later", "ok", time.Hour, nil)

	var ws []durable.WorkerInfo
	waitFor(t, 10*time.Second, "a heartbeat that lists hold-1", func() bool {
		var err error
		ws, _, err = view.Workers(ctx, 10)
		return err == nil && len(ws) == 1 && len(ws[0].Jobs) == 1 && ws[0].Jobs[0].ID == "hold-1"
	})
	if w := ws[0]; w.ID != "w1" || w.Gone || w.Closed || w.Concurrency != 4 || w.Running != 1 || fmt.Sprint(w.Kinds) != "[bad hold ok]" || w.Started.IsZero() {
		t.Errorf("Workers = %+v", w)
	}

	var all, bad durable.Point
	waitFor(t, 10*time.Second, "the history of 6 starts", func() bool {
		ps, err := view.History(ctx, "", false)
		all = durable.Sum(ps)
		return err == nil && len(ps) == 1440 && all.Started == 6 && all.Succeeded == 3 && all.Failed == 2
	})
	if all.Retried != 1 || all.Died != 1 || all.Quantile(1) <= 0 || all.LateMax <= 0 {
		t.Errorf("the queue's history: %+v", all)
	}
	ps, err := view.History(ctx, "bad", true)
	if bad = durable.Sum(ps); err != nil || len(ps) != 720 || bad.Started != 2 || bad.Died != 1 || bad.Succeeded != 0 {
		t.Errorf("bad's hours: %d points, %+v, %v", len(ps), bad, err)
	}
	if ks, err := view.HistoryKinds(ctx, 10); err != nil || len(ks) != 3 {
		t.Errorf("HistoryKinds = %v, %v", ks, err)
	}

	info, _, err := view.Lookup(ctx, "bad-1")
	if err != nil || info.State != durable.Dead {
		t.Fatalf("bad-1: %+v, %v", info, err)
	}
	as, err := view.Attempts(ctx, "bad-1", info)
	if err != nil || len(as) != 2 || as[0].Died || !as[1].Died || as[1].Worker != "w1" || as[1].Err != "card declined" || as[1].Ended.Before(as[1].Started) {
		t.Errorf("Attempts(bad-1) = %+v, %v", as, err)
	}

	kc, err := view.KindCounts(ctx)
	want := []durable.KindCount{{Kind: "bad", Dead: 1}, {Kind: "hold", Running: 1}, {Kind: "ok", Pending: 1}}
	if err != nil || fmt.Sprint(kc.Kinds) != fmt.Sprint(want) || kc.Counted != 3 || kc.Jobs != 3 {
		t.Errorf("KindCounts = %+v, %v; want %v", kc, err, want)
	}
	if js, _, err := view.ListKind(ctx, durable.Pending, "ok", "", 10); err != nil || len(js) != 1 || js[0].ID != "later" {
		t.Errorf("ListKind(pending, ok) = %v, %v", js, err)
	}

	// A worker that died a minute ago holding gone-1, whose lease ends
	// in 4 s: gone, with the job and when it runs again.
	now, _ := rdb.Time(ctx).Result()
	beat, end := now.Add(-time.Minute).UnixMicro(), now.Add(4*time.Second).UnixMicro()
	rdb.ZAdd(ctx, "{obs}:procs", redis.Z{Score: float64(beat), Member: "w0"})
	rdb.HSet(ctx, "{obs}:proc:w0", "beat", beat, "every", 2_000_000, "jobs", "gone-1\x1fhold\x1f1\x1f"+strconv.FormatInt(beat, 10)+"\x1f0")
	rdb.HSet(ctx, "{obs}:job", "gone-1", "hold\x00")
	rdb.HSet(ctx, "{obs}:run", "gone-1", "1|w0|"+strconv.FormatInt(beat, 10))
	rdb.ZAdd(ctx, "{obs}:due", redis.Z{Score: float64(end), Member: "gone-1"})
	ws, _, err = view.Workers(ctx, 10)
	if err != nil || len(ws) != 2 || !ws[1].Gone || ws[1].ID != "w0" || len(ws[1].Jobs) != 1 || !ws[1].Jobs[0].Held || ws[1].Jobs[0].Again.UnixMicro() != end {
		t.Errorf("Workers with w0 dead = %+v, %v", ws, err)
	}
	rdb.HDel(ctx, "{obs}:job", "gone-1")
	rdb.ZRem(ctx, "{obs}:due", "gone-1")

	close(release)
	if err := q.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if ws, _, err = view.Workers(ctx, 10); err != nil || ws[0].ID != "w1" || !ws[0].Closed || ws[0].Gone || ws[0].Running != 0 {
		t.Errorf("Workers after Close = %+v, %v", ws, err)
	}
}
