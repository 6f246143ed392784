package redisserver

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// A Sentinels is a primary with one replica, watched by one Redis
// Sentinel (quorum 1) that promotes the replica once the primary has
// been unreachable for SentinelDownAfter. Each runs in a directory of
// its own. It is not safe for concurrent use.
type Sentinels struct {
	Primary, Replica, Sentinel *Server
	Name                       string // the master name the Sentinel monitors
}

// SentinelDownAfter is the Sentinel's down-after-milliseconds.
const SentinelDownAfter = 500 * time.Millisecond

// StartSentinels starts a primary and its replica with the redis-server
// arguments args (NoPersistence if none), and a Sentinel that monitors
// the primary as name, under dir; it waits until the Sentinel knows the
// replica.
func StartSentinels(dir, name string, args ...string) (ss *Sentinels, err error) {
	if len(args) == 0 {
		args = NoPersistence
	}
	ss = &Sentinels{Name: name}
	defer func() {
		if err != nil {
			ss.Stop()
		}
	}()
	sub := func(n string) (string, error) {
		d := filepath.Join(dir, n)
		return d, os.MkdirAll(d, 0o755)
	}
	d, err := sub("primary")
	if err != nil {
		return nil, err
	}
	pargs := append([]string{"--repl-diskless-sync-delay", "0"}, args...)
	if ss.Primary, err = start(&Server{dir: d, orphan: true, args: pargs}); err != nil {
		return nil, err
	}
	host, port, _ := net.SplitHostPort(ss.Primary.Addr)
	if d, err = sub("replica"); err != nil {
		return nil, err
	}
	rargs := append([]string{"--replicaof", host, port}, pargs...)
	if ss.Replica, err = start(&Server{dir: d, orphan: true, args: rargs}); err != nil {
		return nil, err
	}
	// The Sentinel learns of the replica from the primary's INFO, which
	// it asks at once and then every 10s: start it once the replica is in.
	deadline := time.Now().Add(30 * time.Second)
	for {
		if repl, err := ss.Primary.Info("replication"); err == nil && repl["connected_slaves"] == "1" {
			break
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("redisserver: the replica did not connect in 30s")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if d, err = sub("sentinel"); err != nil {
		return nil, err
	}
	conf := filepath.Join(d, "sentinel.conf")
	text := fmt.Sprintf("sentinel monitor %[1]s %[2]s %[3]s 1\nsentinel down-after-milliseconds %[1]s %[4]d\nsentinel failover-timeout %[1]s 10000\n",
		name, host, port, SentinelDownAfter.Milliseconds())
	if err := os.WriteFile(conf, []byte(text), 0o644); err != nil {
		return nil, err
	}
	if ss.Sentinel, err = start(&Server{dir: d, orphan: true, pre: []string{conf, "--sentinel"}, ready: "+monitor master"}); err != nil {
		return nil, err
	}
	for {
		repl, err := ss.Replica.Info("replication")
		if err == nil && repl["master_link_status"] == "up" {
			if v, err := ss.Sentinel.Do("SENTINEL", "REPLICAS", name); err == nil && len(v.([]any)) == 1 {
				return ss, nil
			}
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("redisserver: the Sentinel did not find the replica in 30s: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Addr returns the Sentinel's address: a failover client's seed.
func (ss *Sentinels) Addr() string { return ss.Sentinel.Addr }

// KillPrimary kills the primary with SIGKILL and waits until the
// Sentinel has promoted the replica and names it. It returns how long
// the name had no primary, as the Sentinel tells: from the kill to the
// Sentinel's answer.
func (ss *Sentinels) KillPrimary() (time.Duration, error) {
	t0 := time.Now()
	ss.Primary.Stop()
	deadline := t0.Add(30 * time.Second)
	for {
		v, err := ss.Sentinel.Do("SENTINEL", "GET-MASTER-ADDR-BY-NAME", ss.Name)
		if a, ok := v.([]any); ok && err == nil && len(a) == 2 {
			if net.JoinHostPort(a[0].(string), a[1].(string)) == ss.Replica.Addr {
				if repl, err := ss.Replica.Info("replication"); err == nil && repl["role"] == "master" {
					return time.Since(t0), nil
				}
			}
		}
		if time.Now().After(deadline) {
			return 0, fmt.Errorf("redisserver: the Sentinel did not promote %s in 30s", ss.Replica.Addr)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Stop kills the three servers.
func (ss *Sentinels) Stop() {
	for _, s := range []*Server{ss.Sentinel, ss.Replica, ss.Primary} {
		if s != nil {
			s.Stop()
		}
	}
}

// SentinelsForTest starts Sentinels for a test in a temporary directory,
// and stops them when tb ends. It skips or fails tb as ForTest does.
func SentinelsForTest(tb testing.TB, name string, args ...string) *Sentinels {
	tb.Helper()
	ss, err := StartSentinels(tb.TempDir(), name, args...)
	skipOrFail(tb, err)
	tb.Cleanup(ss.Stop)
	return ss
}
