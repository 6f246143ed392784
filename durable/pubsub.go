package durable

import (
	"context"
	"strings"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/timewheel/timewheel/durable/internal/store"
)

// Sharded pub/sub. On a Redis Cluster, PUBLISH sends every message over
// the cluster bus to every node, so that a queue's messages cost every
// primary; SPUBLISH (Redis 7) keeps a message on the nodes of its
// channel's slot, which the queue's hash tag makes the shard's own. The
// scripts publish with SPUBLISH on a server that has it, PUBLISH on an
// older one (store.LuaSPublish), and a worker subscribes with SSUBSCRIBE,
// SUBSCRIBE where the server lacks it (a feed). Either way a message is a
// hint: a worker that misses one hears of the job at its next renewal.

// A feed is a worker's subscription to one shard's channels (all in one
// slot): SSUBSCRIBE, or SUBSCRIBE if the server answers that it does not
// know SSUBSCRIBE. When a slot moves to another primary, the old primary
// drops its sharded subscriptions (an unasked "sunsubscribe"), and
// go-redis does not subscribe again by itself: the feed does, on the
// slot's new primary.
//
// One goroutine, run, owns the go-redis PubSub; close stops it and waits
// for it.
type feed struct {
	rdb      redis.UniversalClient
	channels []string
	sharded  atomic.Bool // SSUBSCRIBE, not SUBSCRIBE: publish with SPUBLISH
	c        chan any    // *redis.Subscription on each (re)subscription, *redis.Message
	ctx      context.Context
	cancel   context.CancelFunc
	done     chan struct{}
}

// subscribe starts a feed of channels.
func subscribe(rdb redis.UniversalClient, channels ...string) *feed {
	f := &feed{rdb: rdb, channels: channels, c: make(chan any, 1024), done: make(chan struct{})}
	f.sharded.Store(true)
	f.ctx, f.cancel = context.WithCancel(context.Background())
	go f.run()
	return f
}

// C returns the feed's messages: a *redis.Subscription at each
// (re)subscription, after which messages may have been missed, and each
// *redis.Message. It is closed once the feed is.
func (f *feed) C() <-chan any { return f.c }

// close ends the subscription and waits for run to return.
func (f *feed) close() {
	f.cancel()
	<-f.done
}

func (f *feed) run() {
	defer close(f.done)
	defer close(f.c)
	for fails := 0; f.ctx.Err() == nil; {
		var ps *redis.PubSub
		if f.sharded.Load() {
			ps = f.rdb.SSubscribe(f.ctx, f.channels...)
			// The first reply says whether the server knows SSUBSCRIBE,
			// and whether this node serves the slot (not MOVED).
			m, err := ps.Receive(f.ctx)
			if err != nil {
				ps.Close()
				if strings.Contains(strings.ToLower(err.Error()), "unknown command") {
					f.sharded.Store(false)
					continue
				}
				fails++
				if !f.retry(fails) {
					return
				}
				continue
			}
			if !f.send(m) {
				ps.Close()
				return
			}
		} else {
			ps = f.rdb.Subscribe(f.ctx, f.channels...)
		}
		fails = 0
		dropped := f.relay(ps)
		ps.Close()
		if !dropped || !f.retry(1) {
			return
		}
	}
}

// retry has a cluster client reload the layout, to find the slot's
// primary, and waits before the fails-th retry: 50 ms, doubled up to 1 s.
// It reports false if the feed closed meanwhile.
func (f *feed) retry(fails int) bool {
	if cc, ok := f.rdb.(*redis.ClusterClient); ok {
		cc.ReloadState(f.ctx)
	}
	return store.Sleep(f.ctx, min(50*time.Millisecond<<min(fails-1, 5), time.Second)) == nil
}

// relay passes ps's messages on until the feed closes (false) or the
// server drops the subscription (true).
func (f *feed) relay(ps *redis.PubSub) bool {
	ch := ps.ChannelWithSubscriptions(redis.WithChannelSize(1024))
	for {
		select {
		case <-f.ctx.Done():
			return false
		case m, ok := <-ch:
			if !ok {
				return false
			}
			if s, ok := m.(*redis.Subscription); ok && s.Kind == "sunsubscribe" {
				return true
			}
			if !f.send(m) {
				return false
			}
		}
	}
}

// publish publishes msg to channel as the feed subscribes: SPUBLISH, or
// PUBLISH where the server lacks sharded pub/sub.
func (f *feed) publish(ctx context.Context, channel, msg string) error {
	if f.sharded.Load() {
		return f.rdb.SPublish(ctx, channel, msg).Err()
	}
	return f.rdb.Publish(ctx, channel, msg).Err()
}

func (f *feed) send(m any) bool {
	select {
	case f.c <- m:
		return true
	case <-f.ctx.Done():
		return false
	}
}
