package expiry

import (
	"reflect"
	"testing"
	"time"
	"unsafe"

	"github.com/timewheel/timewheel"
	"github.com/timewheel/timewheel/clock"
)

// TestValMode checks which values a Set of a present key stores in place
// and which it copies, by type.
func TestValMode(t *testing.T) {
	type pair struct{ a, b int32 }
	type withPtr struct {
		a int32
		p *int32
	}
	for _, c := range []struct {
		t    reflect.Type
		want valMode
	}{
		{reflect.TypeFor[int](), valWord64},
		{reflect.TypeFor[float64](), valWord64},
		{reflect.TypeFor[time.Duration](), valWord64},
		{reflect.TypeFor[[8]byte](), valWord64},
		{reflect.TypeFor[pair](), valWord64},
		{reflect.TypeFor[complex64](), valWord64},
		{reflect.TypeFor[int32](), valWord32},
		{reflect.TypeFor[float32](), valWord32},
		{reflect.TypeFor[*int](), valPointer},
		{reflect.TypeFor[map[int]int](), valPointer},
		{reflect.TypeFor[chan int](), valPointer},
		{reflect.TypeFor[func()](), valPointer},
		{reflect.TypeFor[unsafe.Pointer](), valPointer},
		{reflect.TypeFor[string](), valCopy},
		{reflect.TypeFor[[]byte](), valCopy},
		{reflect.TypeFor[any](), valCopy},
		{reflect.TypeFor[bool](), valCopy},
		{reflect.TypeFor[int16](), valCopy},
		{reflect.TypeFor[struct{}](), valCopy},
		{reflect.TypeFor[[2]int](), valCopy},
		{reflect.TypeFor[withPtr](), valCopy},
		{reflect.TypeFor[[1]*int](), valCopy},
	} {
		if got := valModeOf(c.t); got != c.want {
			t.Errorf("valModeOf(%v) = %d, want %d", c.t, got, c.want)
		}
	}
}

// TestSetAgainKeepsEveryKindOfValue sets a key, sets it again and reads
// it back, for values of every mode, so that the in-place stores and
// loads convert every type whole.
func TestSetAgainKeepsEveryKindOfValue(t *testing.T) {
	type pair struct{ a, b int32 }
	x, y := 1, 2
	setAgain(t, [8]byte{1, 2, 3, 4, 5, 6, 7, 8}, [8]byte{8, 7, 6, 5, 4, 3, 2, 1})
	setAgain(t, pair{-1, 2}, pair{3, -4})
	setAgain(t, float32(1.5), float32(-2.25))
	setAgain(t, complex64(1+2i), complex64(3-4i))
	setAgain(t, &x, &y)
	setAgain(t, "one", "two")
	setAgain(t, true, false)
	setAgain(t, [2]int{1, 2}, [2]int{3, 4})
	m1, m2 := map[int]int{1: 1}, map[int]int{2: 2}
	m := New[int, map[int]int](WithWheel(newTestWheel(t)))
	defer m.Close()
	m.Set(1, m1, time.Hour)
	m.Set(1, m2, time.Hour)
	if got, ok := m.Get(1); !ok || got[2] != 2 || len(got) != 1 {
		t.Errorf("map value: Get = %v, %v; want %v", got, ok, m2)
	}
}

func setAgain[V comparable](t *testing.T, a, b V) {
	t.Helper()
	m := New[int, V](WithWheel(newTestWheel(t)))
	defer m.Close()
	for _, v := range []V{a, b, a} {
		if err := m.Set(7, v, time.Hour); err != nil {
			t.Fatal(err)
		}
		if got, ok := m.Get(7); !ok || got != v {
			t.Errorf("%T: Get after Set(%v) = %v, %v", v, v, got, ok)
		}
	}
}

// newTestWheel returns a wheel on a virtual clock that stands still,
// closed when t ends.
func newTestWheel(t *testing.T) *timewheel.Wheel {
	w := timewheel.New(timewheel.WithClock(clock.NewVirtual(start)))
	t.Cleanup(func() { w.Close() })
	return w
}
