package queue_test

import (
	"math/rand/v2"
	"sync"
	"testing"

	"pgregory.net/rapid"

	"github.com/timewheel/timewheel/queue"
)

// onWheels runs property on the default wheel and on wheels that move
// slots of one to four timers ahead of time (see ahead.go), so that
// entries are changed before, while and after they are moved ahead, and
// reached in their chunks.
func onWheels(t *testing.T, property func(*rapid.T, *queue.Wheel)) {
	t.Run("default", func(t *testing.T) {
		rapid.Check(t, func(t *rapid.T) { property(t, queue.NewWheel()) })
	})
	t.Run("ahead", func(t *testing.T) {
		rapid.Check(t, func(t *rapid.T) {
			big := rapid.SampledFrom([]int32{1, 2, 4}).Draw(t, "big")
			slice := rapid.SampledFrom([]int{1, 3, 64}).Draw(t, "slice")
			property(t, queue.NewWheelAhead(big, slice))
		})
	})
}

// expireWhileRacing expires w one tick at a time up to rounds while two
// goroutines call race (with a generator of their own, g being 0 or 1)
// over and over, then stops them, expires every tick left and checks the
// wheel: valid and empty. It returns the tick each entry fired at, 0 for
// none (ticks start at 1), failing the test if one fired twice; onFire,
// if not nil, sees each firing first.
func expireWhileRacing(t *testing.T, w *queue.Wheel, entries []*queue.Entry, rounds int64, seed uint64, race func(g int, r *rand.Rand), onFire func(i int, now int64)) []int64 {
	t.Helper()
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for g := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(g), seed))
			for {
				select {
				case <-stop:
					return
				default:
					race(g, r)
				}
			}
		}()
	}
	firedAt := make([]int64, len(entries))
	index := make(map[*queue.Entry]int, len(entries))
	for i, e := range entries {
		index[e] = i
	}
	fire := func(now int64) func(*queue.Entry) {
		return func(e *queue.Entry) {
			i := index[e]
			if firedAt[i] > 0 {
				t.Errorf("entry %d fired twice, at %d and %d", i, firedAt[i], now)
			}
			if onFire != nil {
				onFire(i, now)
			}
			firedAt[i] = now
		}
	}
	for now := int64(1); now <= rounds; now++ {
		w.Expire(now, fire(now))
	}
	close(stop)
	wg.Wait()
	w.Expire(1<<40, fire(1<<40))
	if err := w.Verify(); err != nil {
		t.Fatal(err)
	}
	if w.Len() != 0 {
		t.Fatalf("Len = %d after expiring everything", w.Len())
	}
	return firedAt
}
