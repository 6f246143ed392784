package expiry

import (
	"math"
	"reflect"
	"sync/atomic"
	"unsafe"
)

// valMode says how a Set replaces the value of an entry that Gets read
// without the lock (see Locking, on shard).
//
// A value of one pointer (a *T, a map, a chan, a func) is stored in place
// with an atomic store. So is one of a machine word or four bytes without
// pointers (an int, a float64, a small struct of such). A Get loads it
// with an atomic load. Any other value (a string, a slice, an interface,
// a larger struct) cannot be stored in one atomic step. A Set puts it in
// a new entry, which takes the old one's place (copy on write). otter
// makes the same choice, with a box for the value where we copy the
// entry.
type valMode uint8

const (
	valCopy    valMode = iota // a new entry per Set
	valWord64                 // 8 bytes without pointers, in place
	valWord32                 // 4 bytes without pointers, in place
	valPointer                // one pointer, in place
)

// valModeOf returns the mode of values of type t.
func valModeOf(t reflect.Type) valMode {
	switch t.Kind() {
	case reflect.Pointer, reflect.UnsafePointer, reflect.Map, reflect.Chan, reflect.Func:
		return valPointer
	}
	if !pointerFree(t) {
		return valCopy
	}
	switch t.Size() {
	case 8:
		return valWord64
	case 4:
		return valWord32
	}
	return valCopy
}

// pointerFree reports whether values of type t hold no pointer.
func pointerFree(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.Complex64, reflect.Complex128:
		return true
	case reflect.Array:
		return t.Len() == 0 || pointerFree(t.Elem())
	case reflect.Struct:
		for i := range t.NumField() {
			if !pointerFree(t.Field(i).Type) {
				return false
			}
		}
		return true
	}
	return false
}

// writing is the deadline of an entry that a writer holding the shard's
// lock has frozen (see Locking, on shard). A Get or Touch that reads it
// waits, or takes the lock.
const writing = math.MinInt64

// freeze takes e for a writer that holds its shard's lock: it swaps e's
// deadline for writing and returns the deadline it had, which no Touch
// can change from then on. The writer then stores the deadline e keeps,
// or takes e out of the map, leaving it writing. Every writer that reads
// a deadline to decide what to do with an entry freezes it first, so a
// Touch that returned true is never lost (see Locking, on shard).
func (e *entry[K, V]) freeze() int64 { return e.deadline.Swap(writing) }

// loadVal returns e's value, read atomically if m's values are stored in
// place. e.val is the entry's first field, so it is aligned for the
// atomics however V is aligned.
func (m *Map[K, V]) loadVal(e *entry[K, V]) V {
	p := unsafe.Pointer(&e.val)
	switch m.vals {
	case valWord64:
		u := atomic.LoadUint64((*uint64)(p))
		return *(*V)(unsafe.Pointer(&u))
	case valWord32:
		u := atomic.LoadUint32((*uint32)(p))
		return *(*V)(unsafe.Pointer(&u))
	case valPointer:
		u := atomic.LoadPointer((*unsafe.Pointer)(p))
		return *(*V)(unsafe.Pointer(&u))
	}
	return e.val
}

// storeValLocked stores v in e, which Gets may be reading, in place; m's
// values must be stored so. The caller holds e's shard's lock, which its
// callers' lock checks cover, and has set e's deadline to writing.
func (m *Map[K, V]) storeValLocked(e *entry[K, V], v V) {
	p := unsafe.Pointer(&e.val)
	switch m.vals {
	case valWord64:
		atomic.StoreUint64((*uint64)(p), *(*uint64)(unsafe.Pointer(&v)))
	case valWord32:
		atomic.StoreUint32((*uint32)(p), *(*uint32)(unsafe.Pointer(&v)))
	case valPointer:
		atomic.StorePointer((*unsafe.Pointer)(p), *(*unsafe.Pointer)(unsafe.Pointer(&v)))
	default:
		panic("expiry: internal error: storing in place a value that is copied on write")
	}
}

// readVal returns e's value and the deadline it was stored with, and ok.
// It returns ok false if Sets kept storing e's value under it; the
// caller must then read under the lock. It reads the deadline before and
// after the value, and trusts a value read between two equal deadlines
// (see Locking, on shard).
func (m *Map[K, V]) readVal(e *entry[K, V]) (v V, d int64, ok bool) {
	for range lookupTries {
		if d = e.deadline.Load(); d != writing {
			v = m.loadVal(e)
			if e.deadline.Load() == d {
				return v, d, true
			}
		}
	}
	return v, 0, false
}
