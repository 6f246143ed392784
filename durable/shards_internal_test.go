package durable

import (
	"github.com/timewheel/timewheel/durable/internal/store"

	"fmt"
	"hash/fnv"
	"testing"

	"github.com/timewheel/timewheel/internal/redisserver"
)

// The shards' tags: shard 0's is the name (a queue of one shard keeps the
// layout of before), the others' slots sit at even steps from it, so
// that 3 shards fall in 3 thirds of the slots (the 3 primaries
// redis-cli --cluster create makes) for all but names whose slot is
// within a few slots of a third's end.
func TestShardTags(t *testing.T) {
	for _, k := range []string{"durable", "orders", "a:b", ""} {
		if slot(k) != redisserver.Slot(k) {
			t.Errorf("slot(%q) = %d, want %d", k, slot(k), redisserver.Slot(k))
		}
	}
	if tags := shardTags("q", 1); len(tags) != 1 || tags[0] != "q" {
		t.Fatalf("shardTags(q, 1) = %v", tags)
	}
	apart := 0
	const names = 1000
	for i := range names {
		name := fmt.Sprint("queue-", i)
		tags := shardTags(name, 3)
		if tags[0] != name || len(tags) != 3 {
			t.Fatalf("shardTags(%s, 3) = %v", name, tags)
		}
		thirds := map[int]bool{}
		for _, tag := range tags {
			thirds[slot(tag)*3/16384] = true
		}
		if len(thirds) == 3 {
			apart++
		}
	}
	if apart < names*97/100 {
		t.Errorf("3 shards in 3 thirds of the slots for %d of %d names, want 97%%", apart, names)
	}
	tags := shardTags("big", MaxShards)
	seen := map[string]bool{}
	for i, tag := range tags {
		if seen[tag] {
			t.Fatalf("tag %s twice", tag)
		}
		seen[tag] = true
		want := (slot("big") + i*16384/MaxShards) % 16384
		if d := (slot(tag) - want + 16384) % 16384; d >= spread {
			t.Errorf("shard %d's slot %d is %d past %d", i, slot(tag), d, want)
		}
	}
}

// shardIndex is FNV-1a of the ID mod k, as hash/fnv computes it: the
// layout of every sharded store depends on it.
func TestShardIndexIsFNV1a(t *testing.T) {
	for _, k := range []int{2, 3, 7, MaxShards} {
		q := &Queue{shards: make([]store.Keys, k)}
		for i := range 1000 {
			id := fmt.Sprint("job-", i, "-\xff\x00")
			h := fnv.New32a()
			h.Write([]byte(id))
			if got, want := q.shardIndex(id), int(h.Sum32()%uint32(k)); got != want {
				t.Fatalf("shardIndex(%q) of %d shards = %d, want %d", id, k, got, want)
			}
		}
	}
}
