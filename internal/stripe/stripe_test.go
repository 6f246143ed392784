package stripe

import (
	"sync"
	"testing"
)

// TestCounterCountsEveryAdd adds from many goroutines at once, by stack
// and by processor, and checks that the sum loses none.
func TestCounterCountsEveryAdd(t *testing.T) {
	var c Counter
	const goroutines, adds = 64, 1000
	var wg sync.WaitGroup
	for range goroutines {
		wg.Go(func() {
			for i := range adds {
				if i%2 == 0 {
					c.Add()
				} else {
					c.AddPinned()
				}
			}
		})
	}
	wg.Wait()
	if got := c.Load(); got != goroutines*adds {
		t.Fatalf("Load = %d, want %d", got, goroutines*adds)
	}
	used := 0
	for i := range c.stripes {
		if c.stripes[i].n.Load() != 0 {
			used++
		}
	}
	t.Logf("%d goroutines wrote %d of %d stripes", goroutines, used, stripes)
}
