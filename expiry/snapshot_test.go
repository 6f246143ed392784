package expiry

import (
	"bytes"
	"encoding/binary"
	"errors"
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

func TestSnapshotUnencodable(t *testing.T) {
	type hidden struct{ x int }
	m := New[string, hidden](WithWheel(timewheel.New(timewheel.WithClock(clock.NewVirtual(start)))))
	defer m.Close()
	m.Set("c", hidden{1}, time.Minute)
	err := m.Snapshot(new(bytes.Buffer))
	if err == nil || !strings.HasPrefix(err.Error(), "expiry: Snapshot: ") {
		t.Fatalf("Snapshot of a value without exported fields: %v", err)
	}
}
