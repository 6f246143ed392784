package loop_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/timewheel/timewheel/loop"
)

var errBoom = errors.New("boom")

// closedErr is what Err says of a socket closed without an error.
var closedErr = net.ErrClosed.Error()

// pipeSocket makes, in a synctest bubble, a loop on the bubble's clock
// and a socket on one end of a net.Pipe; the test is the peer, on the
// other end. The loop runs on its own goroutine once run is called.
func pipeSocket(t *testing.T, opts ...loop.Option) (l *loop.Loop, s *loop.Socket, peer net.Conn, run func() (*trace, <-chan error)) {
	t.Helper()
	l = loop.New(opts...)
	a, b := net.Pipe()
	s, err := l.NewSocket(a)
	if err != nil {
		t.Fatal(err)
	}
	return l, s, b, func() (*trace, <-chan error) {
		tr := newTrace(t)
		return tr, running(l, tr)
	}
}

// TestSocketPeerEnds: what the peer writes arrives in order; the peer's
// close is the end, and the socket, which cannot half-close a pipe,
// closes after it: data..., end, close. Run then returns, nothing open.
func TestSocketPeerEnds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l, s, peer, run := pipeSocket(t)
		tr, done := run()
		l.Post(func() {
			tr.watch("s", s)
			s.OnData(func(p []byte) { tr.add("s data %q", p); s.Write(bytes.ToUpper(p)) })
		})
		for _, m := range []string{"one", "two"} {
			io.WriteString(peer, m)
			if got := readN(t, peer, 3); got != strings.ToUpper(m) {
				t.Fatalf("echo of %q: %q", m, got)
			}
		}
		peer.Close()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		tr.want(`0s s data "one"`, `0s s data "two"`, "0s s end", "0s s close, Err "+closedErr)
	})
}

// socketCase is one scenario on a socket whose connection is a
// scriptConn: do drives it (the loop runs on its own goroutine), want is
// the trace.
type socketCase struct {
	name string
	do   func(l *loop.Loop, s *loop.Socket, c *scriptConn, tr *trace)
	want []string
}

// socketOn returns a socket on c of a new loop on the real clock.
func socketOn(t *testing.T, c net.Conn) (*loop.Loop, *loop.Socket) {
	t.Helper()
	l := loop.New()
	s, err := l.NewSocket(c)
	if err != nil {
		t.Fatal(err)
	}
	return l, s
}

func runSocketCase(t *testing.T, c socketCase) {
	t.Helper()
	t.Run(c.name, func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			conn := newScriptConn()
			l, s := socketOn(t, conn)
			tr := newTrace(t)
			done := running(l, tr)
			l.Post(func() { tr.watch("s", s) })
			c.do(l, s, conn, tr)
			synctest.Wait()
			select {
			case err := <-done:
				if err != nil {
					t.Fatal(err)
				}
			default:
				t.Fatal("Run did not return: the socket is not closed")
			}
			tr.want(c.want...)
			if n := conn.closes.Load(); n != 1 {
				t.Errorf("the connection was closed %d times, want 1", n)
			}
		})
	})
}

// TestSocketCloseOrder: each way a socket ends, with its callbacks in
// the documented order, OnClose last and the connection closed once.
func TestSocketCloseOrder(t *testing.T) {
	for _, c := range []socketCase{
		{"read error", func(l *loop.Loop, s *loop.Socket, c *scriptConn, tr *trace) {
			c.reads <- result{"x", nil}
			c.reads <- result{"", errBoom}
		}, []string{`0s s data "x"`, "0s s error boom", "0s s close, Err boom"}},
		{"data and an error in one Read", func(l *loop.Loop, s *loop.Socket, c *scriptConn, tr *trace) {
			c.reads <- result{"y", errBoom}
		}, []string{`0s s data "y"`, "0s s error boom", "0s s close, Err boom"}},
		{"data and the end in one Read", func(l *loop.Loop, s *loop.Socket, c *scriptConn, tr *trace) {
			c.reads <- result{"last", io.EOF}
		}, []string{`0s s data "last"`, "0s s end", "0s s close, Err " + closedErr}},
		{"write error", func(l *loop.Loop, s *loop.Socket, c *scriptConn, tr *trace) {
			c.writeErr = errBoom
			l.Post(func() { s.Write([]byte("z")) })
		}, []string{"0s s error boom", "0s s close, Err boom"}},
		{"Close from the loop, then data: dropped", func(l *loop.Loop, s *loop.Socket, c *scriptConn, tr *trace) {
			l.Post(func() {
				tr.add("Close: %v, again: %v", s.Close(), errors.Is(s.Close(), net.ErrClosed))
				tr.add("Write after Close: %v, End does nothing", s.Write([]byte("late")))
				s.End()
			})
		}, []string{"0s Close: <nil>, again: true", "0s Write after Close: false, End does nothing", "0s s close, Err " + closedErr}},
		{"Close from OnData", func(l *loop.Loop, s *loop.Socket, c *scriptConn, tr *trace) {
			l.Post(func() { s.OnData(func(p []byte) { tr.add("data %q, Close", p); s.Close() }) })
			c.reads <- result{"a", nil}
		}, []string{`0s data "a", Close`, "0s s close, Err " + closedErr}},
		{"End flushes the queue, then closes a connection without CloseWrite", func(l *loop.Loop, s *loop.Socket, c *scriptConn, tr *trace) {
			l.Post(func() {
				s.Write([]byte("bye, "))
				s.Write([]byte("then"))
				s.End()
				tr.add("Write after End: %v", s.Write([]byte("more")))
				s.OnClose(func() { tr.add("close, wrote %q", c.got()) })
			})
		}, []string{"0s Write after End: false", `0s close, wrote "bye, then"`}},
	} {
		runSocketCase(t, c)
	}
}

// TestSocketTCP: the callbacks of sockets accepted from a real loopback
// listener, each client writing, then half-closing: data..., end, close,
// the echo and its FIN reaching the client first; every callback on the
// loop goroutine.
func TestSocketTCP(t *testing.T) {
	const clients = 4
	nl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := loop.New()
	g := int64(0)                         // the loop goroutine's id, which the callbacks know
	events := map[*loop.Socket][]string{} // on the loop goroutine only
	onLoop := func() {
		if g == 0 {
			g = goid() // the listener's callback, the first of all
		} else if id := goid(); id != g {
			t.Errorf("callback on goroutine %d, not the first callback's %d", id, g)
		}
	}
	accepted := 0
	var ln *loop.Listener
	ln, err = l.NewListener(nl, func(s *loop.Socket) {
		onLoop()
		s.OnData(func(p []byte) {
			onLoop()
			if ev := events[s]; len(ev) == 0 || ev[len(ev)-1] != "data" {
				events[s] = append(ev, "data")
			}
			s.Write(p)
		})
		s.OnEnd(func() { onLoop(); events[s] = append(events[s], "end") })
		s.OnClose(func() { onLoop(); events[s] = append(events[s], "close, Err "+s.Err().Error()) })
		if accepted++; accepted == clients {
			ln.Close()
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	done := running(l, nil)
	for i := range clients {
		c, err := net.Dial("tcp", nl.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		msg := fmt.Sprintf("hello %d", i)
		io.WriteString(c, msg)
		c.(*net.TCPConn).CloseWrite()
		got, err := io.ReadAll(c)
		if string(got) != msg || err != nil {
			t.Errorf("client %d: echo %q, %v; want %q, nil", i, got, err, msg)
		}
		c.Close()
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if len(events) != clients {
		t.Fatalf("%d sockets, want %d", len(events), clients)
	}
	for _, ev := range events {
		if got := strings.Join(ev, ", "); got != "data, end, close, Err "+closedErr {
			t.Errorf("events %s", got)
		}
	}
}

// TestSocketEndTCP: End half-closes a TCP socket after its queue: the
// client reads the reply and the FIN, the socket still reads what the
// client sends after, and closes at the client's end.
func TestSocketEndTCP(t *testing.T) {
	nl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer nl.Close()
	go func() {
		c, err := net.Dial("tcp", nl.Addr().String())
		if err != nil {
			t.Error(err)
			return
		}
		defer c.Close()
		got, err := io.ReadAll(c) // up to the server's FIN
		if string(got) != "bye" || err != nil {
			t.Errorf("client read %q, %v; want bye, nil", got, err)
		}
		io.WriteString(c, "late")
	}()
	c, err := nl.Accept()
	if err != nil {
		t.Fatal(err)
	}
	l := loop.New()
	s, err := l.NewSocket(c)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	s.OnData(func(p []byte) { got = append(got, fmt.Sprintf("data %q", p)) })
	s.OnEnd(func() { got = append(got, "end") })
	s.OnClose(func() { got = append(got, "close") })
	s.Write([]byte("bye"))
	s.End()
	if err := l.Run(); err != nil {
		t.Fatal(err)
	}
	if g := strings.Join(got, ", "); g != `data "late", end, close` {
		t.Errorf("got %s", g)
	}
}

// TestSocketWriteBound: Write returns false from 64 KiB queued or being
// written on, queues all the same, and OnDrain runs once when the peer
// has read it all; the loop never waited for the peer.
func TestSocketWriteBound(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l, s, peer, run := pipeSocket(t)
		tr, done := run()
		chunk := bytes.Repeat([]byte("w"), 16<<10)
		l.Post(func() {
			tr.watch("s", s)
			var oks []bool
			for range 6 {
				oks = append(oks, s.Write(chunk))
			}
			tr.add("writes %v", oks)
		})
		time.Sleep(time.Second) // the loop goes on; the pipe's writer waits for the peer
		if got := readN(t, peer, 6*len(chunk)); got != strings.Repeat(string(chunk), 6) {
			t.Fatal("the peer read something else")
		}
		synctest.Wait()
		l.Post(func() { s.Close() })
		<-done
		tr.want("0s writes [true true true false false false]", "1s s drain", "1s s close, Err "+closedErr)
	})
}

// TestSocketPause: a paused socket holds one chunk and reads no more
// (two Reads: the chunk delivered and the one held), however fast its
// connection; Resume delivers the held chunk on the next pass and reading
// goes on.
func TestSocketPause(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newScriptConn()
		c.endless = true
		l, s := socketOn(t, c)
		delivered := 0
		s.OnData(func(p []byte) {
			delivered++
			if len(p) != 4<<10 {
				t.Errorf("chunk of %d bytes, want the whole 4 KiB buffer", len(p))
			}
			s.Pause()
		})
		done := running(l, nil)
		synctest.Wait()
		if n := c.nreads.Load(); delivered != 1 || n != 2 {
			t.Fatalf("paused at once: %d chunks delivered, %d reads; want 1, 2", delivered, n)
		}
		l.Post(func() { s.Resume() })
		synctest.Wait()
		if n := c.nreads.Load(); delivered != 2 || n != 3 {
			t.Fatalf("after one Resume: %d chunks delivered, %d reads; want 2, 3", delivered, n)
		}
		l.Post(func() { s.Close() })
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	})
}

// TestSocketCallbackPanics: a socket callback that panics unwinds through
// Run, as a timer's does, and leaves its socket as if it had returned:
// run again, the loop delivers what comes next.
func TestSocketCallbackPanics(t *testing.T) {
	for _, c := range []struct {
		name  string
		setup func(s *loop.Socket, tr *trace)
		want  []string
	}{
		{"OnData: the next chunk is read",
			func(s *loop.Socket, tr *trace) {
				s.OnData(func(p []byte) {
					tr.add("data %q", p)
					if string(p) == "a" {
						panic("in OnData")
					}
				})
			},
			[]string{`0s data "a"`, "0s Run panicked: in OnData", `0s data "b"`, "0s s end", "0s s close, Err " + closedErr}},
		{"OnData with the end in the same Read: the end on the next pass",
			func(s *loop.Socket, tr *trace) {
				s.OnData(func(p []byte) { tr.add("data %q", p); panic("in OnData") })
			},
			[]string{`0s data "ab"`, "0s Run panicked: in OnData", "0s s end", "0s s close, Err " + closedErr}},
		{"a Poll's f: the chunk on the next pass",
			func(s *loop.Socket, tr *trace) {
				s.Poll(time.Hour, func(bool) { tr.add("poll"); panic("in Poll") })
			},
			[]string{"0s poll", "0s Run panicked: in Poll", `0s s data "a"`, `0s s data "b"`, "0s s end", "0s s close, Err " + closedErr}},
		{"OnEnd: the socket closes all the same",
			func(s *loop.Socket, tr *trace) {
				s.OnEnd(func() { tr.add("end"); panic("in OnEnd") })
			},
			[]string{`0s s data "a"`, `0s s data "b"`, "0s end", "0s Run panicked: in OnEnd", "0s s close, Err " + closedErr}},
	} {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				conn := newScriptConn()
				l, s := socketOn(t, conn)
				tr := newTrace(t)
				tr.g = goid() // the loop runs here
				tr.watch("s", s)
				c.setup(s, tr)
				go func() {
					if strings.Contains(c.name, "same Read") {
						conn.reads <- result{"ab", io.EOF}
						return
					}
					conn.reads <- result{"a", nil}
					conn.reads <- result{"b", io.EOF}
				}()
				for range 3 {
					if r := runCatching(l); r != nil {
						tr.add("Run panicked: %v", r)
						continue
					}
					break
				}
				tr.want(c.want...)
			})
		})
	}
}

// runCatching runs l and returns what it panicked with, or nil.
func runCatching(l *loop.Loop) (r any) {
	defer func() { r = recover() }()
	l.Run()
	return nil
}

// TestSocketUnref: an unreferenced socket does not keep Run going, but
// its callbacks run while something else does; referenced again and
// closed, the next Run waits for its OnClose.
func TestSocketUnref(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l, s, peer, _ := pipeSocket(t)
		defer peer.Close()
		tr := newTrace(t)
		tr.g = goid() // the loop runs here
		tr.watch("s", s)
		s.Unref()
		l.AfterFunc(time.Second, func() { tr.add("timer") })
		go write(peer, 500*time.Millisecond, "a")
		if err := l.Run(); err != nil {
			t.Fatal(err)
		}
		tr.add("Run returned")
		l.Post(func() { s.Ref(); s.Close() })
		if err := l.Run(); err != nil {
			t.Fatal(err)
		}
		tr.want(`500ms s data "a"`, "1s timer", "1s Run returned", "1s s close, Err "+closedErr)
	})
}
