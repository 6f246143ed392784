package store_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"go.uber.org/goleak"

	"github.com/timewheel/timewheel/durable/internal/store"
	"github.com/timewheel/timewheel/internal/redisserver"
)

// The tests of the scripts run each against seeded keys on a real
// redis-server, and again on the shared Redis Cluster (every script
// touches several keys, all in one slot): servers runs a test on both.

// single is the one redis-server of this test binary, started by the
// first test that needs it.
var single struct {
	once sync.Once
	srv  *redisserver.Server
	dir  string
	err  error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if single.srv != nil {
		single.srv.Stop()
		os.RemoveAll(single.dir)
	}
	redisserver.StopSharedCluster()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// An env is a test's queue on one server: its store client, keys and a
// plain client to seed and read the keys with.
type env struct {
	t   *testing.T
	ctx context.Context
	rdb redis.UniversalClient
	st  *store.Client
	k   store.Keys
}

// servers runs f on a single redis-server, then on the cluster, each
// with a queue of its own named after the test.
func servers(t *testing.T, f func(e *env)) {
	t.Run("server=single", func(t *testing.T) {
		single.once.Do(func() {
			single.dir, single.err = os.MkdirTemp("", "store-test-")
			if single.err == nil {
				single.srv, single.err = redisserver.Start(single.dir)
			}
		})
		if single.err != nil {
			if os.Getenv("CI") == "" {
				t.Skip(single.err)
			}
			t.Fatal(single.err)
		}
		f(newEnv(t, redis.NewClient(&redis.Options{Addr: single.srv.Addr})))
	})
	t.Run("server=cluster", func(t *testing.T) {
		c := redisserver.SharedCluster(t)
		f(newEnv(t, redis.NewClusterClient(&redis.ClusterOptions{Addrs: c.Addrs()})))
	})
}

func newEnv(t *testing.T, rdb redis.UniversalClient) *env {
	name := strings.NewReplacer("/", "-", "=", "-").Replace(t.Name())
	e := &env{t: t, ctx: context.Background(), rdb: rdb, st: store.Open(rdb, store.Replication{}), k: store.NewKeys("{" + name + "}:")}
	t.Cleanup(func() {
		e.st.Close()
		rdb.Close()
	})
	for _, key := range e.keys() {
		rdb.Del(e.ctx, key)
	}
	return e
}

// keys returns the queue's keys: those of store.Keys, the layout record,
// and the park sets of the kinds the tests use.
func (e *env) keys() []string {
	k := e.k
	return []string{k.Due(), k.Job(), k.Run(), k.Dead(), k.Paused(), k.Parked(), k.Workers(), k.Leases("w1"), k.Leases("w2"), k.Leases("wd"),
		k.Layout(), k.Park("k"), k.Park("p")}
}

// The seeds, each one command.
func (e *env) job(id, kind, payload string) {
	e.do(e.rdb.HSet(e.ctx, e.k.Job(), id, kind+"\x00"+payload))
}
func (e *env) due(id string, us int64) {
	e.do(e.rdb.ZAdd(e.ctx, e.k.Due(), redis.Z{Score: float64(us), Member: id}))
}
func (e *env) run(id, v string)    { e.do(e.rdb.HSet(e.ctx, e.k.Run(), id, v)) }
func (e *env) dead(id, err string) { e.do(e.rdb.HSet(e.ctx, e.k.Dead(), id, err)) }
func (e *env) live(w string, until int64) {
	e.do(e.rdb.ZAdd(e.ctx, e.k.Workers(), redis.Z{Score: float64(until), Member: w}))
}
func (e *env) zadd(key, id string, us int64) {
	e.do(e.rdb.ZAdd(e.ctx, key, redis.Z{Score: float64(us), Member: id}))
}

// pending seeds a job of kind "k" due at us.
func (e *env) pending(id string, us int64) {
	e.job(id, "k", "p-"+id)
	e.due(id, us)
}

// lease seeds a job of kind "k" leased by worker w for due, its lease
// ending at end, as a claim leaves it.
func (e *env) lease(id, w string, attempt int, due, end int64) string {
	e.job(id, "k", "p-"+id)
	e.due(id, end)
	tok := store.Token{Attempt: attempt, Worker: w, Due: due}.String()
	e.run(id, tok)
	e.zadd(e.k.Leases(w), id, due)
	return tok
}

func (e *env) do(c redis.Cmder) {
	e.t.Helper()
	if err := c.Err(); err != nil {
		e.t.Fatal(err)
	}
}

// now returns the server's clock, µs.
func (e *env) now() int64 {
	e.t.Helper()
	var tm time.Time
	var err error
	if cc, ok := e.rdb.(*redis.ClusterClient); ok {
		var c *redis.Client
		if c, err = cc.MasterForKey(e.ctx, e.k.Due()); err == nil {
			tm, err = c.Time(e.ctx).Result()
		}
	} else {
		tm, err = e.rdb.Time(e.ctx).Result()
	}
	if err != nil {
		e.t.Fatal(err)
	}
	return tm.UnixMicro()
}

// dump returns the queue's keys as text, one line a key that exists,
// in the order of keys: "due: a=100 b=200" (sorted sets by score, then
// member), "job: a=k|p" (hashes by field, NUL shown as |), "paused: a b"
// (sets sorted).
func (e *env) dump() string {
	e.t.Helper()
	var lines []string
	for _, key := range e.keys() {
		typ := e.rdb.Type(e.ctx, key).Val()
		short := strings.TrimPrefix(key, e.k.Prefix)
		var items []string
		switch typ {
		case "none":
			continue
		case "zset":
			for _, z := range e.rdb.ZRangeWithScores(e.ctx, key, 0, -1).Val() {
				items = append(items, fmt.Sprintf("%s=%d", z.Member, int64(z.Score)))
			}
			slices.Sort(items)
		case "hash":
			for f, v := range e.rdb.HGetAll(e.ctx, key).Val() {
				items = append(items, f+"="+strings.ReplaceAll(v, "\x00", "|"))
			}
			slices.Sort(items)
		case "set":
			items = e.rdb.SMembers(e.ctx, key).Val()
			for i, s := range items {
				if s == "" {
					items[i] = `""`
				}
			}
			slices.Sort(items)
		default:
			e.t.Fatalf("%s: type %s", key, typ)
		}
		lines = append(lines, short+": "+strings.Join(items, " "))
	}
	return strings.Join(lines, "\n")
}

// keysAre fails the test unless dump is want: lines ("key: items") and
// items in any order.
func (e *env) keysAre(step string, want ...string) {
	e.t.Helper()
	got := e.dump()
	order := map[string]int{}
	for i, k := range e.keys() {
		order[strings.TrimPrefix(k, e.k.Prefix)] = i
	}
	for i, w := range want {
		k, items, _ := strings.Cut(w, ": ")
		f := strings.Fields(items)
		slices.Sort(f)
		want[i] = k + ": " + strings.Join(f, " ")
	}
	slices.SortFunc(want, func(a, b string) int {
		ka, _, _ := strings.Cut(a, ": ")
		kb, _, _ := strings.Cut(b, ": ")
		return order[ka] - order[kb]
	})
	if w := strings.Join(want, "\n"); got != w {
		e.t.Errorf("%s: the keys hold\n%s\nwant\n%s", step, got, w)
	}
}

// inbox subscribes to worker w's channel, and returns a func that
// returns the next message within a second ("" if none).
func (e *env) inbox(w string) func() string {
	e.t.Helper()
	ps := e.rdb.SSubscribe(e.ctx, e.k.Inbox(w))
	if _, err := ps.Receive(e.ctx); err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { ps.Close() })
	return func() string {
		ctx, cancel := context.WithTimeout(e.ctx, time.Second)
		defer cancel()
		m, err := ps.ReceiveMessage(ctx)
		if err != nil {
			return ""
		}
		return m.Payload
	}
}

// check fails the test with step if err is not nil or got is not want.
func check[T comparable](t *testing.T, step string, got T, err error, want T) {
	t.Helper()
	if err != nil || got != want {
		t.Fatalf("%s = %v, %v; want %v", step, got, err, want)
	}
}

// far is a due time an hour from now, µs; past one long gone.
var (
	far  = time.Now().Add(time.Hour).UnixMicro()
	past = int64(1_000_000)
)

func formatInt(n int64) string { return fmt.Sprint(n) }
