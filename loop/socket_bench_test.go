package loop_test

import (
	"net"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/timewheel/timewheel"
	"github.com/timewheel/timewheel/idleconn"
	"github.com/timewheel/timewheel/loop"
)

// The socket benchmarks run the loop's socket beside package idleconn
// and a plain read deadline (the standard library's idle timeout) in one
// function, so that one benchstat shows them side by side:
//
//	go test -run '^$' -bench 'Refresh|IdleSockets' -count 6 ./loop > sock.txt
//	go run golang.org/x/perf/cmd/benchstat@latest -col /impl sock.txt

const benchIdle = 30 * time.Second

// nopConn is a net.Conn whose Read and Write succeed at once, and whose
// other methods nobody calls.
type nopConn struct{ net.Conn }

func (nopConn) Read(b []byte) (int, error)  { return len(b), nil }
func (nopConn) Write(b []byte) (int, error) { return len(b), nil }
func (nopConn) Close() error                { return nil }

// BenchmarkRefresh is the cost of refreshing an idle timeout once, as
// every read does: impl=loop records the activity of a socket with a
// SetTimeout (what each delivered chunk and each Write does); impl=idleconn
// is a Read of an idleconn.Conn over a connection whose Read is free (the
// refresh and the wrapper); impl=stdlib is SetReadDeadline(now+d) on a
// loopback TCP connection, the runtime timer of its poller moved.
func BenchmarkRefresh(b *testing.B) {
	for _, impl := range []string{"loop", "idleconn", "stdlib"} {
		b.Run("impl="+impl, func(b *testing.B) {
			var refresh func()
			switch impl {
			case "loop":
				l := loop.New()
				s, err := l.NewSocket(newScriptConn())
				if err != nil {
					b.Fatal(err)
				}
				defer func() { l.Stop(); l.RunNoWait() }()
				s.SetTimeout(benchIdle, func() {})
				refresh = func() { loop.Touch(s) }
			case "idleconn":
				w := timewheel.New()
				defer w.Close()
				c, err := idleconn.NewConn(nopConn{}, w, benchIdle)
				if err != nil {
					b.Fatal(err)
				}
				defer c.Close()
				buf := make([]byte, 64)
				refresh = func() { c.Read(buf) }
			case "stdlib":
				server, client := tcpPair(b)
				defer server.Close()
				defer client.Close()
				refresh = func() { server.SetReadDeadline(time.Now().Add(benchIdle)) }
			}
			b.ReportAllocs()
			for b.Loop() {
				refresh()
			}
		})
	}
}

// tcpPair returns the two ends of a loopback TCP connection.
func tcpPair(b *testing.B) (server, client net.Conn) {
	servers, clients := tcpPairs(b, 1)
	return servers[0], clients[0]
}

// tcpPairs returns the two ends of n loopback TCP connections.
func tcpPairs(b *testing.B, n int) (servers, clients []net.Conn) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, n)
	go func() {
		for range n {
			c, _ := ln.Accept()
			accepted <- c
		}
	}()
	for range n {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			b.Fatal(err)
		}
		clients = append(clients, c)
		if s := <-accepted; s != nil {
			servers = append(servers, s)
		} else {
			b.Fatal("accept failed")
		}
	}
	return servers, clients
}

// idleSockets is the number of connections BenchmarkIdleSockets holds.
const idleSockets = 1000

// BenchmarkIdleSockets is the memory an idle server connection costs,
// over the bare connection: heap and goroutine stacks after a collection,
// per connection, with idleSockets of them open (B/conn, the sum of
// heap-B/conn and stack-B/conn; the stacks' size is the runtime's
// choice, the same for the three, which all have one goroutine blocked in
// Read). impl=loop is a loop
// socket with a SetTimeout (its reading goroutine, its 4 KiB buffer, its
// timer); impl=idleconn is an idleconn.Conn and a goroutine blocked in its
// Read with a 4 KiB buffer, as a server runs one; impl=stdlib is the same
// goroutine and buffer on the bare connection with a read deadline.
func BenchmarkIdleSockets(b *testing.B) {
	for _, impl := range []string{"loop", "idleconn", "stdlib"} {
		b.Run("impl="+impl, func(b *testing.B) {
			var heap, stack float64
			for b.Loop() {
				heap, stack = holdIdle(b, impl)
			}
			b.ReportMetric(heap+stack, "B/conn")
			b.ReportMetric(heap, "heap-B/conn")
			b.ReportMetric(stack, "stack-B/conn")
		})
	}
}

// holdIdle opens idleSockets loopback connections, makes their server
// ends idle sockets of impl, and returns what that added per connection,
// on the heap and in goroutine stacks.
func holdIdle(b *testing.B, impl string) (heap, stack float64) {
	servers, clients := tcpPairs(b, idleSockets)
	defer func() {
		for _, c := range clients {
			c.Close()
		}
	}()
	w := timewheel.New()
	defer w.Close()
	l := loop.New()
	var wg sync.WaitGroup
	heap0, stack0 := inUse()
	for i, c := range servers {
		switch impl {
		case "loop":
			s, err := l.NewSocket(c)
			if err != nil {
				b.Fatal(err)
			}
			s.SetTimeout(benchIdle, func() {})
		case "idleconn":
			ic, err := idleconn.NewConn(c, w, benchIdle)
			if err != nil {
				b.Fatal(err)
			}
			servers[i] = ic
			buf := make([]byte, 4<<10)
			wg.Go(func() { ic.Read(buf) })
		case "stdlib":
			c.SetReadDeadline(time.Now().Add(benchIdle))
			buf := make([]byte, 4<<10)
			wg.Go(func() { c.Read(buf) })
		}
	}
	waitBlockedInRead(idleSockets) // stacks as they are when idle
	heap1, stack1 := inUse()
	l.Stop()
	l.RunNoWait() // its sockets' goroutines have returned
	for _, c := range servers {
		c.Close()
	}
	wg.Wait()
	return (heap1 - heap0) / idleSockets, (stack1 - stack0) / idleSockets
}

// waitBlockedInRead waits until n goroutines are blocked in the poller,
// each in its connection's Read.
func waitBlockedInRead(n int) {
	buf := make([]byte, 8<<20)
	for {
		all := string(buf[:runtime.Stack(buf, true)])
		if strings.Count(all, "[IO wait") >= n {
			return
		}
		runtime.Gosched()
	}
}

// inUse returns the bytes of heap and of goroutine stacks in use after a
// collection.
func inUse() (heap, stack float64) {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return float64(ms.HeapAlloc), float64(ms.StackInuse)
}

// BenchmarkSocketChunk is the cost of one chunk read through a loop
// socket, handed from its reading goroutine to the loop and delivered to
// OnData, from a connection whose Read returns 64 bytes at once;
// impl=read is the same Read called in a loop by one goroutine, the
// floor. (What a socket costs per read beyond the refresh: two goroutine
// hand-offs.)
func BenchmarkSocketChunk(b *testing.B) {
	b.Run("impl=loop", func(b *testing.B) {
		l := loop.New()
		s, err := l.NewSocket(sized{64})
		if err != nil {
			b.Fatal(err)
		}
		n := 0
		s.OnData(func([]byte) {
			if n++; n == b.N {
				s.Close()
			}
		})
		b.ReportAllocs()
		b.ResetTimer()
		if err := l.Run(); err != nil {
			b.Fatal(err)
		}
	})
	b.Run("impl=read", func(b *testing.B) {
		c := sized{64}
		buf := make([]byte, 4<<10)
		b.ReportAllocs()
		for b.Loop() {
			c.Read(buf)
		}
	})
}

// sized is a net.Conn whose Read returns n bytes at once, and whose Close
// does nothing.
type sized struct{ n int }

func (c sized) Read(b []byte) (int, error)     { return min(c.n, len(b)), nil }
func (sized) Write(b []byte) (int, error)      { return len(b), nil }
func (sized) Close() error                     { return nil }
func (sized) LocalAddr() net.Addr              { return &net.TCPAddr{} }
func (sized) RemoteAddr() net.Addr             { return &net.TCPAddr{} }
func (sized) SetDeadline(time.Time) error      { return nil }
func (sized) SetReadDeadline(time.Time) error  { return nil }
func (sized) SetWriteDeadline(time.Time) error { return nil }
