package main

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/timewheel/timewheel/durable"
	"github.com/timewheel/timewheel/internal/redisserver"
)

// workers, history, kinds and inspect's attempts, on a queue whose
// worker killed a job and closed.
func TestObserveCommands(t *testing.T) {
	srv := redisserver.ForTest(t)
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr})
	defer rdb.Close()
	ctx := context.Background()
	q := durable.New(rdb, durable.WithName("cli"), durable.WithWorkerID("web-1"), durable.WithRetry(2, durable.Exponential(time.Millisecond, time.Millisecond)),
		durable.WithHandler("charge", func(context.Context, durable.Job) error { return errors.New("card declined") }))
	q.ScheduleAfter(ctx, "charge-1", "charge", 0, nil)
	for !strings.Contains(must(t, srv.Addr, "list", "dead"), "charge-1") {
		time.Sleep(10 * time.Millisecond)
	}
	q.ScheduleAfter(ctx, "charge-2", "charge", time.Hour, nil)
	if out := must(t, srv.Addr, "workers"); !strings.Contains(out, "web-1") || !strings.Contains(out, "live") || !strings.Contains(out, "charge") {
		t.Errorf("workers:\n%s", out)
	}
	q.Close(ctx)
	if out := must(t, srv.Addr, "workers"); !strings.Contains(out, "closed") {
		t.Errorf("workers after Close:\n%s", out)
	}
	out := must(t, srv.Addr, "history", "-kind", "charge")
	if !strings.Contains(out, "STARTED") || !hasRow(out, "total, 15 minutes 2 0 2 1 1") {
		t.Errorf("history -kind charge:\n%s", out)
	}
	if out := must(t, srv.Addr, "history", "-hourly", "-last", "3", "-all"); strings.Count(out, "\n") != 5 {
		t.Errorf("history -hourly -last 3 -all: not a head, 3 rows and a total:\n%s", out)
	}
	if out := must(t, srv.Addr, "kinds"); !hasRow(out, "charge 1 0 1") {
		t.Errorf("kinds:\n%s", out)
	}
	out = must(t, srv.Addr, "inspect", "charge-1")
	if !strings.Contains(out, "#1") || !strings.Contains(out, "failed on web-1") || !strings.Contains(out, "died on web-1") || !strings.Contains(out, "card declined") {
		t.Errorf("inspect's attempts:\n%s", out)
	}
	if code, _, _ := durableCmd(t, srv.Addr, "history", "-last", "0"); code != 2 {
		t.Errorf("history -last 0: exit %d; want 2", code)
	}
	if code, _, _ := durableCmd(t, srv.Addr, "workers", "-limit", "0"); code != 2 {
		t.Errorf("workers -limit 0: exit %d; want 2", code)
	}

	// -o json: the same figures.
	var ws workersJSON
	if err := json.Unmarshal([]byte(must(t, srv.Addr, "-o", "json", "workers")), &ws); err != nil || len(ws.Workers) != 1 ||
		ws.Workers[0].ID != "web-1" || ws.Workers[0].State != "closed" || ws.Workers[0].Kinds[0] != "charge" || ws.RedisTime == "" {
		t.Errorf("workers -o json = %+v, %v", ws, err)
	}
	var h historyJSON
	if err := json.Unmarshal([]byte(must(t, srv.Addr, "history", "-kind", "charge", "-o", "json")), &h); err != nil || len(h.Points) != 15 ||
		h.Kind != "charge" || h.Total.Started != 2 || h.Total.Retried != 1 || h.Total.Died != 1 || h.Total.LateP50Sec == nil || h.Points[0].LateP50Sec != nil {
		t.Errorf("history -kind charge -o json = %+v, %v", h, err)
	}
	var kc kindsJSON
	if err := json.Unmarshal([]byte(must(t, srv.Addr, "kinds", "-o", "json")), &kc); err != nil || len(kc.Kinds) != 1 ||
		kc.Kinds[0] != (kindJSON{"charge", 1, 0, 1}) || kc.Counted != 2 || kc.Jobs != 2 {
		t.Errorf("kinds -o json = %+v, %v", kc, err)
	}
	var in inspectJSON
	if err := json.Unmarshal([]byte(must(t, srv.Addr, "-o", "json", "inspect", "charge-1")), &in); err != nil || in.ID != "charge-1" || len(in.Attempts) != 2 ||
		in.Attempts[0].Died || !in.Attempts[1].Died || in.Attempts[1].Worker != "web-1" || in.Attempts[1].Error != "card declined" {
		t.Errorf("inspect -o json = %+v, %v", in, err)
	}
}

// hasRow reports whether a line of out has the fields of row.
func hasRow(out, row string) bool {
	for line := range strings.Lines(out) {
		if strings.HasPrefix(strings.Join(strings.Fields(line), " "), row) {
			return true
		}
	}
	return false
}
