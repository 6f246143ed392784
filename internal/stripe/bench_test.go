package stripe

import (
	"sync/atomic"
	"testing"
)

// BenchmarkAdd adds from b.RunParallel goroutines (run it with -cpu 1,2):
// by the goroutine's stack, by its processor, and to one shared counter.
func BenchmarkAdd(b *testing.B) {
	b.Run("impl=stack", func(b *testing.B) {
		var c Counter
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				c.Add()
			}
		})
	})
	b.Run("impl=proc", func(b *testing.B) {
		var c Counter
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				c.AddPinned()
			}
		})
	})
	b.Run("impl=shared", func(b *testing.B) {
		var n atomic.Uint64
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				n.Add(1)
			}
		})
	})
}
