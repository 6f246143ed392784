package loop_test

import (
	"bytes"
	"fmt"
	"net"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/timewheel/timewheel/loop"
)

// goid returns the id of the calling goroutine, from the header of its
// stack trace ("goroutine 18 [running]:").
func goid() int64 {
	var buf [64]byte
	s := string(buf[:runtime.Stack(buf[:], false)])
	s = strings.TrimPrefix(s, "goroutine ")
	id, err := strconv.ParseInt(s[:strings.IndexByte(s, ' ')], 10, 64)
	if err != nil {
		panic("goid: " + err.Error())
	}
	return id
}

// running runs l.Run on a goroutine of its own, which it makes the loop
// goroutine of tr (if tr is not nil) first, and returns a channel that
// receives what Run returned.
func running(l *loop.Loop, tr *trace) (done <-chan error) {
	ch := make(chan error, 1)
	go func() {
		if tr != nil {
			tr.g = goid()
		}
		ch <- l.Run()
	}()
	return ch
}

// trace records callbacks with the time since t0 on the clock of the
// test's bubble. add checks that it is called on the loop goroutine g;
// the lines are touched only there (the race detector checks it), and
// read by the test after synctest.Wait or once Run has returned.
type trace struct {
	t     *testing.T
	t0    time.Time
	g     int64
	lines []string
}

func newTrace(t *testing.T) *trace { return &trace{t: t, t0: time.Now()} }

func (tr *trace) add(format string, args ...any) {
	if g := goid(); g != tr.g {
		tr.t.Errorf("callback %q ran on goroutine %d, not the loop's %d", fmt.Sprintf(format, args...), g, tr.g)
	}
	tr.lines = append(tr.lines, fmt.Sprintf("%v ", time.Since(tr.t0))+fmt.Sprintf(format, args...))
}

// watch logs every event of s, prefixed by name.
func (tr *trace) watch(name string, s *loop.Socket) {
	s.OnData(func(p []byte) { tr.add("%s data %q", name, p) })
	s.OnEnd(func() { tr.add("%s end", name) })
	s.OnError(func(err error) { tr.add("%s error %v", name, err) })
	s.OnClose(func() { tr.add("%s close, Err %v", name, s.Err()) })
	s.OnDrain(func() { tr.add("%s drain", name) })
}

func (tr *trace) want(want ...string) {
	tr.t.Helper()
	if !slices.Equal(tr.lines, want) {
		tr.t.Fatalf("ran:\n%s\nwant:\n%s", strings.Join(tr.lines, "\n"), strings.Join(want, "\n"))
	}
}

// readN reads from c until n bytes have come or it fails.
func readN(t *testing.T, c net.Conn, n int) string {
	t.Helper()
	buf := make([]byte, n)
	got := 0
	for got < n {
		m, err := c.Read(buf[got:])
		got += m
		if err != nil {
			t.Fatalf("reading %d bytes: %v after %q", n, err, buf[:got])
		}
	}
	return string(buf)
}

// result is what one Read of a scriptConn returns.
type result struct {
	data string
	err  error
}

// scriptConn is a net.Conn whose Reads return what the test sends on
// reads, and whose Writes fail with writeErr if it is set, or are kept.
// It counts its Reads and its Closes.
type scriptConn struct {
	reads    chan result
	writeErr error
	closed   chan struct{}
	closes   atomic.Int32
	nreads   atomic.Int32
	once     sync.Once
	mu       sync.Mutex
	written  bytes.Buffer // guarded by mu
	endless  bool         // Read fills p with 'x' at once, forever
}

func newScriptConn() *scriptConn {
	return &scriptConn{reads: make(chan result), closed: make(chan struct{})}
}

func (c *scriptConn) Read(p []byte) (int, error) {
	c.nreads.Add(1)
	if c.endless {
		select {
		case <-c.closed:
			return 0, net.ErrClosed
		default:
			return copy(p, bytes.Repeat([]byte("x"), len(p))), nil
		}
	}
	select {
	case r := <-c.reads:
		return copy(p, r.data), r.err
	case <-c.closed:
		return 0, net.ErrClosed
	}
}

func (c *scriptConn) Write(p []byte) (int, error) {
	if c.writeErr != nil {
		return 0, c.writeErr
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.written.Write(p)
}

func (c *scriptConn) got() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.written.String()
}

func (c *scriptConn) Close() error {
	c.closes.Add(1)
	err := net.ErrClosed
	c.once.Do(func() { close(c.closed); err = nil })
	return err
}

func (c *scriptConn) LocalAddr() net.Addr                { return &net.UnixAddr{Name: "local", Net: "unix"} }
func (c *scriptConn) RemoteAddr() net.Addr               { return &net.UnixAddr{Name: "remote", Net: "unix"} }
func (c *scriptConn) SetDeadline(t time.Time) error      { return nil }
func (c *scriptConn) SetReadDeadline(t time.Time) error  { return nil }
func (c *scriptConn) SetWriteDeadline(t time.Time) error { return nil }

// chanListener is a net.Listener whose Accept returns the connections,
// or the error, the test sends.
type chanListener struct {
	conns  chan net.Conn
	errs   chan error
	closed chan struct{}
	once   sync.Once
}

func newChanListener() *chanListener {
	return &chanListener{conns: make(chan net.Conn), errs: make(chan error), closed: make(chan struct{})}
}

func (ln *chanListener) Accept() (net.Conn, error) {
	select {
	case c := <-ln.conns:
		return c, nil
	case err := <-ln.errs:
		return nil, err
	case <-ln.closed:
		return nil, net.ErrClosed
	}
}

func (ln *chanListener) Close() error {
	err := net.ErrClosed
	ln.once.Do(func() { close(ln.closed); err = nil })
	return err
}

func (ln *chanListener) Addr() net.Addr { return &net.UnixAddr{Name: "listener", Net: "unix"} }

// ioGoroutines returns the stacks of the goroutines of sockets and
// listeners that are alive, at the moment of the call (no retry, unlike
// goleak).
func ioGoroutines() []string {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	var found []string
	for _, g := range strings.Split(string(buf), "\n\n") {
		if strings.Contains(g, "timewheel/loop.(*Socket)") || strings.Contains(g, "timewheel/loop.(*Listener)") {
			found = append(found, g)
		}
	}
	return found
}
