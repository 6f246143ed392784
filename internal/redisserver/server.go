// Package redisserver runs a redis-server of the machine's for the tests,
// benchmarks and examples of the modules that talk to Redis (durable,
// cron/redisclaim): on a free loopback port, in a directory of its own,
// with the persistence the caller asks for (none by default). It can kill
// the server as a crash would, shut it down as an operator would, and
// start it again on the same port and directory, so that it reloads what
// it persisted. It imports only the standard library.
package redisserver

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"
)

// ErrNotFound is returned by Start when redis-server is not on the PATH.
var ErrNotFound = errors.New("redisserver: redis-server not found on PATH; install it (Debian, Ubuntu: apt-get install -y redis-server)")

// Persistence settings for Start.
var (
	NoPersistence = []string{"--save", "", "--appendonly", "no"}
	AOFEverySec   = []string{"--save", "", "--appendonly", "yes", "--appendfsync", "everysec"}
	AOFAlways     = []string{"--save", "", "--appendonly", "yes", "--appendfsync", "always"}
)

// Server is a redis-server, running or stopped. It is not safe for
// concurrent use.
type Server struct {
	Addr string // 127.0.0.1:port

	bin, dir string
	port     int
	args     []string
	cmd      *exec.Cmd     // nil when stopped
	exited   chan struct{} // closed once cmd has exited
	log      *logWriter
	orphan   bool     // killed when the process that started it dies (a Cluster's nodes)
	pre      []string // arguments before the port: a Sentinel's config file and --sentinel
	ready    string   // the log line that says it accepts connections; "" for a server's
	paused   bool     // stopped by Pause (SIGSTOP) until Resume
}

// Start starts a redis-server with the arguments args (NoPersistence,
// AOFEverySec, AOFAlways, or others; NoPersistence if none) in dir, on a
// free loopback port.
func Start(dir string, args ...string) (*Server, error) {
	if len(args) == 0 {
		args = NoPersistence
	}
	return start(&Server{dir: dir, args: args})
}

// start starts s, made with its dir, args and what else it needs, on a
// free loopback port.
func start(s *Server) (*Server, error) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return nil, ErrNotFound
	}
	s.bin = bin
	for range 3 { // another process may take the port between the probe and the start
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("redisserver: no free port: %w", err)
		}
		s.port = l.Addr().(*net.TCPAddr).Port
		l.Close()
		s.Addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(s.port))
		if err = s.Restart(); err == nil {
			return s, nil
		}
	}
	return nil, err
}

// Restart starts the stopped server again on its port and directory: it
// reloads what it persisted there.
func (s *Server) Restart() error {
	if s.cmd != nil {
		return errors.New("redisserver: Restart of a running server")
	}
	s.log = &logWriter{ready: make(chan struct{}), line: s.ready}
	if s.log.line == "" {
		s.log.line = "Ready to accept connections"
	}
	args := append(append(s.pre[:len(s.pre):len(s.pre)], "--port", strconv.Itoa(s.port), "--bind", "127.0.0.1", "--dir", s.dir,
		"--daemonize", "no", "--logfile", ""), s.args...)
	cmd := exec.Command(s.bin, args...)
	cmd.Stdout, cmd.Stderr = s.log, s.log
	if s.orphan {
		dieWithParent(cmd)
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("redisserver: %w", err)
	}
	s.cmd, s.exited = cmd, make(chan struct{})
	go func(exited chan struct{}) {
		cmd.Wait()
		close(exited)
	}(s.exited)
	t := time.NewTimer(30 * time.Second)
	defer t.Stop()
	select {
	case <-s.log.ready:
		return nil
	case <-s.exited:
		s.cmd = nil
		return fmt.Errorf("redisserver: redis-server on port %d exited: %s", s.port, s.log)
	case <-t.C:
		s.Stop()
		return fmt.Errorf("redisserver: redis-server on port %d not ready in 30s: %s", s.port, s.log)
	}
}

// Stop kills the server (SIGKILL), as a crash would, and waits for it to
// exit. It does nothing on a stopped server.
func (s *Server) Stop() { s.end(syscall.SIGKILL) }

// Shutdown stops the server with SIGTERM, as an operator would: it
// writes its AOF out before it exits.
func (s *Server) Shutdown() { s.end(syscall.SIGTERM) }

func (s *Server) end(sig syscall.Signal) {
	if s.cmd == nil {
		return
	}
	s.cmd.Process.Signal(sig)
	<-s.exited
	s.cmd, s.paused = nil, false
}

// logWriter keeps the server's log and closes ready once the server
// accepts connections: once the log holds line.
type logWriter struct {
	mu    sync.Mutex
	buf   bytes.Buffer // guarded by mu
	seen  bool         // guarded by mu
	ready chan struct{}
	line  string
}

func (w *logWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	if !w.seen && bytes.Contains(w.buf.Bytes(), []byte(w.line)) {
		w.seen = true
		close(w.ready)
	}
	return len(p), nil
}

func (w *logWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// ForTest starts a server for a test or benchmark, as Start does in a
// temporary directory, and stops it when tb ends. Without redis-server on
// the PATH it skips tb, unless the environment sets CI: there the tests
// that talk to Redis must run, so it fails tb instead.
func ForTest(tb testing.TB, args ...string) *Server {
	tb.Helper()
	srv, err := Start(tb.TempDir(), args...)
	if errors.Is(err, ErrNotFound) {
		if os.Getenv("CI") != "" {
			tb.Fatalf("%v; CI is set, so these tests must run", err)
		}
		tb.Skip(err)
	}
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(srv.Stop)
	return srv
}
