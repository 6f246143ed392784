package expiry

import "time"

// Stats is what a Map holds and what it has done since New: the figures a
// service puts on its dashboard. Counters only grow; a rate is the
// difference of two readings. [Map.Stats] returns it.
type Stats struct {
	// Entries is the number of entries now: Len. It counts entries past
	// their deadline whose bucket has not fired yet.
	Entries int
	// Weight is the total weight of the entries now, with [WithMaxWeight];
	// 0 without.
	Weight uint64
	// Buckets is the number of buckets now, each one pending timer of the
	// wheel (see WithGranularity).
	Buckets int
	// Hits counts Get calls that found a live entry; Misses those that
	// found none, or one past its deadline. A falling hit ratio with a
	// steady load means entries expire before they are read again: the
	// ttl may be too short.
	Hits, Misses uint64
	// Expired, Deleted, Replaced and Capacity count the entries that left
	// the map, by [Reason], whether or not there is an eviction callback.
	// (Entries dropped by Close are not counted.) Capacity evictions
	// growing means the map is too small for its load: entries leave
	// before their time.
	Expired, Deleted, Replaced, Capacity uint64
	// ExpiredAge, DeletedAge and CapacityAge are, with [WithAges], the
	// total time the entries counted in Expired, Deleted and Capacity
	// had spent in the map when they left (0 without it). ExpiredAge /
	// Expired is their mean age. Deletes mostly soon after the write
	// say the ttl could be shorter; Capacity evictions of young entries,
	// that the map is too small.
	ExpiredAge, DeletedAge, CapacityAge time.Duration
	// Backlog is the number of callbacks (of eviction, and of
	// WithOnInsert and WithOnUpdate) queued and not yet started. It
	// stays near zero unless callbacks are slower than evictions; one
	// that keeps growing holds every evicted value in memory until its
	// callback runs.
	Backlog int
	// Loads counts the calls of a loader: of GetOrLoad's Loaders, of
	// GetAllOrLoad's BulkLoaders (one per call, however many keys) and
	// of the reloads of WithRefresh. LoadFailures counts those that made
	// no value (an error, a ttl that is not positive, a panic). LoadTime
	// is the time spent in them all, by the wheel's clock. LoadTime/Loads
	// is the mean load time: the latency a miss costs.
	Loads, LoadFailures uint64
	LoadTime            time.Duration
	// Refreshes counts the reloads of [WithRefresh] that stored a new
	// value; RefreshFailures those that failed and kept the old one.
	// Both are counted in Loads too.
	Refreshes, RefreshFailures uint64
}

// Stats returns what the map holds and has done. It reads each shard in
// turn (see Len). The complexity is O(S), S being the number of shards.
func (m *Map[K, V]) Stats() Stats {
	m.notNil("Stats")
	m.init()
	var st Stats
	for i := range m.shards {
		s := &m.shards[i]
		s.mu.RLock()
		st.Entries += s.items.n
		st.Buckets += len(s.buckets)
		st.Weight += s.weight
		st.Expired += s.left[Expired]
		st.Deleted += s.left[Deleted]
		st.Replaced += s.left[Replaced]
		st.Capacity += s.left[Capacity]
		st.ExpiredAge += time.Duration(s.age[Expired])
		st.DeletedAge += time.Duration(s.age[Deleted])
		st.CapacityAge += time.Duration(s.age[Capacity])
		s.mu.RUnlock()
	}
	st.Hits, st.Misses = m.hits.Load(), m.misses.Load()
	st.Backlog = int(m.backlog.Load())
	st.Loads, st.LoadFailures = m.loads.calls.Load(), m.loads.failures.Load()
	st.LoadTime = time.Duration(m.loads.nanos.Load())
	if r := m.refresh; r != nil {
		st.Refreshes, st.RefreshFailures = r.done.Load(), r.failed.Load()
	}
	return st
}
