// Package expiry is a map whose entries expire: keys with a time to live,
// sessions, leases, the "hand-rolled map plus ticker" of every Go server,
// done once on a timing wheel.
//
//	m := expiry.New[string, *Session](expiry.WithOnEvict(func(id string, s *Session, why expiry.Reason) {
//		s.Close()
//	}))
//	defer m.Close()
//	m.Set(id, s, 30*time.Minute) // idle sessions leave after 30 minutes
//	...
//	m.Touch(id) // the session is used: 30 more minutes
//
// # Expiry
//
// Expiry is active, as in Redis: an entry leaves at its deadline because a
// timer of the wheel fires ([WithWheel]; [timewheel.Default] unless told),
// not when someone happens to read it. And it is exact for readers: Get,
// TTL, Touch and All compare each entry's deadline with the wheel's clock
// (timewheel.Wheel.Since). They never see an entry past its deadline, even
// in the moment before its timer runs.
//
// The map is striped: keys are spread by a seeded hash over shards (the
// power of two at or above 8×GOMAXPROCS, at most 256). Each shard has its
// own lock, entries and buckets, padded apart, so writes of different
// keys mostly take different locks. Get, Touch and TTL take no lock at
// all: they find the entry with atomic loads and count a hit or miss on a
// counter striped by processor. Reads on different processors write
// no common cache line, and scale with them. A Set of a key that is
// there stores a value of one word or one pointer in place; see the Set
// method for the rest. Len, Stats, All and Snapshot visit every shard.
// All and Snapshot read-lock all of them at once, so they see one instant.
//
// Entries do not get a timer each. Deadlines are grouped, in each shard,
// into buckets of one granularity ([WithGranularity], 100ms unless told).
// A bucket is an intrusive list of the shard's entries whose deadline
// falls in its span. It owns the one wheel timer that fires at the end of
// the span and evicts them all. Set and Delete link and unlink an entry
// in O(1); only the first entry of a bucket schedules a wheel timer, and
// the last one out stops it. A Set or Touch that moves a deadline later
// moves nothing: it records the deadline, and the old bucket, when it
// fires, files the entry again in the bucket of its deadline. The runtime
// and Linux do the same with a timer moved later.
//
// A shard finds an entry by key through an index of its own, not a Go
// map: an open-addressing table of pointers to the entries, with two
// bytes per slot of tag and probe distance. A key is hashed once per
// operation, and churn never degrades the table. An entry thus costs one
// 64-byte node (for small K and V) and about 21 bytes of index at a
// million entries, and nothing in the wheel. With string keys and int
// values, the map takes 85 bytes per entry at 1e6 entries set together.
// A Go map to the same 64-byte nodes takes 120 (BenchmarkMemoryFloor);
// otter v2 takes 98, ttlcache v3 241 (BenchmarkExpiringMap in the bench
// module, op=Memory). At 1e5 entries whose deadlines are spread over
// 100 s (BenchmarkMemory) it takes 101. Each shard keeps a bucket, and a
// wheel timer, for each span it has entries in: the price of the stripes.
//
// The downside of grouping deadlines in buckets is that eviction, and its
// callback, comes up to one granularity (plus one wheel tick) after the
// deadline; readers are not affected, since they check the deadline
// itself.
//
// # Atomic updates
//
// [Map.Compute] reads and writes one key under its shard's lock. Its
// function is given the live value, if any, and says whether to keep the
// entry, write a value or remove it. [Map.GetOrSet], [Map.SetIfAbsent],
// [Map.GetAndDelete], [Map.CompareAndSwap] and [Map.CompareAndDelete]
// are its common cases, as sync.Map has them; [Map.Update] writes a
// value and keeps the entry's deadline. Gets do not wait for them.
//
// # Loading, sliding expiry, entries without a ttl
//
// [Map.GetOrLoad] fills a missing key from a [Loader], once per key
// however many goroutines ask for it at the same moment. The others wait
// for that call and share its value or error, or give up when their
// context is done. The loader says how long the value lives, and its
// errors are not stored. [Map.GetAllOrLoad] fills the keys it misses
// with one call of a [BulkLoader], sharing loads per key with GetOrLoad.
// [WithRefresh] reloads a value read after a refresh age in the
// background, one reload per key at a time, while Gets go on returning
// the old one. Stats counts the loads, their failures and the time
// spent in them. [WithSliding] makes a Get renew the entry it finds.
// [NoTTL] is the ttl of an entry that never expires, beside entries that
// do, and [Map.SetTTL] changes one entry's ttl without its value.
//
// # Eviction callbacks
//
// A callback set with [WithOnEvict] learns of every entry that leaves and
// why ([Reason]): Expired, Deleted, Replaced or Capacity. Callbacks run
// outside the map's locks, one at a time, in the order the entries left.
// (Entries of different shards due in one span leave with their shard's
// bucket, and those timers fire in no set order.) They run on a goroutine
// of the map's own, started when there is something to deliver. A
// callback that blocks holds back the callbacks behind it (they queue,
// without limit) but not expiry: the entries have already left the map.
// A callback that panics is recovered and reported ([WithPanicHandler]);
// delivery goes on with the next one. [Map.Flush] waits for the
// callbacks queued so far.
//
// [WithOnInsert] and [WithOnUpdate] set callbacks told of every key the
// map gains and every live value replaced (with the old value and the
// new), by any method. They share one queue with the eviction callbacks,
// so a key's callbacks come in the order of its changes. A map without
// them pays one predictable branch per write.
//
// [WithAges] makes Stats report how long the entries that left had been
// in the map, by Reason: the figure for sizing a ttl.
//
// A callback may use the map, and any other: Get, Set, Delete, Snapshot,
// Restore. It may Close a map too, which then closes without waiting for
// callbacks, since it could wait for itself; but it must not Flush one,
// which for the same reason panics instead of waiting.
//
// [WithInlineCallbacks] runs callbacks on the goroutine that made the
// entries leave (the caller of Set or Delete, or the wheel's executor for
// expiry), after the lock is released. It is for tests: on a
// [clock.Virtual] with [timewheel.Inline], every callback due has run when
// Advance returns.
//
// # Capacity
//
// [WithCapacity] bounds the number of entries. Setting a new key in a full
// map first evicts the entry closest to expiry (Reason Capacity, or Expired
// if its deadline has passed). That is the first entry of the earliest
// bucket, the earliest deadline to within the granularity. This is Redis's
// volatile-ttl policy. It costs O(log B) per bucket opened or closed, B
// being the number of buckets, where LRU would cost a list node per entry
// and a write lock on every Get. [WithMaxWeight] bounds the total weight of
// the entries instead (or as well), by a weigher, with the same order of
// eviction. A map with a capacity or a maximum weight has one shard, so
// that the entry closest to expiry is found under one lock. Such a map
// serialises its writers as an unstriped map would.
//
// # Snapshots
//
// [Map.Snapshot] writes the live entries with their deadlines and
// [Map.Restore] reads them back, so that a restarting process keeps its
// sessions. Keys and values are encoded with encoding/gob, so K and V must
// be types gob can encode as they are (see [ErrUnencodable]). A key or value
// it cannot hold as it is is an error ([ErrUnencodable]) naming the entry
// and the type, never a snapshot that Restore reads back with fields left
// zero. Deadlines are written as wall-clock times: an entry whose
// deadline passed while the process was down is evicted, with Reason
// Expired, by Restore. The format is documented on [Map.Snapshot].
//
// # Misuse
//
// The zero [Map] is ready to use, as New with no options makes it. Every
// mistake panics or returns an error, never a crash inside the package or
// a request quietly changed. A panic starts with "expiry:" and says what
// was wrong:
//   - a nil Option, a nil argument (an io.Reader or io.Writer, a wheel,
//     callback, handler, logger, loader or context), or a zero Wheel;
//   - a negative capacity, a granularity or refresh age that is not
//     positive (a capacity or maximum weight of 0 is no bound);
//   - Flush from a callback, or a GetOrLoad from a loader, through its
//     context, of a key that load waits for;
//   - a key Go's maps cannot hash, or a NaN key;
//   - a Compute function's op that is none of the four, or a
//     CompareAndSwap of values == cannot compare;
//   - a callback, loader or weigher of another Map's K or V.
//
// An error wraps one of the package's sentinels ([ErrTTL], [ErrClosed],
// [ErrUnencodable], [ErrCorrupt], [ErrVersion], [ErrTooHeavy],
// [ErrNotFound]) and repeats the value at fault. That is a ttl from Set,
// SetTTL or a Loader that is not positive, or the weight of an entry
// heavier than the bound.
//
// The one hang the package cannot see is a call that waits for itself.
// That is a function the map runs under its lock (a Compute function or a
// weigher) that calls the map, or a loader asked with another context. Go
// gives a goroutine no identity to tell it from another goroutine's call
// (see Compute and GetOrLoad).
package expiry
