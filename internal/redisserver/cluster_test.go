package redisserver

import (
	"fmt"
	"testing"
)

// The harness on a real cluster: a key written to its slot's primary
// reaches the replica, survives a move of its slot, and a kill of the
// primary that then serves it; the killed node rejoins as a replica;
// redis-cli --cluster reshard moves slots.
func TestCluster(t *testing.T) {
	c := ClusterForTest(t)
	const key = "{harness}:k"
	for _, k := range []string{key, "harness", "a{b}c", "a{}b", "{}x", "a{", "123456789", ""} {
		if v, err := c.Nodes[0].Do("CLUSTER", "KEYSLOT", k); err != nil || v != int64(Slot(k)) {
			t.Errorf("Slot(%q) = %d, CLUSTER KEYSLOT: %v, %v", k, Slot(k), v, err)
		}
	}
	slot := Slot(key)
	p, err := c.Primary(slot)
	if err != nil {
		t.Fatal(err)
	}
	setWait := func(s *Server) {
		t.Helper()
		v, err := s.Pipeline([]string{"SET", key, "v"}, []string{"WAIT", "1", "5000"})
		if err != nil || v[0] != "OK" || v[1] != int64(1) {
			t.Fatalf("SET, WAIT on %s: %v, %v", s.Addr, v, err)
		}
	}
	setWait(p)

	ps, err := c.Primaries()
	if err != nil || len(ps) != 3 {
		t.Fatalf("Primaries: %v, %v", ps, err)
	}
	to := ps[0]
	if to == p {
		to = ps[1]
	}
	if err := c.MoveSlot(slot, to); err != nil {
		t.Fatal(err)
	}
	if q, err := c.Primary(slot); err != nil || q != to {
		t.Fatalf("after MoveSlot, Primary = %v, %v; want %s", q, err, to.Addr)
	}
	if v, err := to.Do("GET", key); err != nil || v != "v" {
		t.Fatalf("GET on the new primary: %v, %v", v, err)
	}
	if _, err := p.Do("GET", key); err == nil || err.Error() != fmt.Sprintf("MOVED %d %s", slot, to.Addr) {
		t.Fatalf("GET on the old primary: %v", err)
	}
	setWait(to) // the moved key reached to's replica with the MIGRATE; this waits for it

	killed, promoted, down, err := c.KillPrimary(slot)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("slot %d without a primary for %v", slot, down)
	if killed != to || promoted == to {
		t.Fatalf("KillPrimary killed %s, promoted %s; want %s killed", killed.Addr, promoted.Addr, to.Addr)
	}
	if v, err := promoted.Do("GET", key); err != nil || v != "v" {
		t.Fatalf("GET on the promoted replica: %v, %v", v, err)
	}
	if err := c.Rejoin(killed); err != nil {
		t.Fatal(err)
	}
	if r, err := c.Replica(promoted); err != nil || r != killed {
		t.Fatalf("after Rejoin, Replica = %v, %v; want %s", r, err, killed.Addr)
	}

	ps, _ = c.Primaries()
	if err := c.Reshard(ps[1], ps[2], 10); err != nil {
		t.Fatal(err)
	}
	if err := c.WaitHealthy(10e9); err != nil {
		t.Fatal(err)
	}
}

// A Sentinel promotes the replica of a killed primary, which has what
// the primary had.
func TestSentinels(t *testing.T) {
	ss := SentinelsForTest(t, "harness")
	if v, err := ss.Primary.Pipeline([]string{"SET", "k", "v"}, []string{"WAIT", "1", "5000"}); err != nil || v[1] != int64(1) {
		t.Fatalf("SET, WAIT: %v, %v", v, err)
	}
	down, err := ss.KillPrimary()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("no primary for %v", down)
	if v, err := ss.Replica.Do("GET", "k"); err != nil || v != "v" {
		t.Fatalf("GET on the promoted replica: %v, %v", v, err)
	}
}
