package loop_test

import (
	"errors"
	"net"
	"testing"
	"testing/synctest"
	"time"

	"github.com/timewheel/timewheel/loop"
)

// listenerCase is one scenario on a Listener over a chanListener, in a
// synctest bubble: setup runs before the loop does, drive on the test
// goroutine while it runs; the scenario ends when Run returns, and want
// is the trace.
type listenerCase struct {
	name  string
	setup func(l *loop.Loop, ls *loop.Listener, tr *trace)
	drive func(ln *chanListener)
	want  []string
}

func runListenerCase(t *testing.T, c listenerCase) {
	t.Helper()
	t.Run(c.name, func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			l := loop.New()
			ln := newChanListener()
			tr := newTrace(t)
			n := 0
			ls, err := l.NewListener(ln, func(s *loop.Socket) {
				n++
				tr.add("conn %d", n)
				tr.watch("conn", s)
			})
			if err != nil {
				t.Fatal(err)
			}
			ls.OnError(func(err error) { tr.add("listener error %v", err) })
			ls.OnClose(func() { tr.add("listener close, Err %v", ls.Err()) })
			c.setup(l, ls, tr)
			done := running(l, tr)
			if c.drive != nil {
				c.drive(ln)
			}
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			tr.want(c.want...)
		})
	})
}

// TestListener: connections arrive on the loop, in order; an open
// Listener keeps the loop alive; an Accept error ends it (error, close);
// Close runs close only.
func TestListener(t *testing.T) {
	// dial hands the listener one end of a pipe and writes on the other.
	dial := func(ln *chanListener, after time.Duration, data string) net.Conn {
		time.Sleep(after)
		a, b := net.Pipe()
		ln.conns <- a
		b.Write([]byte(data))
		return b
	}
	for _, c := range []listenerCase{
		{name: "connections, in order, until Close",
			setup: func(l *loop.Loop, ls *loop.Listener, tr *trace) {
				l.AfterFunc(time.Second, func() { tr.add("Close %v", ls.Close()) })
			},
			drive: func(ln *chanListener) {
				c1 := dial(ln, 100*time.Millisecond, "a")
				c2 := dial(ln, 100*time.Millisecond, "b")
				time.Sleep(time.Second)
				c1.Close()
				time.Sleep(100 * time.Millisecond)
				c2.Close()
			},
			want: []string{"100ms conn 1", `100ms conn data "a"`, "200ms conn 2", `200ms conn data "b"`,
				"1s Close <nil>", "1s listener close, Err " + closedErr,
				"1.2s conn end", "1.2s conn close, Err " + closedErr, "1.3s conn end", "1.3s conn close, Err " + closedErr}},
		{name: "an Accept error ends it: error, then close",
			setup: func(l *loop.Loop, ls *loop.Listener, tr *trace) {},
			drive: func(ln *chanListener) { time.Sleep(time.Second); ln.errs <- errBoom },
			want:  []string{"1s listener error boom", "1s listener close, Err boom"}},
		{name: "a second Close: net.ErrClosed",
			setup: func(l *loop.Loop, ls *loop.Listener, tr *trace) {
				ls.Close()
				tr.lines = append(tr.lines, "again: "+errors.Unwrap(ls.Close()).Error())
			},
			want: []string{"again: " + closedErr, "0s listener close, Err " + closedErr}},
		{name: "referenced: the loop lives while it listens",
			setup: func(l *loop.Loop, ls *loop.Listener, tr *trace) {
				l.AfterFunc(time.Hour, func() { tr.add("still running"); ls.Close() }).Unref()
			},
			want: []string{"1h0m0s still running", "1h0m0s listener close, Err " + closedErr}},
	} {
		runListenerCase(t, c)
	}
}

// TestListenerUnrefThenClose: an unreferenced Listener still accepts while
// the loop runs; made referenced and closed, the next Run waits for its
// goroutine and runs its OnClose.
func TestListenerUnrefThenClose(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := loop.New()
		ln := newChanListener()
		var got []string
		ls, err := l.NewListener(ln, func(s *loop.Socket) { got = append(got, "conn"); s.Close() })
		if err != nil {
			t.Fatal(err)
		}
		ls.Unref()
		ls.OnClose(func() { got = append(got, "close") })
		l.Ref() // keep the loop running for one connection
		done := running(l, nil)
		a, b := net.Pipe()
		defer b.Close()
		ln.conns <- a
		synctest.Wait()
		l.Unref()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		l.Post(func() { ls.Ref(); ls.Close() })
		if err := l.Run(); err != nil {
			t.Fatal(err)
		}
		if len(ioGoroutines()) != 0 {
			t.Errorf("goroutines left:\n%s", ioGoroutines())
		}
		if g := len(got); g != 2 || got[0] != "conn" || got[1] != "close" {
			t.Errorf("got %v, want [conn close]", got)
		}
	})
}

// TestStopClosesEverything: Stop, from another goroutine, closes every
// socket's connection and every listener, in whatever state: reading, a
// chunk held by a paused socket, a write waiting for the peer, a Poll
// pending, a listener waiting in Accept; none of their callbacks runs,
// and Run returns ErrStopped once none of their goroutines is left.
func TestStopClosesEverything(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := loop.New()
		var tr *trace
		reading, held := newScriptConn(), newScriptConn()
		held.endless = true
		writing, peer := net.Pipe()
		defer peer.Close()
		ln := newChanListener()
		var socks []*loop.Socket
		for _, c := range []net.Conn{reading, held, writing} {
			s, err := l.NewSocket(c)
			if err != nil {
				t.Fatal(err)
			}
			socks = append(socks, s)
		}
		ls, err := l.NewListener(ln, func(*loop.Socket) { tr.add("conn") })
		if err != nil {
			t.Fatal(err)
		}
		ls.OnClose(func() { tr.add("listener close") })
		socks[1].Pause()
		socks[0].Poll(time.Hour, func(bool) { tr.add("poll") })
		socks[2].Write([]byte("waits for the peer"))
		tr = newTrace(t)
		for i, s := range socks {
			tr.watch(string(rune('a'+i)), s)
		}
		done := running(l, tr)
		synctest.Wait()
		l.Stop()
		if err := <-done; err != loop.ErrStopped {
			t.Fatalf("Run = %v, want ErrStopped", err)
		}
		if left := ioGoroutines(); len(left) != 0 {
			t.Fatalf("Run returned with goroutines of sockets and listeners left:\n%s", left)
		}
		if reading.closes.Load() != 1 || held.closes.Load() != 1 {
			t.Errorf("connections closed %d and %d times, want 1", reading.closes.Load(), held.closes.Load())
		}
		if _, err := peer.Read(make([]byte, 1)); err == nil {
			t.Error("the pipe's socket is still open")
		}
		if _, err := ln.Accept(); !errors.Is(err, net.ErrClosed) {
			t.Errorf("listener: Accept = %v, want net.ErrClosed", err)
		}
		tr.want()
	})
}
