package expiry

import (
	"testing"
	"time"
)

// With WithSliding, a Get renews the entry lazily, but not when the renewal
// would move its deadline by no more than min(ttl/16, granularity); the
// entry leaves a ttl after its last renewing read, at the end of that
// span.
func TestSliding(t *testing.T) {
	for _, sliding := range []bool{false, true} {
		var opts []Option
		if sliding {
			opts = append(opts, WithSliding())
		}
		f := newFixture(t, append(opts, WithGranularity(10*time.Millisecond))...)
		f.set("s", 1, time.Second)
		f.advanceTo(500 * time.Millisecond)
		f.wantGet("s", 1, true) // sliding: due at 1.5s
		f.advanceTo(510 * time.Millisecond)
		f.wantGet("s", 1, true) // within the tolerance, 10ms: writes nothing
		wantTTL := map[bool]time.Duration{false: 490 * time.Millisecond, true: 990 * time.Millisecond}[sliding]
		if ttl, _ := f.m.TTL("s"); ttl != wantTTL {
			t.Fatalf("sliding=%v: TTL at 510ms = %v, want %v", sliding, ttl, wantTTL)
		}
		f.verify()
		if !sliding {
			f.advanceTo(time.Second)
			f.wantGet("s", 0, false)
			f.wantEvicted(evicted{"s", 1, Expired, time.Second})
			continue
		}
		f.advanceTo(1400 * time.Millisecond)
		f.wantGet("s", 1, true) // due at 2.4s
		f.advanceTo(2399 * time.Millisecond)
		f.wantEvicted()
		if _, ok := f.m.TTL("s"); !ok { // TTL does not renew
			t.Fatal("entry gone before its deadline")
		}
		f.advanceTo(2400 * time.Millisecond)
		f.wantGet("s", 0, false)
		f.wantEvicted(evicted{"s", 1, Expired, 2400 * time.Millisecond})
	}
}

// SetTTL changes one entry's ttl without its value: an earlier deadline
// moves the entry to its bucket at once, a later one lazily; Touch renews
// by the new ttl.
func TestSetTTL(t *testing.T) {
	f := newFixture(t, WithGranularity(time.Millisecond))
	f.set("k", 1, time.Hour)
	f.set("j", 2, time.Hour)
	if ok, err := f.m.SetTTL("k", time.Second); !ok || err != nil {
		t.Fatalf("SetTTL(k, 1s) = %v, %v", ok, err)
	}
	if ok, err := f.m.SetTTL("j", 2*time.Hour); !ok || err != nil {
		t.Fatalf("SetTTL(j, 2h) = %v, %v", ok, err)
	}
	if ok, err := f.m.SetTTL("nope", time.Second); ok || err != nil {
		t.Fatalf("SetTTL(nope) = %v, %v", ok, err)
	}
	f.verify()
	f.advanceTo(500 * time.Millisecond)
	f.m.Touch("k") // 1.5s
	f.advanceTo(1500 * time.Millisecond)
	f.wantEvicted(evicted{"k", 1, Expired, 1500 * time.Millisecond})
	f.advanceTo(time.Hour)
	f.wantGet("j", 2, true)
	f.advanceTo(2 * time.Hour)
	f.wantEvicted(evicted{"j", 2, Expired, 2 * time.Hour})
}

// An entry set with NoTTL stays, beside entries that expire; with a
// capacity it is evicted last.
func TestNoTTL(t *testing.T) {
	f := newFixture(t, WithCapacity(2), WithGranularity(time.Second))
	f.set("forever", 1, NoTTL)
	f.set("hour", 2, time.Hour)
	f.m.Touch("forever")
	f.advanceTo(2 * time.Hour)
	f.wantEvicted(evicted{"hour", 2, Expired, time.Hour})
	f.set("a", 3, time.Hour)
	f.set("b", 4, time.Hour) // full: a goes, the closest to expiry
	f.wantEvicted(evicted{"a", 3, Capacity, 2 * time.Hour})
	f.advanceTo(100000 * time.Hour)
	f.wantGet("forever", 1, true)
}
