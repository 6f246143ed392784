package durable

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"

	"github.com/timewheel/timewheel/durable/internal/store"
)

// MaxShards is the most shards WithShards takes.
const MaxShards = 256

// WithShards spreads the queue's jobs over k shards (default 1), each a
// hash tag of its own, so that on a Redis Cluster one queue's work and
// memory spread over k slots, and so over the primaries that serve them.
// A job lives in shard FNV-1a(ID) mod k: Schedule, Reschedule, Cancel
// and Lookup still cost one round trip, to that shard's primary; Pause,
// Resume and Paused cost one per shard. A Queue with handlers runs a
// worker per shard (four goroutines and a subscription each), each with
// an even share of WithConcurrency's handlers (at least one), so that the
// claims for a job go to its shard alone (see docs/durable.md, "Running
// on a Redis Cluster").
//
// Shard 0 is the layout of a queue of one shard: the keys {name}:due and
// so on. Shard i > 0 has the tag {name:i:n}, with n the smallest number
// that puts its slot just past the i-th k-th of the slot space from
// shard 0's: on a cluster whose primaries serve equal ranges of slots, as
// redis-cli --cluster create makes them, the shards spread evenly over
// the primaries.
//
// Every Queue of a name must use the same k: Queues of a name with
// different k look for a job's ID in different shards. So the queue's
// layout record in Redis holds k, written at the first Queue's first
// call, and a Queue whose k disagrees fails every call with an error
// wrapping ErrShards that names both (layout.go). A queue of one shard
// goes to k by MoveToShards, which writes k; its jobs, in shard 0, still
// run meanwhile. It panics if k is not in [1, MaxShards].
func WithShards(k int) Option {
	if k < 1 || k > MaxShards {
		panic(fmt.Sprintf("durable: WithShards: k %d not in [1, %d]", k, MaxShards))
	}
	return func(c *config) { c.shards = k }
}

// shardTags returns the hash tags of a queue of k shards: name, then for
// shard i the first name:i:n whose slot is within spread of s0 + i·16384/k,
// s0 being name's slot.
func shardTags(name string, k int) []string {
	tags := []string{name}
	s0 := slot(name)
	for i := 1; i < k; i++ {
		target := (s0 + i*16384/k) % 16384
		prefix := name + ":" + strconv.Itoa(i) + ":"
		for n := 0; ; n++ {
			tag := prefix + strconv.Itoa(n)
			if (slot(tag)-target+16384)%16384 < spread {
				tags = append(tags, tag)
				break
			}
		}
	}
	return tags
}

// spread is the width of the window of slots a shard's tag is searched
// in: wide enough to find one in a few hundred tries, narrow against the
// 64 slots apart MaxShards' shards are.
const spread = 16

// shardOf returns the keys and the breaker of the shard of the job with
// id.
func (q *Queue) shardOf(id string) (store.Keys, *breaker) {
	i := q.shardIndex(id)
	return q.shards[i], q.brs[i]
}

// shardIndex returns the shard of the job with id: FNV-1a(id) mod k, as
// hash/fnv's New32a computes it, without its allocations (every
// Schedule, Cancel, Lookup and Reschedule of a sharded queue hashes).
func (q *Queue) shardIndex(id string) int {
	if len(q.shards) == 1 {
		return 0
	}
	id = runShardKey(id) // a schedule's runs share its shard
	h := uint32(2166136261)
	for i := 0; i < len(id); i++ {
		h ^= uint32(id[i])
		h *= 16777619
	}
	return int(h % uint32(len(q.shards)))
}

// startWorkers starts a worker per shard on one wheel, each with an even
// share of WithConcurrency's handlers (at least one).
func (q *Queue) startWorkers() {
	q.wheel, q.ownWheel = wheelOrNew(&q.cfg)
	n := len(q.shards)
	q.obs = newObserver(q)
	for i, k := range q.shards {
		conc := q.cfg.concurrency / n
		if i < q.cfg.concurrency%n {
			conc++
		}
		q.ws = append(q.ws, startWorker(q, k, q.brs[i], q.wheel, max(1, conc)))
	}
	q.obs.start()
	q.startTender()
}

// closeWorkers closes the workers at once, then the wheel if the Queue
// made it, and returns ctx's error if it ended first.
func (q *Queue) closeWorkers(ctx context.Context) error {
	q.stopTender()
	errs := make([]error, len(q.ws))
	var wg sync.WaitGroup
	for i, w := range q.ws {
		wg.Go(func() { errs[i] = w.close(ctx) })
	}
	wg.Wait()
	if q.obs != nil {
		q.obs.close()
	}
	if q.ownWheel {
		q.wheel.Close()
	}
	return errors.Join(errs...)
}

// eachShard calls f with each shard's keys and breaker, in turn, and
// returns the first error.
func (q *Queue) eachShard(f func(k store.Keys, br *breaker) error) error {
	for i, k := range q.shards {
		if err := f(k, q.brs[i]); err != nil {
			return err
		}
	}
	return nil
}

// slot returns the Redis Cluster slot of a hash tag: CRC16 (XMODEM) of
// it, modulo 16384.
func slot(tag string) int {
	var crc uint16
	for i := 0; i < len(tag); i++ {
		crc = crc<<8 ^ crc16Table[byte(crc>>8)^tag[i]]
	}
	return int(crc) % 16384
}

// crc16Table is CRC16 XMODEM's (polynomial 0x1021) table, by byte.
var crc16Table = func() (t [256]uint16) {
	for b := range t {
		crc := uint16(b) << 8
		for range 8 {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
		t[b] = crc
	}
	return t
}()
