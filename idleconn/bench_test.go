package idleconn_test

import (
	"context"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/timewheel/timewheel"
	"github.com/timewheel/timewheel/idleconn"
)

// The benchmarks run idleconn and the standard library's way side by side
// in one function, so that one benchstat shows the ratio:
//
//	go test -run '^$' -bench . -count 6 ./idleconn > idle.txt
//	go run golang.org/x/perf/cmd/benchstat@latest -col /impl idle.txt
//
// The standard library's idle timeout refreshed on every Read is a read
// deadline: SetReadDeadline(time.Now().Add(d)) before each Read, which is
// also what http.Server does with IdleTimeout between requests.

const benchTimeout = 30 * time.Second

// BenchmarkRead is the cost of one Read with the idle timeout refreshed.
// With io=none the Read itself is free (a connection that returns at
// once), so the numbers are the refresh alone; with io=tcp it reads 64
// bytes from a loopback TCP connection whose peer keeps it full. impl=none
// is the bare Read, without any timeout.
func BenchmarkRead(b *testing.B) {
	for _, io := range []string{"none", "tcp"} {
		for _, impl := range []string{"none", "idleconn", "stdlib"} {
			b.Run(fmt.Sprintf("io=%s/impl=%s", io, impl), func(b *testing.B) {
				benchRead(b, io, impl)
			})
		}
	}
}

func benchRead(b *testing.B, io, impl string) {
	needFiles(b, 64)
	w := timewheel.New()
	defer w.Close()
	tcp, stop := fullTCPConn(b, io == "tcp")
	defer stop()
	var src net.Conn = nopConn{}
	if io == "tcp" {
		src = tcp
	}
	read := src.Read
	switch impl {
	case "idleconn":
		c, err := idleconn.NewConn(src, w, benchTimeout)
		if err != nil {
			b.Fatal(err)
		}
		defer c.Close()
		read = c.Read
	case "stdlib":
		read = func(p []byte) (int, error) {
			// The deadline must be on a real socket even when the Read is not.
			if err := tcp.SetReadDeadline(time.Now().Add(benchTimeout)); err != nil {
				return 0, err
			}
			return src.Read(p)
		}
	}
	buf := make([]byte, 64)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := read(buf); err != nil {
			b.Fatal(err)
		}
	}
}

// fullTCPConn returns the reading end of a loopback TCP connection. If
// feed is set, a goroutine keeps writing to it until stop is called.
func fullTCPConn(b *testing.B, feed bool) (r *net.TCPConn, stop func()) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, _ := l.Accept()
		accepted <- c
	}()
	peer, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		b.Fatal(err)
	}
	c := <-accepted
	if c == nil {
		b.Fatal("accept failed")
	}
	var wg sync.WaitGroup
	if feed {
		wg.Go(func() {
			chunk := make([]byte, 64<<10)
			for {
				if _, err := peer.Write(chunk); err != nil {
					return
				}
			}
		})
	}
	return c.(*net.TCPConn), func() {
		c.Close()
		peer.Close()
		wg.Wait()
	}
}

// idleConns is the number of connections BenchmarkIdleConns holds at once.
const idleConns = 1000

// BenchmarkIdleConns opens idleConns loopback connections per op, both
// ends in this process, and leaves them idle with a 30s idle timeout,
// either wrapped by idleconn or with a read deadline. With server=raw each
// server connection has a goroutine blocked in Read; with server=http they
// are keep-alive connections of an http.Server (IdleTimeout for
// impl=stdlib, an idleconn Listener for impl=idleconn) after one request
// from an http.Client. Metrics: B/conn is the heap and stack in use per
// connection (both ends, and for http the client's transport) while they
// are all open; timeout-B/conn is the part that setting up the idle
// timeout adds (server=raw only).
func BenchmarkIdleConns(b *testing.B) {
	for _, server := range []string{"raw", "http"} {
		for _, impl := range []string{"idleconn", "stdlib"} {
			b.Run(fmt.Sprintf("server=%s/impl=%s", server, impl), func(b *testing.B) {
				needFiles(b, 2*idleConns+256)
				w := timewheel.New()
				defer w.Close()
				var perConn, timeoutPerConn float64
				for b.Loop() {
					if server == "raw" {
						perConn, timeoutPerConn = holdRaw(b, w, impl == "idleconn")
					} else {
						perConn = holdHTTP(b, w, impl == "idleconn")
					}
				}
				b.ReportMetric(perConn, "B/conn")
				if server == "raw" {
					b.ReportMetric(timeoutPerConn, "timeout-B/conn")
				}
			})
		}
	}
}

// inUse returns the bytes of heap and goroutine stacks in use after a GC.
func inUse() float64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return float64(ms.HeapAlloc + ms.StackInuse)
}

// holdRaw opens idleConns connections with a reader each, idle.
func holdRaw(b *testing.B, w *timewheel.Wheel, wrap bool) (perConn, timeoutPerConn float64) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	before := inUse()
	servers := make([]net.Conn, idleConns)
	clients := make([]net.Conn, idleConns)
	for i := range idleConns {
		accepted := make(chan net.Conn, 1)
		go func() {
			c, _ := l.Accept()
			accepted <- c
		}()
		if clients[i], err = net.Dial("tcp", l.Addr().String()); err != nil {
			b.Fatal(err)
		}
		servers[i] = <-accepted
	}
	bare := inUse()
	for i, c := range servers {
		if wrap {
			servers[i], _ = idleconn.NewConn(c, w, benchTimeout)
		} else {
			c.SetReadDeadline(time.Now().Add(benchTimeout))
		}
	}
	timed := inUse()
	var wg sync.WaitGroup
	for _, c := range servers {
		wg.Go(func() { c.Read(make([]byte, 1)) })
	}
	all := inUse()
	for i := range servers {
		servers[i].Close()
		clients[i].Close()
	}
	wg.Wait()
	return (all - before) / idleConns, (timed - bare) / idleConns
}

// holdHTTP opens idleConns keep-alive connections to an http.Server with
// one request each and leaves them idle.
func holdHTTP(b *testing.B, w *timewheel.Wheel, wrap bool) (perConn float64) {
	nl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	var ln net.Listener = nl
	srv := &http.Server{ErrorLog: log.New(io.Discard, "", 0)}
	if wrap {
		ln, _ = idleconn.NewListener(nl, w, benchTimeout)
	} else {
		srv.IdleTimeout = benchTimeout
	}
	gate := newBarrier(idleConns)
	var responded sync.WaitGroup
	responded.Add(idleConns)
	srv.Handler = http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		gate.wait(r.Context())
		io.WriteString(rw, "ok")
	})
	srv.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateIdle {
			responded.Done()
		}
	}
	served := make(chan struct{})
	go func() { srv.Serve(ln); close(served) }()
	tr := &http.Transport{MaxIdleConnsPerHost: idleConns, DisableCompression: true}
	client := &http.Client{Transport: tr}
	url := "http://" + nl.Addr().String() + "/"

	before := inUse()
	var wg sync.WaitGroup
	for range idleConns {
		wg.Go(func() {
			req, _ := http.NewRequestWithContext(context.Background(), "GET", url, nil)
			resp, err := client.Do(req)
			if err != nil {
				b.Error(err)
				return
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		})
	}
	wg.Wait()
	responded.Wait()
	all := inUse()
	srv.Close()
	<-served
	tr.CloseIdleConnections()
	return (all - before) / idleConns
}
