package store

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/timewheel/timewheel/internal/redisserver"
)

// A reply of the wrong shape is a *ReplyError naming the script and the
// field, never a zero value.
func TestReplyMalformed(t *testing.T) {
	cmd := func(v any) *redis.Cmd {
		c := redis.NewCmd(context.Background())
		c.SetVal(v)
		return c
	}
	for _, c := range []struct {
		name string
		v    any
		read func(r *reply)
		want string
	}{
		{"not an array", int64(1), func(r *reply) {}, "script claim: malformed reply: int64 where an array was due"},
		{"short", []any{int64(1)}, func(r *reply) { r.int(0); r.int(1) }, "field 2: nothing where an integer was due"},
		{"a string for an integer", []any{"x"}, func(r *reply) { r.int(0) }, "field 1: string where an integer was due"},
		{"an integer for a string", []any{int64(1)}, func(r *reply) { r.str(0) }, "field 1: int64 where a string was due"},
		{"a bad score", []any{"x1"}, func(r *reply) { r.score(0) }, "field 1: string where a score was due"},
		{"a bad run", []any{"a|w|1"}, func(r *reply) { r.run(0) }, "field 1: string where a :run value was due"},
		{"an array of non-strings", []any{[]any{int64(1)}}, func(r *reply) { r.strs(0) }, "field 1: []interface {} where an array of strings was due"},
		{"a group cut short", []any{int64(1), "a", "b"}, func(r *reply) { r.rest(1, 4) }, "3 fields, not 1 and groups of 4"},
	} {
		r := decode("claim", cmd(c.v))
		c.read(r)
		var re *ReplyError
		if !errors.As(r.err, &re) || !strings.Contains(r.err.Error(), c.want) || !strings.HasPrefix(r.err.Error(), "durable: script claim:") {
			t.Errorf("%s: %v; want a ReplyError with %q", c.name, r.err, c.want)
		}
	}
	if _, err := integer("ack", cmd("1")); err == nil || !strings.Contains(err.Error(), "script ack") {
		t.Errorf("integer of a string: %v", err)
	}
}

// A token is written and read in one place: ParseRun reads what String
// writes, a failed attempt's "n", and an older lease's "n|worker".
func TestToken(t *testing.T) {
	tok := Token{Attempt: 3, Worker: "host:1:x", Due: 1_700_000_000_000_000}
	if s := tok.String(); s != "3|host:1:x|1700000000000000" {
		t.Errorf("String = %q", s)
	}
	for s, want := range map[string]Token{
		tok.String(): tok,
		"2":          {Attempt: 2},
		"1|w":        {Attempt: 1, Worker: "w"},
	} {
		if got, ok := ParseRun(s); !ok || got != want {
			t.Errorf("ParseRun(%q) = %+v, %v; want %+v", s, got, ok, want)
		}
	}
	for _, s := range []string{"", "x", "1|w|x"} {
		if _, ok := ParseRun(s); ok {
			t.Errorf("ParseRun(%q) ok", s)
		}
	}
}

// wrapped is a client of a type Open cannot copy.
type wrapped struct{ *redis.Client }

// Open copies a client that ignores deadlines, uses one that keeps them,
// and guards one it cannot copy; Close closes its copy alone.
func TestOpen(t *testing.T) {
	plain := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"})
	defer plain.Close()
	c := Open(plain, Replication{})
	if !c.Copied() || c.guard || c.cp != nil || !c.Redis().(*redis.Client).Options().ContextTimeoutEnabled {
		t.Errorf("Open of a default client: copied %v, guard %v", c.Copied(), c.guard)
	}
	c.Close()
	if err := plain.Ping(context.Background()).Err(); errors.Is(err, redis.ErrClosed) {
		t.Error("Close closed the caller's client")
	}
	keeps := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", ContextTimeoutEnabled: true})
	defer keeps.Close()
	if c := Open(keeps, Replication{}); c.Copied() || c.Redis() != keeps {
		t.Error("Open copied a client that keeps deadlines")
	}
	cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{"127.0.0.1:1"}})
	defer cc.Close()
	if c := Open(cc, Replication{}); !c.Copied() {
		t.Error("Open did not copy a default cluster client")
	} else {
		c.Close()
	}
	if c := Open(wrapped{plain}, Replication{}); c.Copied() || !c.guard {
		t.Error("Open of a type it cannot copy does not guard its calls")
	}
}

// A call through a client Open cannot copy returns when its context
// ends, on a Redis stalled by CLIENT PAUSE.
func TestGuardedCallOnStalledRedis(t *testing.T) {
	srv := redisserver.ForTest(t)
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr})
	defer rdb.Close()
	c := Open(wrapped{rdb}, Replication{})
	ctx := context.Background()
	k := NewKeys("{guard}:")
	if _, err := c.Schedule(ctx, k, "a", 1, false, []byte("k\x00")); err != nil {
		t.Fatal(err)
	}
	if err := rdb.Do(ctx, "CLIENT", "PAUSE", 1500, "ALL").Err(); err != nil {
		t.Fatal(err)
	}
	cctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	t0 := time.Now()
	_, err := c.Schedule(cctx, k, "b", 1, false, []byte("k\x00"))
	if took := time.Since(t0); !errors.Is(err, context.DeadlineExceeded) || took > time.Second {
		t.Errorf("Schedule on a paused Redis: %v after %v; want the context's end within 1s", err, took)
	}
	// The abandoned call ends once the pause does, before the leak check:
	// a PING sent after it returns after it.
	if err := rdb.Ping(ctx).Err(); err != nil {
		t.Fatal(err)
	}
}
