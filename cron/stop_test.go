package cron_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/timewheel/timewheel/cron"
)

func TestStopWaits(t *testing.T) {
	f := newGoroutineFixture(t, time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	started := make(chan struct{})
	j, _ := f.s.Add("stubborn", "@every 1m", func(ctx context.Context, _ time.Time) {
		close(started)
		<-ctx.Done() // returns only when Stop gives up
	})
	f.clk.Advance(time.Minute)
	<-started
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := f.s.Stop(ctx)
	if !errors.Is(err, context.Canceled) || !strings.HasPrefix(err.Error(), "cron: Stop: 1 runs still going") {
		t.Fatalf("Stop with a done context: %v", err)
	}
	if err := f.s.Stop(context.Background()); err != nil { // the job saw its ctx end
		t.Fatal(err)
	}
	if st := j.Stats(); st.Runs != 1 || !j.Next().IsZero() {
		t.Fatalf("after Stop: %+v, next %v", st, j.Next())
	}
	f.clk.Advance(time.Hour)
	if st := j.Stats(); st.Runs != 1 {
		t.Fatalf("ran after Stop: %+v", st)
	}
}

// Stop with a context that ends while a Queue job has runs queued: the
// queued runs are dropped, Stop returns the context's error, and a job
// added/removed while runs are going does not disturb the count.
func TestStopQueueAndRemoveWhileRunning(t *testing.T) {
	f := newGoroutineFixture(t, time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	release := make(chan struct{})
	started := make(chan time.Time, 10)
	var mu sync.Mutex
	runs := 0
	slow := func(ctx context.Context, at time.Time) {
		started <- at
		<-release
		mu.Lock()
		runs++
		mu.Unlock()
	}
	if _, err := f.s.Add("q", "@every 1m", slow, cron.WithOverlap(cron.Queue)); err != nil {
		t.Fatal(err)
	}
	f.clk.Advance(time.Minute)
	<-started
	f.clk.Advance(2 * time.Minute) // two runs queued
	// remove and re-add under the same name while its run is going
	if !f.s.Remove("q") {
		t.Fatal("Remove")
	}
	if _, err := f.s.Add("q", "@every 1m", slow, cron.WithOverlap(cron.Queue)); err != nil {
		t.Fatal(err)
	}
	f.clk.Advance(time.Minute)
	<-started // the new job's first run, beside the old job's run
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- f.s.Stop(ctx) }()
	cancel()
	err := <-done
	if !errors.Is(err, context.Canceled) || err.Error() != "cron: Stop: 2 runs still going: context canceled" {
		t.Fatalf("Stop: %v", err)
	}
	close(release)
	if err := f.s.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if runs != 2 {
		t.Fatalf("%d runs returned, want 2 (queued runs of a removed job must be dropped)", runs)
	}
	select {
	case at := <-started:
		t.Fatalf("a run for %v started after Stop", at)
	default:
	}
}
