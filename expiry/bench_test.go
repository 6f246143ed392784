package expiry

import (
	"fmt"
	"runtime"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/timewheel/timewheel"
)

// The map on its own; the comparison with ttlcache and go-zero, at up to a
// million entries, is in the bench module:
//
//	cd bench && go test -run '^$' -bench . -benchtime 200000x

func benchKeys(n int) []string {
	keys := make([]string, n)
	for i := range keys {
		keys[i] = "session:" + strconv.Itoa(i)
	}
	return keys
}

func BenchmarkMap(b *testing.B) {
	for _, n := range []int{1e3, 1e5} {
		keys := benchKeys(n)
		w := timewheel.New()
		m := New[string, int](WithWheel(w))
		for i, k := range keys {
			m.Set(k, i, time.Hour)
		}
		b.Run(fmt.Sprintf("op=Set/n=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				m.Set(keys[(i*7919)%n], i, time.Hour)
			}
		})
		b.Run(fmt.Sprintf("op=Get/n=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				m.Get(keys[(i*7919)%n])
			}
		})
		b.Run(fmt.Sprintf("op=Touch/n=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				m.Touch(keys[(i*7919)%n])
			}
		})
		m.Close()
		w.Close()
	}
}

// BenchmarkMemory reports the heap taken per entry of a map of 1e5 string
// keys (whose bytes are not counted: they exist before the map) and int
// values, each with its own deadline spread over an hour.
func BenchmarkMemory(b *testing.B) {
	const n = 1e5
	keys := benchKeys(n)
	w := timewheel.New()
	defer w.Close()
	before := heapInUse()
	m := New[string, int](WithWheel(w))
	for i, k := range keys {
		m.Set(k, i, time.Hour+time.Duration(i)*time.Millisecond)
	}
	perEntry := float64(heapInUse()-before) / n
	runtime.KeepAlive(m)
	m.Close()
	for b.Loop() {
	}
	b.ReportMetric(perEntry, "bytes/entry")
}

func heapInUse() int64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc)
}

// BenchmarkMemoryFloor reports the heap per entry at 1e6 string keys of
// what a Map is built from, beside the Map itself (op=Map) in the same
// run: op=Nodes is the 64-byte nodes alone (key, value, deadline, ttl,
// two links and the bucket: 64 bytes is their size class), the floor of
// any design that keeps a node per entry, so that op=Map less op=Nodes is
// what the shards' indexes and buckets cost; op=GoMap is a Go map from
// the key to a 64-byte node, the floor of the design before the index
// (which a Map measured at: 120 bytes).
func BenchmarkMemoryFloor(b *testing.B) {
	const n = 1_000_000
	keys := benchKeys(n)
	b.Run("op=Nodes", func(b *testing.B) {
		before := heapInUse()
		nodes := make([]*[64]byte, n)
		for i := range nodes {
			nodes[i] = new([64]byte)
		}
		perEntry := float64(heapInUse()-before-8*n) / n // less the slice
		runtime.KeepAlive(nodes)
		for b.Loop() {
		}
		b.ReportMetric(perEntry, "bytes/entry")
	})
	b.Run("op=GoMap", func(b *testing.B) {
		before := heapInUse()
		m := make(map[string]*[64]byte)
		for _, k := range keys {
			m[k] = new([64]byte)
		}
		perEntry := float64(heapInUse()-before) / n
		runtime.KeepAlive(m)
		for b.Loop() {
		}
		b.ReportMetric(perEntry, "bytes/entry")
	})
	b.Run("op=Map", func(b *testing.B) {
		w := timewheel.New()
		defer w.Close()
		before := heapInUse()
		m := New[string, int](WithWheel(w))
		for i, k := range keys {
			m.Set(k, i, time.Hour)
		}
		perEntry := float64(heapInUse()-before) / n
		runtime.KeepAlive(m)
		m.Close()
		for b.Loop() {
		}
		b.ReportMetric(perEntry, "bytes/entry")
	})
}

// BenchmarkSlidingGet reads keys of a preloaded map from b.RunParallel
// goroutines (run it with -cpu 1,2), with and without WithSliding: a
// sliding Get renews with a compare-and-swap, and with a one-hour ttl
// writes once per granularity per key at most.
func BenchmarkSlidingGet(b *testing.B) {
	for _, sliding := range []bool{false, true} {
		for _, n := range []int{1e3, 1e5} {
			b.Run(fmt.Sprintf("sliding=%v/n=%d", sliding, n), func(b *testing.B) {
				keys := benchKeys(n)
				w := timewheel.New()
				defer w.Close()
				var opts []Option
				if sliding {
					opts = append(opts, WithSliding())
				}
				m := New[string, int](append(opts, WithWheel(w))...)
				defer m.Close()
				for i, k := range keys {
					m.Set(k, i, time.Hour)
				}
				var next atomic.Int64
				b.RunParallel(func(pb *testing.PB) {
					i := int(next.Add(1)) * 1_000_003
					sum := 0
					for pb.Next() {
						v, _ := m.Get(keys[(i*7919)%n])
						sum += v
						i++
					}
					runtime.KeepAlive(sum)
				})
			})
		}
	}
}
