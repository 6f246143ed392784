package durable

import (
	"context"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// Sharded pub/sub. On a Redis Cluster, PUBLISH sends every message over
// the cluster bus to every node, so that a queue's messages cost every
// primary; SPUBLISH (Redis 7) keeps a message on the nodes of its
// channel's slot, which the queue's hash tag makes the shard's own. The
// scripts publish with SPUBLISH on a server that has it, PUBLISH on an
// older one (spublish below), and a worker subscribes with SSUBSCRIBE,
// SUBSCRIBE where the server lacks it (a feed). Either way a message is a
// hint: a worker that misses one claims at its next poll.

// spublish is the Lua function the scripts publish with: SPUBLISH on
// Redis 7 or later (redis.REDIS_VERSION_NUM is 7.0's), PUBLISH before.
const spublish = `
local function spublish(ch, msg)
  if redis.REDIS_VERSION_NUM and redis.REDIS_VERSION_NUM >= 0x070000 then
    redis.call('SPUBLISH', ch, msg)
  else
    redis.call('PUBLISH', ch, msg)
  end
end
`

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
	c        chan any // *redis.Subscription on each (re)subscription, *redis.Message
	ctx      context.Context
	cancel   context.CancelFunc
	done     chan struct{}
}

// subscribe starts a feed of channels.
func subscribe(rdb redis.UniversalClient, channels ...string) *feed {
	f := &feed{rdb: rdb, channels: channels, c: make(chan any, 64), done: make(chan struct{})}
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
	sharded := true
	for f.ctx.Err() == nil {
		var ps *redis.PubSub
		if sharded {
			ps = f.rdb.SSubscribe(f.ctx, f.channels...)
			// The first reply says whether the server knows SSUBSCRIBE.
			m, err := ps.Receive(f.ctx)
			if err != nil && strings.Contains(strings.ToLower(err.Error()), "unknown command") {
				ps.Close()
				sharded = false
				continue
			}
			if err == nil && !f.send(m) {
				ps.Close()
				return
			}
		} else {
			ps = f.rdb.Subscribe(f.ctx, f.channels...)
		}
		dropped := f.relay(ps)
		ps.Close()
		if !dropped {
			return
		}
		if cc, ok := f.rdb.(*redis.ClusterClient); ok {
			cc.ReloadState(f.ctx) // learn the slot's new primary
		}
		if sleep(f.ctx, 50*time.Millisecond) != nil {
			return
		}
	}
}

// relay passes ps's messages on until the feed closes (false) or the
// server drops the subscription (true).
func (f *feed) relay(ps *redis.PubSub) bool {
	ch := ps.ChannelWithSubscriptions()
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

func (f *feed) send(m any) bool {
	select {
	case f.c <- m:
		return true
	case <-f.ctx.Done():
		return false
	}
}
