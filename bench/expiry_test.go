package bench

import (
	"fmt"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/jellydator/ttlcache/v3"
	"github.com/timewheel/timewheel"
	"github.com/timewheel/timewheel/expiry"
	"github.com/zeromicro/go-zero/core/collection"
)

// Expiring maps: timewheel's expiry.Map against github.com/jellydator/ttlcache/v3
// and go-zero's collection.Cache, with string keys and int values, a one-hour
// time to live, and active expiry running in all three (ttlcache's Start
// loop, go-zero's timing wheel, timewheel's wheel).
//
// Set overwrites a resident key, Get reads one, Touch renews one's deadline
// (go-zero has no Touch: it sets the value again, which moves its timer).
// Keys are visited in a scattered order so that large maps miss the cache as
// real traffic does. bytes/entry is the live heap a map of n entries adds,
// after a GC, divided by n; the keys' bytes exist before and are not counted.

var sizes = []int{1e3, 1e5, 1e6}

const ttl = time.Hour

// ttlMap is what the benchmarks need of an expiring map.
type ttlMap interface {
	set(k string, v int)
	get(k string) (int, bool)
	touch(k string)
	close()
}

var impls = []struct {
	name string
	make func() ttlMap
}{
	{"timewheel", newTimewheel},
	{"ttlcache", newTTLCache},
	{"go-zero", newGoZero},
}

type twMap struct {
	w *timewheel.Wheel
	m *expiry.Map[string, int]
}

func newTimewheel() ttlMap {
	w := timewheel.New()
	return &twMap{w, expiry.New[string, int](expiry.WithWheel(w))}
}
func (t *twMap) set(k string, v int)      { t.m.Set(k, v, ttl) }
func (t *twMap) get(k string) (int, bool) { return t.m.Get(k) }
func (t *twMap) touch(k string)           { t.m.Touch(k) }
func (t *twMap) close()                   { t.m.Close(); t.w.Close() }

type ttlcacheMap struct{ c *ttlcache.Cache[string, int] }

func newTTLCache() ttlMap {
	c := ttlcache.New[string, int](ttlcache.WithTTL[string, int](ttl), ttlcache.WithDisableTouchOnHit[string, int]())
	go c.Start()
	return ttlcacheMap{c}
}
func (t ttlcacheMap) set(k string, v int) { t.c.Set(k, v, ttlcache.DefaultTTL) }
func (t ttlcacheMap) get(k string) (int, bool) {
	if it := t.c.Get(k); it != nil {
		return it.Value(), true
	}
	return 0, false
}
func (t ttlcacheMap) touch(k string) { t.c.Touch(k) }
func (t ttlcacheMap) close()         { t.c.Stop() }

type goZeroMap struct{ c *collection.Cache }

func newGoZero() ttlMap {
	c, err := collection.NewCache(ttl)
	if err != nil {
		panic(err)
	}
	return goZeroMap{c}
}
func (g goZeroMap) set(k string, v int) { g.c.Set(k, v) }
func (g goZeroMap) get(k string) (int, bool) {
	v, ok := g.c.Get(k)
	if !ok {
		return 0, false
	}
	return v.(int), true
}
func (g goZeroMap) touch(k string) {
	if v, ok := g.c.Get(k); ok {
		g.c.Set(k, v) // no Touch: setting again moves the timer
	}
}
func (g goZeroMap) close() {} // a Cache cannot be stopped

var keyCache = map[int][]string{}

func keys(n int) []string {
	if ks, ok := keyCache[n]; ok {
		return ks
	}
	ks := make([]string, n)
	for i := range ks {
		ks[i] = "session:" + strconv.Itoa(i)
	}
	keyCache[n] = ks
	return ks
}

// scatter returns the i'th key index of a walk that visits all n keys in a
// cache-unfriendly order: stride is a prime above 5, so the walk is a
// permutation. Each op walks with its own stride, so that no op finds what
// the op before it allocated lined up in its own order (go-zero's Set
// boxes each value anew, and a Get walking the same order would read the
// boxes sequentially).
func scatter(i, n, stride int) int { return (i * stride) % n }

var sinkInt int

// ops are the measured operations; none changes the number of keys.
var ops = []struct {
	name   string
	stride int
	do     func(m ttlMap, k string, i int)
}{
	{"Set", 7919, func(m ttlMap, k string, i int) { m.set(k, i) }},
	{"Get", 104729, func(m ttlMap, k string, _ int) {
		v, _ := m.get(k)
		sinkInt += v
	}},
	{"Touch", 1299709, func(m ttlMap, k string, _ int) { m.touch(k) }},
}

// BenchmarkExpiringMap fills one map per size and implementation, one at a
// time, reporting the heap it takes per entry (op=Memory, whose ns/op means
// nothing), then runs Set, Get and Touch on it.
func BenchmarkExpiringMap(b *testing.B) {
	for _, n := range sizes {
		ks := keys(n)
		for _, im := range impls {
			before := heapAlloc()
			m := im.make()
			for i, k := range ks {
				m.set(k, i)
			}
			perEntry := float64(heapAlloc()-before) / float64(n)
			b.Run(fmt.Sprintf("n=%d/impl=%s/op=Memory", n, im.name), func(b *testing.B) {
				for b.Loop() {
				}
				b.ReportMetric(perEntry, "bytes/entry")
			})
			for _, op := range ops {
				b.Run(fmt.Sprintf("n=%d/impl=%s/op=%s", n, im.name, op.name), func(b *testing.B) {
					b.ReportAllocs()
					for i := 0; b.Loop(); i++ {
						op.do(m, ks[scatter(i, n, op.stride)], i)
					}
				})
			}
			m.close()
		}
	}
}

func heapAlloc() int64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc)
}
