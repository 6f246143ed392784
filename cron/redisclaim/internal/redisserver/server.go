// Package redisserver starts a redis-server of the machine's for tests
// and examples: on a free loopback port, in a directory of its own, with
// no persistence (--save "" --appendonly no), stopped and started again
// on the same port when told.
package redisserver

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os/exec"
	"strconv"
	"sync"
	"time"
)

// ErrNotFound is returned by Start when redis-server is not on the PATH.
var ErrNotFound = errors.New("redisserver: redis-server not found on PATH; install it (Debian, Ubuntu: apt-get install -y redis-server)")

// readyTimeout bounds how long Start waits for the server to accept
// connections.
const readyTimeout = 10 * time.Second

// Server is a running, or stopped, redis-server. It is not safe for
// concurrent use.
type Server struct {
	Addr string // "127.0.0.1:port"

	bin, dir string
	port     int
	cmd      *exec.Cmd     // nil when stopped
	exited   chan struct{} // closed when cmd has exited
	out      *readyWriter
}

// Start starts a redis-server in dir, on a free loopback port.
func Start(dir string) (*Server, error) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return nil, ErrNotFound
	}
	s := &Server{bin: bin, dir: dir}
	for range 3 { // another process may take the port first
		if s.port, err = freePort(); err != nil {
			return nil, err
		}
		s.Addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(s.port))
		if err = s.Restart(); err == nil {
			return s, nil
		}
	}
	return nil, err
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("redisserver: no free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// Restart starts the server again, empty, on its port, after Stop.
func (s *Server) Restart() error {
	if s.cmd != nil {
		return errors.New("redisserver: Restart of a running server")
	}
	s.out = &readyWriter{ready: make(chan struct{})}
	cmd := exec.Command(s.bin,
		"--port", strconv.Itoa(s.port), "--bind", "127.0.0.1", "--dir", s.dir,
		"--save", "", "--appendonly", "no", "--daemonize", "no", "--logfile", "")
	cmd.Stdout, cmd.Stderr = s.out, s.out
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("redisserver: %w", err)
	}
	exited := make(chan struct{})
	go func() {
		cmd.Wait()
		close(exited)
	}()
	s.cmd, s.exited = cmd, exited
	timeout := time.NewTimer(readyTimeout)
	defer timeout.Stop()
	select {
	case <-s.out.ready:
		return nil
	case <-exited:
		s.cmd = nil
		return fmt.Errorf("redisserver: redis-server on port %d exited: %s", s.port, s.out.String())
	case <-timeout.C:
		s.Stop()
		return fmt.Errorf("redisserver: redis-server on port %d not ready after %v: %s", s.port, readyTimeout, s.out.String())
	}
}

// Stop kills the server, as a crash would, and waits for it to exit. It
// does nothing on a stopped server.
func (s *Server) Stop() {
	if s.cmd == nil {
		return
	}
	s.cmd.Process.Kill()
	<-s.exited
	s.cmd = nil
}

// readyWriter collects the server's log and closes ready when it says it
// accepts connections.
type readyWriter struct {
	mu    sync.Mutex
	buf   bytes.Buffer // guarded by mu
	ready chan struct{}
	seen  bool // guarded by mu
}

func (w *readyWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	if !w.seen && bytes.Contains(w.buf.Bytes(), []byte("Ready to accept connections")) {
		w.seen = true
		close(w.ready)
	}
	return len(p), nil
}

func (w *readyWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}
