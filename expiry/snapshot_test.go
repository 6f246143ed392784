package expiry

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/timewheel/timewheel"
	"github.com/timewheel/timewheel/clock"
)

type session struct {
	User string
	Hits int
}

// newSessions returns a map of sessions on a virtual clock started at t.
func newSessions(t *testing.T, at time.Time, opts ...Option) (*Map[string, session], *clock.Virtual) {
	t.Helper()
	clk := clock.NewVirtual(at)
	w := timewheel.New(timewheel.WithClock(clk), timewheel.WithExecutor(timewheel.Inline()))
	m := New[string, session](append([]Option{WithWheel(w), WithInlineCallbacks()}, opts...)...)
	t.Cleanup(func() {
		m.Close()
		w.Close()
	})
	return m, clk
}

func TestSnapshotRoundTrip(t *testing.T) {
	src, clk := newSessions(t, start)
	for i, ttl := range []time.Duration{time.Minute, 2 * time.Minute, time.Hour} {
		src.Set(string(rune('a'+i)), session{"user", i}, ttl)
	}
	src.Set("gone", session{}, time.Second)
	clk.Advance(30 * time.Second) // gone expires before the snapshot
	var buf bytes.Buffer
	if err := src.Snapshot(&buf); err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(buf.Bytes(), []byte("TWEXPIRY\x00\x00\x00\x01")) {
		t.Fatalf("header %q", buf.Bytes()[:12])
	}

	// The process is down for a minute and a half: a (deadline 1m) has
	// expired meanwhile; b and c have 30s and 58m30s left.
	var evicted []string
	dst, dclk := newSessions(t, start.Add(90*time.Second), WithOnEvict(func(k string, s session, why Reason) {
		evicted = append(evicted, k+" "+why.String())
	}))
	dst.Set("b", session{"old", 0}, time.Hour)
	if err := dst.Restore(&buf); err != nil {
		t.Fatal(err)
	}
	if err := dst.verify(); err != nil {
		t.Fatal(err)
	}
	if want := "a expired,b replaced"; strings.Join(evicted, ",") != want {
		t.Fatalf("evicted %v, want %v", evicted, want)
	}
	if s, ok := dst.Get("b"); !ok || s != (session{"user", 1}) {
		t.Fatalf("b = %v, %v", s, ok)
	}
	for k, want := range map[string]time.Duration{"b": 30 * time.Second, "c": time.Hour - 90*time.Second} {
		if ttl, ok := dst.TTL(k); !ok || ttl != want {
			t.Fatalf("TTL(%s) = %v, want %v", k, ttl, want)
		}
	}
	dst.Touch("b") // Touch renews the ttl the entry was set with
	if ttl, _ := dst.TTL("b"); ttl != 2*time.Minute {
		t.Fatalf("TTL(b) after Touch = %v, want 2m", ttl)
	}
	dclk.Advance(2 * time.Minute)
	if want := "a expired,b replaced,b expired"; strings.Join(evicted, ",") != want {
		t.Fatalf("evicted %v, want %v", evicted, want)
	}
}

func TestRestoreBadInput(t *testing.T) {
	src, _ := newSessions(t, start)
	src.Set("a", session{"u", 1}, time.Minute)
	src.Set("b", session{"v", 2}, time.Hour)
	var buf bytes.Buffer
	if err := src.Snapshot(&buf); err != nil {
		t.Fatal(err)
	}
	good := buf.Bytes()
	dst, _ := newSessions(t, start)
	dst.Set("x", session{}, time.Minute)
	check := func(what string, in []byte, want error) {
		t.Helper()
		err := dst.Restore(bytes.NewReader(in))
		if !errors.Is(err, want) || !strings.HasPrefix(err.Error(), "expiry: ") {
			t.Fatalf("%s: error %v, want %v", what, err, want)
		}
		if dst.Len() != 1 {
			t.Fatalf("%s: a failed Restore changed the map", what)
		}
	}
	for n := range len(good) {
		check("truncated", good[:n], ErrCorrupt)
	}
	for i := range good {
		bad := bytes.Clone(good)
		bad[i] ^= 0x10
		want := ErrCorrupt
		if i >= 8 && i < 12 {
			want = ErrVersion
		}
		check("flipped", bad, want)
	}
	future := bytes.Clone(good)
	binary.BigEndian.PutUint32(future[8:], 2)
	err := dst.Restore(bytes.NewReader(future))
	if want := "expiry: unsupported snapshot version 2: this build reads versions 1 to 1"; err == nil || err.Error() != want {
		t.Fatalf("future version: %v, want %q", err, want)
	}
	check("not a snapshot", []byte("{\"a\": 1}\n and then some more text"), ErrCorrupt)
	check("empty", nil, ErrCorrupt)
	if err := dst.Restore(bytes.NewReader(good)); err != nil {
		t.Fatalf("good input after bad ones: %v", err)
	}
	dst.Close()
	if err := dst.Restore(bytes.NewReader(good)); !errors.Is(err, ErrClosed) {
		t.Fatalf("Restore on a closed map: %v", err)
	}
}

// A TTL that puts the deadline past 2262, the end of Unix nanoseconds,
// survives a snapshot round trip as a far deadline, at least as far as it
// was, with no callback: the package accepts any positive time.Duration,
// and "effectively forever" TTLs are common. A deadline before 2262 comes
// back to the nanosecond.
func TestSnapshotFarDeadline(t *testing.T) {
	for _, tc := range []struct {
		ttl   time.Duration
		exact bool // the deadline fits in Unix nanoseconds
	}{
		{200 * 365 * 24 * time.Hour, true},
		{250 * 365 * 24 * time.Hour, false},
		{math.MaxInt64, false},
	} {
		t.Run(tc.ttl.String(), func(t *testing.T) {
			var evicted []string
			src, _ := newSessions(t, start)
			if err := src.Set("forever", session{"u", 1}, tc.ttl); err != nil {
				t.Fatal(err)
			}
			before, _ := src.TTL("forever")
			var buf bytes.Buffer
			if err := src.Snapshot(&buf); err != nil {
				t.Fatal(err)
			}
			dst, _ := newSessions(t, start.Add(time.Minute), WithOnEvict(func(k string, _ session, why Reason) {
				evicted = append(evicted, k+" "+why.String())
			}))
			if err := dst.Restore(&buf); err != nil {
				t.Fatal(err)
			}
			after, ok := dst.TTL("forever")
			if !ok || len(evicted) > 0 {
				t.Fatalf("ttl %v: entry lost by the round trip (TTL before %v); callbacks %v", tc.ttl, before, evicted)
			}
			switch {
			case tc.exact && after != before-time.Minute:
				t.Fatalf("ttl %v: TTL %v before, %v a minute later after the round trip", tc.ttl, before, after)
			case after < before-time.Minute:
				t.Fatalf("ttl %v: TTL %v before, %v a minute later after the round trip", tc.ttl, before, after)
			}
			if v, ok := dst.Get("forever"); !ok || v != (session{"u", 1}) {
				t.Fatalf("ttl %v: Get after the round trip = %v, %v", tc.ttl, v, ok)
			}
			if !dst.Touch("forever") {
				t.Fatalf("ttl %v: Touch after the round trip = false", tc.ttl)
			}
			if after, _ := dst.TTL("forever"); after != tc.ttl {
				t.Fatalf("ttl %v: TTL after Touch %v: the ttl was not kept", tc.ttl, after)
			}
		})
	}
}

// FuzzRestore feeds Restore damaged snapshots, with the checksum fixed up
// so that damage inside the gob body reaches the decoder and the map:
// Restore must not panic, must fail only with ErrCorrupt or ErrVersion,
// and must leave the map as it was when it fails. When it succeeds, a day
// later only the entries it read with a deadline beyond that day are left.
func FuzzRestore(f *testing.F) {
	clk := clock.NewVirtual(start)
	w := timewheel.New(timewheel.WithClock(clk), timewheel.WithExecutor(timewheel.Inline()))
	src := New[string, session](WithWheel(w), WithInlineCallbacks())
	for i := range 5 {
		src.Set(fmt.Sprint("k", i), session{"u", i}, time.Duration(i+1)*time.Minute)
	}
	src.Set("far", session{"u", 5}, math.MaxInt64)
	var buf bytes.Buffer
	if err := src.Snapshot(&buf); err != nil {
		f.Fatal(err)
	}
	src.Close()
	w.Close()
	f.Add(buf.Bytes(), true)
	f.Add([]byte("TWEXPIRY\x00\x00\x00\x01"), true)
	f.Fuzz(restoreBody)
}

func restoreBody(t *testing.T, in []byte, fix bool) {
	if fix && len(in) >= 16 {
		binary.BigEndian.PutUint32(in[len(in)-4:], crc32.Checksum(in[:len(in)-4], crc32.MakeTable(crc32.Castagnoli)))
	}
	clk := clock.NewVirtual(start)
	w := timewheel.New(timewheel.WithClock(clk), timewheel.WithExecutor(timewheel.Inline()))
	defer w.Close()
	m := New[string, session](WithWheel(w), WithInlineCallbacks(), WithCapacity(3))
	defer m.Close()
	m.Set("keep", session{"x", 1}, time.Hour)
	err := m.Restore(bytes.NewReader(in))
	if err != nil {
		if !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrVersion) {
			t.Fatalf("Restore: %v", err)
		}
		if v, ok := m.Get("keep"); !ok || v != (session{"x", 1}) || m.Len() != 1 {
			t.Fatalf("failed Restore changed the map")
		}
	}
	if err := m.verify(); err != nil {
		t.Fatal(err)
	}
	// the entries read whose deadline is more than a day away, by the last
	// record of each key
	later := map[string]bool{}
	if err == nil {
		recs, err := readSnapshot[string, session](bytes.NewReader(in))
		if err != nil {
			t.Fatalf("Restore read what readSnapshot does not: %v", err)
		}
		day := start.Add(24 * time.Hour).UnixNano()
		for _, rec := range recs {
			later[rec.Key] = rec.Deadline > day
		}
	}
	clk.Advance(24 * time.Hour)
	for k := range m.All() {
		if !later[k] {
			t.Fatalf("%q left after a day", k)
		}
	}
	if err := m.verify(); err != nil {
		t.Fatal(err)
	}
}
