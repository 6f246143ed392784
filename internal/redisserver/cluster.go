package redisserver

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// ErrCLINotFound is returned by StartCluster when redis-cli is not on the
// PATH.
var ErrCLINotFound = errors.New("redisserver: redis-cli not found on PATH; install it (Debian, Ubuntu: apt-get install -y redis-tools, which redis-server pulls in)")

// NodeTimeout is the cluster-node-timeout of a Cluster's nodes: a primary
// unreachable this long is marked failing, and its replica is promoted
// about a second later (the replica's election delay, 0.5 to 1 s).
const NodeTimeout = time.Second

// A Cluster is a Redis Cluster of six redis-server processes on loopback
// ports, each in a directory of its own: three primaries that share the
// 16384 slots, each with one replica. It is created as an operator would,
// by redis-cli --cluster create, and its nodes run with
//
//	--cluster-node-timeout 1000          failover within about 2 s of a kill
//	--cluster-replica-validity-factor 0  a replica always takes over
//	--cluster-require-full-coverage no   the other primaries serve on while one is down
//	--repl-diskless-sync-delay 0         a (re)joining replica syncs at once
//
// Its nodes die with the process that started them (Linux), should it
// exit without Stop. A Cluster is not safe for concurrent use.
type Cluster struct {
	// Nodes are the six nodes, running or stopped. Nodes[0:3] were the
	// primaries at creation and Nodes[3:6] their replicas, but a failover
	// swaps the roles: ask Primary and Replica.
	Nodes []*Server
	ids   map[*Server]string // node ID
}

// StartCluster starts a cluster in six directories under dir, with the
// extra redis-server arguments args for every node (persistence: none by
// default; AOFEverySec for example), and waits until every node agrees
// on the slots and every replica is in sync.
func StartCluster(dir string, args ...string) (c *Cluster, err error) {
	if _, err := exec.LookPath("redis-server"); err != nil {
		return nil, ErrNotFound
	}
	cli, err := exec.LookPath("redis-cli")
	if err != nil {
		return nil, ErrCLINotFound
	}
	if len(args) == 0 {
		args = NoPersistence
	}
	c = &Cluster{ids: map[*Server]string{}}
	defer func() {
		if err != nil {
			c.Stop()
		}
	}()
	for i := range 6 {
		d := filepath.Join(dir, "node"+strconv.Itoa(i))
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, fmt.Errorf("redisserver: %w", err)
		}
		s, err := startNode(d, args)
		if err != nil {
			return nil, err
		}
		c.Nodes = append(c.Nodes, s)
	}
	for _, s := range c.Nodes {
		id, err := s.Do("CLUSTER", "MYID")
		if err != nil {
			return nil, err
		}
		c.ids[s] = id.(string)
	}
	create := []string{"--cluster", "create"}
	for _, s := range c.Nodes {
		create = append(create, s.Addr)
	}
	create = append(create, "--cluster-replicas", "1", "--cluster-yes")
	if out, err := exec.Command(cli, create...).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("redisserver: redis-cli --cluster create: %v: %s", err, out)
	}
	if err := c.WaitHealthy(30 * time.Second); err != nil {
		return nil, err
	}
	return c, nil
}

// startNode starts a cluster node in dir, with its bus on a free port.
func startNode(dir string, args []string) (*Server, error) {
	var err error
	for range 3 { // another process may take the bus port
		var l net.Listener
		l, err = net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("redisserver: no free port: %w", err)
		}
		bus := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
		l.Close()
		var s *Server
		s, err = start(&Server{dir: dir, orphan: true, args: append([]string{
			"--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
			"--cluster-port", bus,
			"--cluster-node-timeout", strconv.Itoa(int(NodeTimeout / time.Millisecond)),
			"--cluster-replica-validity-factor", "0",
			"--cluster-require-full-coverage", "no",
			"--repl-diskless-sync-delay", "0",
		}, args...)})
		if err == nil {
			return s, nil
		}
	}
	return nil, err
}

// Addrs returns the addresses of the running nodes: a cluster client's
// seeds.
func (c *Cluster) Addrs() []string {
	var a []string
	for _, s := range c.Nodes {
		if s.cmd != nil {
			a = append(a, s.Addr)
		}
	}
	return a
}

// Stop kills every node.
func (c *Cluster) Stop() {
	for _, s := range c.Nodes {
		s.Stop()
	}
}

// ID returns a node's cluster node ID.
func (c *Cluster) ID(s *Server) string { return c.ids[s] }

// Primaries returns the running primaries that serve slots, in the order
// of Nodes. (A node's view of a new cluster may still show a replica as a
// primary, with no slots.)
func (c *Cluster) Primaries() ([]*Server, error) {
	view, err := c.view()
	if err != nil {
		return nil, err
	}
	var ps []*Server
	for _, s := range c.Nodes {
		if n, ok := view[c.ids[s]]; ok && s.cmd != nil && n.master == "" && len(n.slots) > 0 {
			ps = append(ps, s)
		}
	}
	return ps, nil
}

// Primary returns the primary that serves slot.
func (c *Cluster) Primary(slot int) (*Server, error) {
	view, err := c.view()
	if err != nil {
		return nil, err
	}
	for id, n := range view {
		if n.master == "" && n.serves(slot) && !n.failed {
			return c.byID(id)
		}
	}
	return nil, fmt.Errorf("redisserver: no primary serves slot %d", slot)
}

// Replica returns a running replica of primary.
func (c *Cluster) Replica(primary *Server) (*Server, error) {
	view, err := c.view()
	if err != nil {
		return nil, err
	}
	for _, s := range c.Nodes {
		if n, ok := view[c.ids[s]]; ok && s.cmd != nil && n.master == c.ids[primary] {
			return s, nil
		}
	}
	return nil, fmt.Errorf("redisserver: primary %s has no running replica", primary.Addr)
}

func (c *Cluster) byID(id string) (*Server, error) {
	for s, sid := range c.ids {
		if sid == id {
			return s, nil
		}
	}
	return nil, fmt.Errorf("redisserver: unknown node %s", id)
}

// KillPrimary kills the primary that serves slot with SIGKILL, as a crash
// would, resumes its replica if Pause stopped it, and waits until the
// replica has been promoted and every running node agrees. It returns the killed node (Rejoin starts it again) and
// the promoted one, and how long the slot had no primary: from the kill to
// the promotion, as the promoted node reports it.
func (c *Cluster) KillPrimary(slot int) (killed, promoted *Server, down time.Duration, err error) {
	p, err := c.Primary(slot)
	if err != nil {
		return nil, nil, 0, err
	}
	r, err := c.Replica(p)
	if err != nil {
		return nil, nil, 0, err
	}
	t0 := time.Now()
	p.Stop()
	r.Resume()
	deadline := t0.Add(30 * time.Second)
	for {
		if info, err := r.Info("replication"); err == nil && info["role"] == "master" {
			down = time.Since(t0)
			break
		}
		if time.Now().After(deadline) {
			return nil, nil, 0, fmt.Errorf("redisserver: replica %s of killed primary %s not promoted in 30s", r.Addr, p.Addr)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := c.waitAgreed(time.Until(deadline), false); err != nil {
		return nil, nil, 0, err
	}
	return p, r, down, nil
}

// Pause stops the server's process (SIGSTOP): it reads, answers and
// replicates nothing until Resume, as under a long stall (a swapped-out
// process, a congested link). Writes a primary makes meanwhile wait in
// its buffers for a paused replica; KillPrimary then loses what the
// kernel's socket buffers did not hold. Keep a pause of a cluster node
// under NodeTimeout, or the others mark it failing.
func (s *Server) Pause() {
	if s.cmd != nil {
		s.cmd.Process.Signal(syscall.SIGSTOP)
		s.paused = true
	}
}

// Resume continues a paused server (SIGCONT).
func (s *Server) Resume() {
	if s.cmd != nil {
		s.cmd.Process.Signal(syscall.SIGCONT)
	}
	s.paused = false
}

// answers reports whether the server runs and is not paused: whether the
// cluster's checks may ask it.
func (s *Server) answers() bool { return s.cmd != nil && !s.paused }

// Rejoin starts a node KillPrimary killed again, on its port and
// directory, unless it runs, and waits until it has rejoined as a replica
// in sync and every node agrees.
func (c *Cluster) Rejoin(s *Server) error {
	if s.cmd == nil {
		if err := s.Restart(); err != nil {
			return err
		}
	}
	return c.WaitHealthy(30 * time.Second)
}

// WaitHealthy waits until every node runs, every one reports the cluster
// ok and agrees with the others on which primary serves which slots, and
// every primary has a replica whose link to it is up.
func (c *Cluster) WaitHealthy(limit time.Duration) error {
	for _, s := range c.Nodes {
		if s.cmd == nil {
			return fmt.Errorf("redisserver: node %s is stopped", s.Addr)
		}
	}
	return c.waitAgreed(limit, true)
}

// waitAgreed waits until the running nodes report the cluster ok and
// agree on the slots' primaries (and, if full, every primary has a
// replica in sync).
func (c *Cluster) waitAgreed(limit time.Duration, full bool) error {
	deadline := time.Now().Add(limit)
	var why error
	for {
		if why = c.agreed(full); why == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("redisserver: cluster not healthy in %v: %w", limit, why)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (c *Cluster) agreed(full bool) error {
	var first map[int]string // slot range start -> primary ID
	for _, s := range c.Nodes {
		if !s.answers() {
			continue
		}
		info, err := s.Do("CLUSTER", "INFO")
		if err != nil {
			return err
		}
		if text, _ := info.(string); !strings.Contains(text, "cluster_state:ok") || !strings.Contains(text, "cluster_slots_assigned:16384") {
			return fmt.Errorf("node %s: %s", s.Addr, strings.Join(strings.Fields(text)[:3], " "))
		}
		view, err := nodesOf(s)
		if err != nil {
			return err
		}
		owners := map[int]string{}
		for id, n := range view {
			if n.master != "" || len(n.slots) == 0 {
				continue
			}
			if n.failed {
				return fmt.Errorf("node %s: primary %s serving slots is failing", s.Addr, id)
			}
			for _, r := range n.slots {
				owners[r[0]] = id
			}
		}
		if first == nil {
			first = owners
		} else if !mapsEqual(first, owners) {
			return fmt.Errorf("nodes disagree on the slots: %v and %v", first, owners)
		}
		if full {
			if me := view[c.ids[s]]; me.master != "" {
				repl, err := s.Info("replication")
				if err != nil {
					return err
				}
				if repl["master_link_status"] != "up" {
					return fmt.Errorf("replica %s: link to its primary %s", s.Addr, repl["master_link_status"])
				}
			} else if len(me.slots) > 0 {
				repl, err := s.Info("replication")
				if err != nil {
					return err
				}
				if n, _ := strconv.Atoi(repl["connected_slaves"]); n < 1 {
					return fmt.Errorf("primary %s: no replica connected", s.Addr)
				}
			}
		}
	}
	if first == nil {
		return errors.New("no node running")
	}
	return nil
}

func mapsEqual(a, b map[int]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// A node is a line of CLUSTER NODES.
type node struct {
	addr   string
	master string   // the primary's ID for a replica, "" for a primary
	failed bool     // flagged fail (the cluster agreed; fail?, one node's suspicion, is not)
	slots  [][2]int // the slot ranges a primary serves
}

func (n node) serves(slot int) bool {
	for _, r := range n.slots {
		if r[0] <= slot && slot <= r[1] {
			return true
		}
	}
	return false
}

// view returns the cluster as a running node sees it.
func (c *Cluster) view() (map[string]node, error) {
	var err error
	for _, s := range c.Nodes {
		if !s.answers() {
			continue
		}
		var v map[string]node
		if v, err = nodesOf(s); err == nil {
			return v, nil
		}
	}
	if err == nil {
		err = errors.New("redisserver: no node of the cluster runs")
	}
	return nil, err
}

func nodesOf(s *Server) (map[string]node, error) {
	v, err := s.Do("CLUSTER", "NODES")
	if err != nil {
		return nil, err
	}
	text, _ := v.(string)
	out := map[string]node{}
	for line := range strings.Lines(text) {
		f := strings.Fields(line)
		if len(f) < 8 {
			continue
		}
		flags := strings.Split(f[2], ",")
		n := node{addr: strings.SplitN(f[1], "@", 2)[0], failed: slices.Contains(flags, "fail")}
		if f[3] != "-" {
			n.master = f[3]
		}
		for _, r := range f[8:] {
			if strings.HasPrefix(r, "[") { // a slot migrating or importing
				continue
			}
			lo, hi, ok := strings.Cut(r, "-")
			if !ok {
				hi = lo
			}
			a, err1 := strconv.Atoi(lo)
			b, err2 := strconv.Atoi(hi)
			if err1 == nil && err2 == nil {
				n.slots = append(n.slots, [2]int{a, b})
			}
		}
		out[f[0]] = n
	}
	return out, nil
}

// MoveSlot migrates slot, with its keys, to the primary to, as redis-cli
// --cluster reshard does for each slot it moves: CLUSTER SETSLOT
// IMPORTING on to and MIGRATING on the slot's primary, MIGRATE of the
// keys (all of them in one MIGRATE when they are at most 1000, so that a
// client sees them move at once), then SETSLOT NODE on both and on every
// other primary. While the keys move, a command on them gets an ASK
// redirection or TRYAGAIN, as in any migration.
func (c *Cluster) MoveSlot(slot int, to *Server) error {
	from, err := c.Primary(slot)
	if err != nil {
		return err
	}
	if from == to {
		return nil
	}
	sl := strconv.Itoa(slot)
	host, port, _ := net.SplitHostPort(to.Addr)
	steps := []struct {
		s    *Server
		args []string
	}{
		{to, []string{"CLUSTER", "SETSLOT", sl, "IMPORTING", c.ids[from]}},
		{from, []string{"CLUSTER", "SETSLOT", sl, "MIGRATING", c.ids[to]}},
	}
	for _, st := range steps {
		if _, err := st.s.Do(st.args...); err != nil {
			return fmt.Errorf("redisserver: MoveSlot %d: %v: %w", slot, st.args, err)
		}
	}
	for {
		v, err := from.Do("CLUSTER", "GETKEYSINSLOT", sl, "1000")
		if err != nil {
			return fmt.Errorf("redisserver: MoveSlot %d: %w", slot, err)
		}
		keys, _ := v.([]any)
		if len(keys) == 0 {
			break
		}
		args := []string{"MIGRATE", host, port, "", "0", "10000", "KEYS"}
		for _, k := range keys {
			args = append(args, k.(string))
		}
		if _, err := from.Do(args...); err != nil {
			return fmt.Errorf("redisserver: MoveSlot %d: MIGRATE: %w", slot, err)
		}
	}
	ps, err := c.Primaries()
	if err != nil {
		return err
	}
	order := []*Server{to, from}
	for _, p := range ps {
		if p != to && p != from {
			order = append(order, p)
		}
	}
	for _, p := range order {
		if _, err := p.Do("CLUSTER", "SETSLOT", sl, "NODE", c.ids[to]); err != nil {
			return fmt.Errorf("redisserver: MoveSlot %d: SETSLOT NODE on %s: %w", slot, p.Addr, err)
		}
	}
	return c.waitAgreed(30*time.Second, false)
}

// Lowest returns the lowest slot the primary p serves, -1 if none: the
// first that Reshard moves.
func (c *Cluster) Lowest(p *Server) (int, error) {
	view, err := c.view()
	if err != nil {
		return 0, err
	}
	low := -1
	for _, r := range view[c.ids[p]].slots {
		if low < 0 || r[0] < low {
			low = r[0]
		}
	}
	return low, nil
}

// Reshard moves n slots from the primary from to the primary to with
// redis-cli --cluster reshard (the lowest-numbered slots from serves).
func (c *Cluster) Reshard(from, to *Server, n int) error {
	cli, err := exec.LookPath("redis-cli")
	if err != nil {
		return ErrCLINotFound
	}
	out, err := exec.Command(cli, "--cluster", "reshard", to.Addr, "--cluster-from", c.ids[from],
		"--cluster-to", c.ids[to], "--cluster-slots", strconv.Itoa(n), "--cluster-yes").CombinedOutput()
	if err != nil {
		return fmt.Errorf("redisserver: redis-cli --cluster reshard: %v: %s", err, out)
	}
	return c.waitAgreed(30*time.Second, false)
}

// FlushAll empties every primary (the replicas follow).
func (c *Cluster) FlushAll() error {
	ps, err := c.Primaries()
	if err != nil {
		return err
	}
	for _, p := range ps {
		if _, err := p.Do("FLUSHALL"); err != nil {
			return err
		}
	}
	return nil
}

// Slot returns the Cluster hash slot of key: CRC16 (XMODEM) of its hash
// tag, the part between the first '{' and the next '}' if that is not
// empty, or of the whole key, modulo 16384.
func Slot(key string) int {
	if i := strings.IndexByte(key, '{'); i >= 0 {
		if j := strings.IndexByte(key[i+1:], '}'); j > 0 {
			key = key[i+1 : i+1+j]
		}
	}
	var crc uint16
	for i := 0; i < len(key); i++ {
		crc ^= uint16(key[i]) << 8
		for range 8 {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
	}
	return int(crc) % 16384
}

// ClusterForTest starts a cluster for a test, as StartCluster does in a
// temporary directory, and stops it when tb ends. Without redis-server
// or redis-cli on the PATH it skips tb, unless the environment sets CI,
// where it fails tb (as ForTest does).
func ClusterForTest(tb testing.TB, args ...string) *Cluster {
	tb.Helper()
	c, err := StartCluster(tb.TempDir(), args...)
	skipOrFail(tb, err)
	tb.Cleanup(c.Stop)
	return c
}

// shared is the cluster SharedCluster starts once per process.
var shared struct {
	once sync.Once
	c    *Cluster
	dir  string
	err  error
}

// SharedCluster returns the process's cluster, started by its first call
// (a cluster costs six redis-servers: tests share one), in a temporary
// directory StopSharedCluster removes. It skips or fails tb as
// ClusterForTest does. A test that kills a node must Rejoin it before it
// returns, and one that moves slots may leave them moved: tests find
// primaries by slot. Call StopSharedCluster from TestMain once the tests
// have run.
func SharedCluster(tb testing.TB) *Cluster {
	tb.Helper()
	shared.once.Do(func() {
		shared.dir, shared.err = os.MkdirTemp("", "redisserver-cluster-")
		if shared.err == nil {
			shared.c, shared.err = StartCluster(shared.dir)
		}
	})
	skipOrFail(tb, shared.err)
	if err := shared.c.WaitHealthy(30 * time.Second); err != nil {
		tb.Fatal(err)
	}
	return shared.c
}

// StopSharedCluster stops the cluster SharedCluster started, if any, and
// removes its directory.
func StopSharedCluster() {
	if shared.c != nil {
		shared.c.Stop()
	}
	if shared.dir != "" {
		os.RemoveAll(shared.dir)
	}
}

func skipOrFail(tb testing.TB, err error) {
	tb.Helper()
	if errors.Is(err, ErrNotFound) || errors.Is(err, ErrCLINotFound) {
		if os.Getenv("CI") != "" {
			tb.Fatalf("%v; CI is set, so these tests must run", err)
		}
		tb.Skip(err)
	}
	if err != nil {
		tb.Fatal(err)
	}
}
