package loop_test

import (
	"net"
	"testing"
	"testing/synctest"
	"time"

	"github.com/timewheel/timewheel/loop"
)

// scene is one scenario on a socket over a net.Pipe, in a synctest
// bubble: setup runs on the loop goroutine at time 0, peer is the other
// end's script on the test goroutine; the scenario ends when the socket
// is closed and Run has returned, and want is the trace.
type scene struct {
	name  string
	opts  []loop.Option
	setup func(l *loop.Loop, s *loop.Socket, tr *trace)
	peer  func(peer net.Conn)
	want  []string
}

func runScene(t *testing.T, c scene) {
	t.Helper()
	t.Run(c.name, func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			l, s, peer, run := pipeSocket(t, c.opts...)
			defer peer.Close()
			tr, done := run()
			l.Post(func() { tr.watch("s", s); c.setup(l, s, tr) })
			if c.peer != nil {
				c.peer(peer)
			}
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			tr.want(c.want...)
		})
	})
}

func write(peer net.Conn, after time.Duration, data string) {
	time.Sleep(after)
	peer.Write([]byte(data))
}

// timeoutThen returns a timeout callback that logs and, at the n-th
// time, closes the socket.
func timeoutThen(s *loop.Socket, tr *trace, n int) func() {
	k := 0
	return func() {
		k++
		tr.add("timeout %d", k)
		if k == n {
			s.Close()
		}
	}
}

// TestSocketTimeout: Node's socket.setTimeout: the callback runs once per
// idle period, exactly at the last activity plus d rounded up to the
// tick, never before; data, Writes and completed writes are activity; 0
// disables it.
func TestSocketTimeout(t *testing.T) {
	for _, c := range []scene{
		{name: "idle: once per idle period, at its deadline",
			setup: func(l *loop.Loop, s *loop.Socket, tr *trace) { s.SetTimeout(time.Second, timeoutThen(s, tr, 2)) },
			peer:  func(p net.Conn) { write(p, 5*time.Second, "a") },
			want:  []string{"1s timeout 1", `5s s data "a"`, "6s timeout 2", "6s s close, Err " + closedErr}},
		{name: "data refreshes it: d after the last",
			setup: func(l *loop.Loop, s *loop.Socket, tr *trace) { s.SetTimeout(time.Second, timeoutThen(s, tr, 1)) },
			peer: func(p net.Conn) {
				write(p, 300*time.Millisecond, "a")
				write(p, 600*time.Millisecond, "b")
				write(p, 600*time.Millisecond, "c")
			},
			want: []string{`300ms s data "a"`, `900ms s data "b"`, `1.5s s data "c"`, "2.5s timeout 1", "2.5s s close, Err " + closedErr}},
		{name: "a Write is activity, and so is its completion",
			setup: func(l *loop.Loop, s *loop.Socket, tr *trace) {
				s.SetTimeout(time.Second, timeoutThen(s, tr, 1))
				l.AfterFunc(700*time.Millisecond, func() { tr.add("Write %v", s.Write([]byte("x"))) })
			},
			peer: func(p net.Conn) { time.Sleep(1200 * time.Millisecond); p.Read(make([]byte, 1)) },
			want: []string{"700ms Write true", "2.2s timeout 1", "2.2s s close, Err " + closedErr}},
		{name: "a write the peer does not read is no activity after it is queued",
			setup: func(l *loop.Loop, s *loop.Socket, tr *trace) {
				s.SetTimeout(time.Second, timeoutThen(s, tr, 1))
				l.AfterFunc(700*time.Millisecond, func() { tr.add("Write %v", s.Write([]byte("x"))) })
			},
			want: []string{"700ms Write true", "1.7s timeout 1", "1.7s s close, Err " + closedErr}},
		{name: "0 disables it",
			setup: func(l *loop.Loop, s *loop.Socket, tr *trace) {
				s.SetTimeout(time.Second, timeoutThen(s, tr, 1))
				l.AfterFunc(500*time.Millisecond, func() { s.SetTimeout(0, nil) })
				l.AfterFunc(time.Hour, func() { s.Close() })
			},
			want: []string{"1h0m0s s close, Err " + closedErr}},
		{name: "SetTimeout again starts the new timeout from now",
			setup: func(l *loop.Loop, s *loop.Socket, tr *trace) {
				s.SetTimeout(time.Second, func() { tr.add("first") })
				l.AfterFunc(800*time.Millisecond, func() { s.SetTimeout(2*time.Second, timeoutThen(s, tr, 1)) })
			},
			want: []string{"2.8s timeout 1", "2.8s s close, Err " + closedErr}},
		{name: "the deadline rounds up to the tick",
			opts: []loop.Option{loop.WithTick(10 * time.Millisecond)},
			setup: func(l *loop.Loop, s *loop.Socket, tr *trace) {
				s.SetTimeout(15*time.Millisecond, timeoutThen(s, tr, 2))
			},
			peer: func(p net.Conn) { write(p, 25*time.Millisecond, "a") },
			want: []string{"20ms timeout 1", `25ms s data "a"`, "40ms timeout 2", "40ms s close, Err " + closedErr}},
		{name: "the callback may write: a ping, then the peer's answer",
			setup: func(l *loop.Loop, s *loop.Socket, tr *trace) {
				s.SetTimeout(time.Second, func() { tr.add("ping"); s.Write([]byte("?")) })
				s.OnData(func(p []byte) { tr.add("answer %q", p); s.Close() })
			},
			peer: func(p net.Conn) {
				p.Read(make([]byte, 1))
				write(p, 300*time.Millisecond, "!")
			},
			want: []string{"1s ping", `1.3s answer "!"`, "1.3s s close, Err " + closedErr}},
	} {
		runScene(t, c)
	}
}
