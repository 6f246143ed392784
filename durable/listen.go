package durable

import (
	"context"
	"strconv"

	"github.com/redis/go-redis/v9"
)

// listen follows the worker's inbox and the queue's channel, and claims
// at once on every (re)subscription, when messages may have been missed.
func (w *worker) listen() {
	defer w.loops.Done()
	ch := w.sub.C()
	for {
		select {
		case <-w.stop:
			return
		case m, ok := <-ch:
			if !ok {
				return
			}
			switch m := m.(type) {
			case *redis.Subscription:
				if m.Kind == "subscribe" || m.Kind == "ssubscribe" {
					w.resubscribed()
				}
			case *redis.Message:
				w.message(m.Channel == w.inbox, m.Payload)
			}
		}
	}
}

// resubscribed claims now, and checks the leases held: a Cancel may have
// been missed.
func (w *worker) resubscribed() {
	w.mu.Lock()
	w.more, w.next = true, -1
	if w.clk.ok {
		w.next = w.serverNowLocked()
	}
	w.planLocked()
	w.mu.Unlock()
	select {
	case w.renewNow <- struct{}{}:
	default:
	}
}

// message acts on a message of the inbox (mine) or the queue's channel.
func (w *worker) message(mine bool, p string) {
	if p == "" {
		return
	}
	switch p[0] {
	case 'n':
		if us, err := strconv.ParseInt(p[1:], 10, 64); err == nil {
			w.notice(us, mine)
		}
	case 'c':
		w.canceled(p[1:])
	case 'p':
		w.pauseKind(p[1:])
	case 'r':
		w.mu.Lock()
		delete(w.paused, p[1:])
		w.mu.Unlock()
		w.notice(-1, false)
	default: // a due time, as an older version published it
		if us, err := strconv.ParseInt(p, 10, 64); err == nil {
			w.notice(us, false)
		}
	}
}

// notice notes a job no worker holds, due at us (-1: now), and claims as
// planLocked says. A worker with no room passes on a notice sent
// to it alone to every worker, one each forwardEvery at most.
func (w *worker) notice(us int64, forward bool) {
	w.mu.Lock()
	if us < 0 && w.clk.ok {
		us = w.serverNowLocked()
	}
	if w.next < 0 || us < w.next {
		w.next = us
	}
	if w.note < 0 || us < w.note {
		w.note = us
	}
	w.more = true
	full := w.roomLocked() <= 0
	now := w.wheel.Now()
	if full && forward && now.Sub(w.forwarded) >= forwardEvery {
		w.forwarded = now
	} else {
		forward = false
	}
	w.planLocked()
	w.mu.Unlock()
	if forward {
		w.call("publish", 1, func(ctx context.Context) error {
			return w.q.st.Do(ctx, func(ctx context.Context, _ redis.UniversalClient) error {
				return w.sub.publish(ctx, w.k.Ev(), "n"+strconv.FormatInt(us, 10))
			})
		})
	}
}

// canceled drops or cancels the job id, which Cancel deleted or
// Reschedule took back.
func (w *worker) canceled(id string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if a := w.held[id]; a != nil {
		w.dropLocked(a)
		w.q.stats.canceled.Add(1)
		w.planLocked()
		return
	}
	if a := w.running[id]; a != nil {
		a.canceled.Store(true)
		a.cancel(ErrCanceled)
	}
}

// pauseKind notes that kind ("" for the queue) is paused, and hands back
// the jobs of it held.
func (w *worker) pauseKind(kind string) {
	w.mu.Lock()
	w.paused[kind] = true
	var out []*attempt
	for _, a := range w.held {
		if kind == "" || a.job.Kind == kind {
			out = append(out, w.dropLocked(a))
		}
	}
	w.planLocked()
	w.mu.Unlock()
	w.release(out, false)
}
