package cron_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/timewheel/timewheel/cron"
)

func TestSnapshotRoundTrip(t *testing.T) {
	ny := zone(t, "America/New_York")
	from := time.Date(2026, 1, 5, 12, 0, 0, 0, ny) // a Monday
	old := newFixture(t, from)
	old.add("daily", "0 9 * * *", cron.InZone("America/New_York"))
	old.add("monthly", "0 9 12 * *", cron.InZone("America/New_York"))
	old.add("changed", "0 9 * * *", cron.InZone("America/New_York"))
	old.add("dropped", "0 9 * * *", cron.InZone("America/New_York"))
	var buf bytes.Buffer
	if err := old.s.Snapshot(&buf); err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(buf.Bytes(), []byte("TWCRONJB\x00\x00\x00\x01")) {
		t.Fatalf("header %q", buf.Bytes()[:12])
	}

	// The process is down from Monday noon to Wednesday noon: the daily
	// run of Tuesday 9:00 was missed.
	f := newFixture(t, from.Add(48*time.Hour))
	daily := f.add("daily", "0 9 * * *", cron.InZone("America/New_York"))
	monthly := f.add("monthly", "0 9 12 * *", cron.InZone("America/New_York"))
	changed := f.add("changed", "0 10 * * *", cron.InZone("America/New_York"))
	f.add("new", "@every 1h")
	if err := f.s.Restore(&buf); err != nil {
		t.Fatal(err)
	}
	nine := func(day int) time.Time { return time.Date(2026, 1, day, 9, 0, 0, 0, ny) }
	ten := func(day int) time.Time { return time.Date(2026, 1, day, 10, 0, 0, 0, ny) }
	j, _ := f.s.Job("daily")
	if !j.Next().Equal(nine(6)) {
		t.Fatalf("restored daily Next = %v, want the missed %v", j.Next(), nine(6))
	}
	daily.exact = false // the missed run runs late, at once
	f.clk.Advance(0)
	wantTimes(t, "missed run", daily.take(), []time.Time{nine(6)})
	daily.exact = true
	f.clk.AdvanceTo(nine(12))
	wantTimes(t, "daily", daily.take(), []time.Time{nine(8), nine(9), nine(10), nine(11), nine(12)})
	wantTimes(t, "monthly", monthly.take(), []time.Time{nine(12)})
	f.clk.AdvanceTo(ten(8).AddDate(0, 0, 5))
	// changed has a new spec: the old record does not apply.
	wantTimes(t, "changed", changed.take(), []time.Time{ten(8), ten(9), ten(10), ten(11), ten(12), ten(13)})
}

func TestRestoreBadInput(t *testing.T) {
	from := time.Date(2026, 1, 5, 12, 0, 0, 0, time.UTC)
	old := newFixture(t, from)
	old.add("a", "0 9 * * *")
	old.add("b", "@every 1h")
	var buf bytes.Buffer
	if err := old.s.Snapshot(&buf); err != nil {
		t.Fatal(err)
	}
	good := buf.Bytes()
	f := newFixture(t, from.Add(time.Minute))
	f.add("a", "0 9 * * *")
	f.add("b", "@every 1h")
	next := func() string {
		var s []string
		for _, j := range f.s.Jobs() {
			s = append(s, j.Next().String())
		}
		return strings.Join(s, ",")
	}
	before := next()
	check := func(what string, in []byte, want error) {
		t.Helper()
		err := f.s.Restore(bytes.NewReader(in))
		if !errors.Is(err, want) || !strings.HasPrefix(err.Error(), "cron: ") {
			t.Fatalf("%s: error %v, want %v", what, err, want)
		}
		if next() != before {
			t.Fatalf("%s: a failed Restore changed the jobs", what)
		}
	}
	for n := range len(good) {
		check("truncated", good[:n], cron.ErrCorrupt)
	}
	for i := range good {
		bad := bytes.Clone(good)
		bad[i] ^= 0x04
		want := cron.ErrCorrupt
		if i >= 8 && i < 12 {
			want = cron.ErrVersion
		}
		check("flipped", bad, want)
	}
	future := bytes.Clone(good)
	binary.BigEndian.PutUint32(future[8:], 9)
	err := f.s.Restore(bytes.NewReader(future))
	if want := "cron: unsupported snapshot version 9: this build reads versions 1 to 1"; err == nil || err.Error() != want {
		t.Fatalf("future version: %v, want %q", err, want)
	}
	check("an expiry snapshot", []byte("TWEXPIRY\x00\x00\x00\x01rest"), cron.ErrCorrupt)
	if err := f.s.Restore(bytes.NewReader(good)); err != nil {
		t.Fatalf("good input after bad ones: %v", err)
	}
	if next() == before {
		t.Fatal("Restore changed nothing") // b's next run moves back a minute
	}
}
