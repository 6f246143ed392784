package loop

import (
	"fmt"
	"github.com/timewheel/timewheel/internal/nilarg"
	"io"
	"net"
	"time"
)

// readSize is the size of a socket's read buffer: the most a socket reads
// ahead of its loop.
const readSize = 4 << 10

// Socket is a connection on a loop, in the style of Node.js's net.Socket.
// What is read from it, its end and its errors arrive as callbacks on the
// loop goroutine, in order. Writes are queued by the loop and written by
// another goroutine, so that the loop never blocks on the network. An idle
// timeout ([Socket.SetTimeout]) lives in the loop's own wheel. It is made
// by [Loop.NewSocket], or handed to a [Listener]'s callback.
//
// # Reading, and how far it reads ahead
//
// A socket has one goroutine that blocks in its connection's Read, so the
// waiting is done by Go's netpoller, and hands what it read to the loop.
// It reads into one buffer of 4 KiB, and reads again only once the loop
// has delivered that chunk to [Socket.OnData]: at most one chunk of at
// most 4 KiB is in flight per socket. A loop that falls behind therefore
// stops reading, the kernel's buffers fill, and TCP's flow control slows
// the peer down; nothing is buffered without bound. [Socket.Pause] holds
// the chunk that has arrived, which stops the reading the same way, until
// [Socket.Resume]. The slice OnData is given is that buffer: it is valid
// only until OnData returns.
//
// # Writing, and its bound
//
// [Socket.Write] copies the bytes into the socket's queue and returns at
// once; a goroutine started for each batch writes what is queued by then,
// one batch at a time, so a socket has at most one writing goroutine, and
// an idle socket none. Write returns false once 64 KiB or more are queued
// or being written, as Node's write returns false at its high-water mark:
// the bytes are queued all the same, and [Socket.OnDrain]'s callback runs
// when the queue has been written out. The bound is advisory, as in Node:
// a loop that keeps writing after false, to a peer that does not read,
// grows the queue, so it should wait for OnDrain (or Pause the socket it
// copies from).
//
// # Ending and closing
//
// A socket ends once, with its callbacks in this order:
//
//   - The peer ends its side (a read returns io.EOF): OnData for what was
//     read before, OnEnd, then, as Node's sockets do by default (no
//     half-open sockets), the socket ends its own side as [Socket.End]
//     does, and OnClose runs once the queued writes are written.
//   - A read or a write fails: OnData for what was read before the
//     error, OnError with it, then OnClose.
//   - [Socket.End] from the loop: the queued writes are written, the
//     connection's write side is shut down (CloseWrite, a FIN over TCP),
//     and reading goes on until the peer ends: OnData..., OnEnd, OnClose.
//     A connection that cannot half-close (no CloseWrite method, as
//     net.Pipe's) is closed once the writes are written, and only OnClose
//     runs.
//   - [Socket.Close] from the loop (Node's destroy): the connection is
//     closed at once; queued writes and any chunk read but not yet
//     delivered are dropped; only OnClose runs.
//
// OnClose runs on a later pass of the loop than the event or call that
// closed the socket, once the socket's goroutines have returned, and is the
// last callback of the socket: none of its callbacks runs after it, a
// pending [Socket.Poll]'s included. Until then the closed socket keeps the
// loop alive (unless unreferenced), so a Run that returns nil leaves no
// goroutine of the loop's sockets behind. An idle timeout does not close
// the socket by itself: its callback decides. [Loop.Stop] closes the
// connection of every open socket, and runs none of these callbacks (a
// stopped loop runs nothing).
//
// # Concurrency, zero value and copies
//
// A Socket is not safe for concurrent use: its methods belong to the loop
// goroutine, or to setting up before the loop runs, as the methods of a
// [Timer] do, and panic if called from another goroutine while the loop
// waits for work. Its callbacks run on the loop goroutine. One that
// panics unwinds through Run, as a timer's callback does, and leaves the
// socket as if it had returned. Run again, the loop delivers what comes
// next: the next chunk, or the end or error that came with the chunk, and
// the chunk a Poll's panicking callback was told of. The zero Socket
// has no connection and no loop: each of its methods, and each method of
// a nil *Socket, panics naming the method. A Socket must not be copied:
// the methods of a copy panic.
type Socket struct {
	l    *Loop
	self *Socket // the socket NewSocket made; a copy is not its own self
	c    net.Conn

	onData    func([]byte)
	onEnd     func()
	onError   func(error)
	onClose   func()
	onDrain   func()
	onTimeout func()

	// The reader goroutine fills rbuf, rn and rerr, posts arriveFn, and
	// reads again when the loop sends on more (closed when the socket
	// closes). The loop touches them only between the two.
	rbuf     []byte
	rn       int
	rerr     error
	more     chan struct{} // capacity 1
	arriveFn func()        // s.arrive, made once so that posting it allocates nothing

	// Owned by the loop goroutine.
	held    bool // a chunk has arrived and is not delivered yet
	paused  bool
	rdone   bool // the peer's end has been delivered
	closed  bool
	reading bool  // the reading goroutine has not told the loop it returned
	hold          // released once closed, its goroutines gone and OnClose posted
	err     error // why it closed

	// Writing; see write.go.
	wq        []byte // queued, owned by the loop
	wbuf      []byte // being written, owned by the writing goroutine while writing
	werr      error  // the writing goroutine's result
	writing   bool
	ending    bool // End called, or the peer ended: shut the write side after the queue
	wdone     bool // the write side is shut
	needDrain bool // a Write returned false: OnDrain when the queue empties
	wroteFn   func()

	// The idle timeout; see timeout.go.
	idle      time.Duration
	last      int64 // nanoseconds since the loop's epoch at the last activity
	idleTimer *Timer
	idleFired bool // the timeout has run since the last activity: re-arm on the next

	// The pending Poll; see poll.go.
	poll      func(readable bool)
	pollTimer *Timer
}

// closeWriter is a connection that can half-close, as *net.TCPConn can.
type closeWriter interface{ CloseWrite() error }

// NewSocket returns a socket of the loop on c, and starts reading from c:
// set the socket's callbacks before the loop runs its next pass (in the
// callback or set-up code that made it), since what is read is delivered
// from then on. An open socket keeps the loop alive, unless it is
// unreferenced ([Socket.Unref]). NewSocket returns ErrStopped on a
// stopped loop, leaving c open. It panics if c is nil (or a nil pointer),
// and if called from another goroutine while the loop waits for work.
// The complexity is O(1).
func (l *Loop) NewSocket(c net.Conn) (*Socket, error) {
	if nilarg.Is(c) {
		panic(fmt.Sprintf("loop: NewSocket called with nil net.Conn%s", nilarg.Type(c)))
	}
	l.init("NewSocket")
	l.owned("NewSocket")
	return l.newSocket(c)
}

func (l *Loop) newSocket(c net.Conn) (*Socket, error) {
	s := &Socket{l: l, c: c, rbuf: make([]byte, readSize), more: make(chan struct{}, 1), reading: true}
	s.self = s
	s.arriveFn = s.arrive
	s.wroteFn = s.wrote
	if err := l.register(s); err != nil {
		return nil, err
	}
	l.refs++
	l.io.Go(s.read)
	return s, nil
}

// usable reports whether the socket may be used here: it is the socket
// NewSocket made, and the loop is not waiting (so this is the loop
// goroutine, or set-up before the loop runs). It costs a comparison and
// an atomic load; misuse says what is wrong when it is false.
func (s *Socket) usable() bool {
	return s != nil && s.self == s && !s.l.waiting.Load()
}

// misuse panics with what is wrong with the call of method: a nil or zero
// Socket, a copy, or a call from another goroutine while the loop waits.
func (s *Socket) misuse(method string) {
	switch {
	case s == nil || s.l == nil:
		panic("loop: Socket." + method + " called on a zero or nil Socket; make one with Loop.NewSocket or a Listener")
	case s.self != s:
		panic("loop: Socket." + method + " called on a copy of a Socket; use the *Socket that Loop.NewSocket returned")
	default:
		s.l.owned("Socket." + method)
	}
}

// OnData sets the callback that receives what is read from the socket, in
// order, one chunk of at most 4 KiB at a time. p is valid only until f
// returns. A nil f drops what is read (it still counts as activity for
// the idle timeout). It panics as Write does. The complexity is O(1).
func (s *Socket) OnData(f func(p []byte)) {
	if !s.usable() {
		s.misuse("OnData")
	}
	s.onData = f
}

// OnEnd sets the callback that runs when the peer has ended its side,
// after the last OnData; see [Socket] for what follows. A nil f removes
// it. It panics as Write does. The complexity is O(1).
func (s *Socket) OnEnd(f func()) {
	if !s.usable() {
		s.misuse("OnEnd")
	}
	s.onEnd = f
}

// OnError sets the callback that receives the error of a failed read or
// write, which closes the socket: OnClose follows. A nil f removes it.
// It panics as Write does. The complexity is O(1).
func (s *Socket) OnError(f func(err error)) {
	if !s.usable() {
		s.misuse("OnError")
	}
	s.onError = f
}

// OnClose sets the callback that runs once the socket is closed, by the
// loop, by the peer's end or by an error: the last callback of the
// socket. A nil f removes it. It panics as Write does. The complexity is
// O(1).
func (s *Socket) OnClose(f func()) {
	if !s.usable() {
		s.misuse("OnClose")
	}
	s.onClose = f
}

// Pause stops delivering what is read, as Node's socket.pause: the chunk
// that arrives is held, and the socket reads no more until Resume, so the
// peer is slowed down by TCP's flow control. A pending Poll still sees
// the held chunk as readable. It panics as Write does. The complexity is
// O(1).
func (s *Socket) Pause() {
	if !s.usable() {
		s.misuse("Pause")
	}
	s.paused = true
}

// Resume undoes Pause: a chunk held is delivered on the next pass, and
// reading goes on. It panics as Write does. The complexity is O(1).
func (s *Socket) Resume() {
	if !s.usable() {
		s.misuse("Resume")
	}
	if !s.paused {
		return
	}
	s.paused = false
	if s.held && !s.closed {
		s.l.Post(s.flow) // ErrStopped: nothing runs again anyway
	}
}

// Unref makes the open socket not keep the loop alive, as libuv's
// uv_unref: Run may return while it is open. Its callbacks still run
// while the loop runs. It panics as Write does. The complexity is O(1).
func (s *Socket) Unref() {
	if !s.usable() {
		s.misuse("Unref")
	}
	s.setRef(s.l, false)
}

// Ref undoes Unref: the open socket keeps the loop alive again. It panics
// as Write does. The complexity is O(1).
func (s *Socket) Ref() {
	if !s.usable() {
		s.misuse("Ref")
	}
	s.setRef(s.l, true)
}

// Err returns nil while the socket is open. Once it is closed, it returns
// the error of the read or write that failed, if one did, and an error
// matching net.ErrClosed otherwise; once [Loop.Stop] has closed it, one
// matching both ErrStopped and net.ErrClosed. It panics as Write does.
// The complexity is O(1).
func (s *Socket) Err() error {
	if !s.usable() {
		s.misuse("Err")
	}
	if s.err == nil && s.l.stopped.Load() {
		return errShut
	}
	return s.err
}

// errShut is a socket's error once Stop has closed its connection: Stop
// runs on any goroutine, so it leaves the socket's own fields, and s.err,
// to the loop, which runs nothing more.
var errShut = fmt.Errorf("%w: the loop closed the connection: %w", ErrStopped, net.ErrClosed)

// LocalAddr returns the local address of the socket's connection. It is
// safe for concurrent use if the connection's is, as net's are.
func (s *Socket) LocalAddr() net.Addr {
	if s == nil || s.self != s {
		s.misuse("LocalAddr")
	}
	return s.c.LocalAddr()
}

// RemoteAddr returns the remote address of the socket's connection. It is
// safe for concurrent use if the connection's is, as net's are.
func (s *Socket) RemoteAddr() net.Addr {
	if s == nil || s.self != s {
		s.misuse("RemoteAddr")
	}
	return s.c.RemoteAddr()
}

// Close closes the socket at once, as Node's socket.destroy: the
// connection is closed, queued writes and anything read but not delivered
// are dropped, a pending Poll is cancelled, and OnClose runs on a later
// pass. It returns the connection's Close error; on a socket already
// closed it returns an error matching net.ErrClosed, as package net does.
// It panics as Write does. The complexity is O(1).
func (s *Socket) Close() error {
	if !s.usable() {
		s.misuse("Close")
	}
	if s.closed {
		return fmt.Errorf("loop: Socket.Close: %w", net.ErrClosed)
	}
	return s.closeNow(nil)
}

// shut closes the connection, for Stop, from any goroutine: the
// goroutines of the socket return.
func (s *Socket) shut() { s.c.Close() }

// read is the socket's reading goroutine: one chunk at a time, handed to
// the loop, the next read only when the loop has delivered it.
func (s *Socket) read() {
	for {
		n, err := s.c.Read(s.rbuf)
		if n == 0 && err == nil {
			continue
		}
		s.rn, s.rerr = n, err
		if s.l.Post(s.arriveFn) != nil || err != nil {
			return // the loop has stopped, or the connection is done
		}
		select {
		case _, open := <-s.more:
			if !open { // closed by the loop
				s.l.Post(s.readerGone)
				return
			}
		case <-s.l.done:
			return
		}
	}
}

// arrive takes the chunk the reading goroutine posted, on the loop.
func (s *Socket) arrive() {
	if s.rerr != nil {
		s.reading = false // the reading goroutine has returned
	}
	if s.closed {
		s.release() // the chunk is dropped
		return
	}
	s.held = true
	s.flow()
}

// readerGone hears, on the loop, that the reading goroutine of the closed
// socket has returned.
func (s *Socket) readerGone() {
	s.reading = false
	s.release()
}

// over reports whether the socket's callbacks are over: it is closed, or
// its loop stopped (by the callback that just ran, maybe).
func (s *Socket) over() bool { return s.closed || s.l.stopped.Load() }

// flow delivers the chunk held, unless the socket is paused: a pending
// Poll hears of it first. A callback that panics unwinds through Run and
// leaves the socket as if it had returned (see pollFirst, data and end).
func (s *Socket) flow() {
	if s.over() || !s.held {
		return
	}
	if s.poll != nil {
		s.pollFirst()
		if s.over() {
			return
		}
	}
	if s.paused {
		return
	}
	s.held = false
	n, err := s.rn, s.rerr
	if n > 0 {
		s.touch()
		if s.onData != nil {
			s.data(n, err)
		}
		if s.over() {
			return
		}
		if err != nil && s.paused { // paused by OnData: the end or the error waits for Resume
			s.rn, s.held = 0, true
			return
		}
	}
	switch {
	case err == nil:
		s.more <- struct{}{}
	case err == io.EOF:
		s.end()
	default:
		s.fail(err)
	}
}

// pollFirst tells the pending Poll that the socket is readable. If its f
// panics, the chunk is delivered on the next pass.
func (s *Socket) pollFirst() {
	returned := false
	defer func() {
		if !returned {
			s.l.Post(s.flow)
		}
	}()
	s.pollDone(true)
	returned = true
}

// data hands OnData the n bytes read. If OnData panics, the socket goes
// on as if it had returned: it reads the next chunk, or delivers on the
// next pass the end or the error that came with these bytes.
func (s *Socket) data(n int, err error) {
	returned := false
	defer func() {
		switch {
		case returned || s.over():
		case err == nil:
			s.more <- struct{}{}
		default:
			s.rn, s.held = 0, true
			s.l.Post(s.flow)
		}
	}()
	s.onData(s.rbuf[:n])
	returned = true
}

// end delivers the peer's end and ends the socket's own side, even if
// OnEnd panics.
func (s *Socket) end() {
	s.rdone = true
	defer func() {
		if !s.over() {
			s.endWrite()
		}
	}()
	if s.onEnd != nil {
		s.onEnd()
	}
}

// fail closes the socket for err, then tells OnError.
func (s *Socket) fail(err error) {
	s.closeNow(err)
	if s.onError != nil && !s.l.stopped.Load() {
		s.onError(err)
	}
}

// closeNow closes the socket and its connection, stops its timers and
// lets its goroutines go; it returns the connection's Close error.
// release follows once they have returned.
func (s *Socket) closeNow(err error) error {
	s.closed = true
	s.err = err
	if err == nil {
		s.err = net.ErrClosed
	}
	cerr := s.c.Close()
	close(s.more)
	s.l.deregister(s)
	s.held, s.wq, s.poll = false, nil, nil
	if s.idleTimer != nil {
		s.idleTimer.Stop()
	}
	if s.pollTimer != nil {
		s.pollTimer.Stop()
	}
	s.release()
	return cerr
}

// release, once the socket is closed and its goroutines have returned,
// stops it keeping the loop alive and posts OnClose.
func (s *Socket) release() {
	if !s.closed || s.reading || s.writing || s.released {
		return
	}
	s.unhold(s.l)
	s.l.Post(s.closing) // ErrStopped: nothing runs again anyway
}

// closing runs OnClose, the socket's last callback.
func (s *Socket) closing() {
	if s.onClose != nil {
		s.onClose()
	}
}
