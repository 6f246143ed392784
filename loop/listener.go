package loop

import (
	"fmt"
	"github.com/timewheel/timewheel/internal/nilarg"
	"net"
	"sync/atomic"
)

// Listener is a listener on a loop, in the style of Node.js's net.Server:
// each connection it accepts arrives on the loop goroutine as a new
// [Socket], handed to the callback given to [Loop.NewListener]. It is
// made by NewListener.
//
// A Listener has one goroutine that blocks in its net.Listener's Accept,
// and accepts the next connection only once the loop has taken the last
// one: a loop that falls behind leaves connections in the kernel's
// backlog. An open Listener keeps the loop alive, as a listening handle
// does in libuv, unless it is unreferenced ([Listener.Unref]).
//
// Accept errors end it: a failed Accept closes the Listener, and runs
// OnError with the error, then OnClose. [Listener.Close] closes it from the
// loop, and runs only OnClose; OnClose runs on a later pass than the event
// or call that closed it, once its goroutine has returned, and is its last
// callback (until then the Listener keeps the loop alive, unless
// unreferenced). The sockets it accepted are not closed with it.
// [Loop.Stop] closes the net.Listener and runs no callback.
//
// A Listener is not safe for concurrent use: its methods belong to the
// loop goroutine, or to setting up before the loop runs, and panic if
// called from another goroutine while the loop waits for work. The zero
// Listener has no net.Listener and no loop: each of its methods, and each
// method of a nil *Listener, panics naming the method. A Listener must
// not be copied: the methods of a copy panic.
type Listener struct {
	l      *Loop
	self   *Listener // the listener NewListener made; a copy is not its own self
	ln     net.Listener
	onConn func(*Socket)

	onError func(error)
	onClose func()

	// The accepting goroutine stores what Accept returned in next, posts
	// arriveFn, and accepts again when the loop sends on more (closed
	// when the Listener closes). Whichever of the two takes a connection
	// out of next owns it, and closes it if it is not wanted.
	next     atomic.Pointer[accepted]
	more     chan struct{} // capacity 1
	arriveFn func()

	// Owned by the loop goroutine.
	closed    bool
	accepting bool // the accepting goroutine has not told the loop it returned
	hold           // released once closed, its goroutine gone and OnClose posted
	err       error
}

// accepted is what one Accept returned.
type accepted struct {
	c   net.Conn
	err error
}

// NewListener returns a listener of the loop on ln, and starts accepting:
// f receives each accepted connection as a new Socket, on the loop, and
// sets its callbacks. NewListener returns ErrStopped on a stopped loop,
// leaving ln open. It panics if ln is nil (or a nil pointer) or f is nil,
// and if called from another goroutine while the loop waits for work.
// The complexity is O(1).
func (l *Loop) NewListener(ln net.Listener, f func(s *Socket)) (*Listener, error) {
	if nilarg.Is(ln) {
		panic(fmt.Sprintf("loop: NewListener called with nil net.Listener%s", nilarg.Type(ln)))
	}
	if f == nil {
		panic("loop: NewListener called with nil func")
	}
	l.init("NewListener")
	l.owned("NewListener")
	ls := &Listener{l: l, ln: ln, onConn: f, more: make(chan struct{}, 1), accepting: true}
	ls.self = ls
	ls.arriveFn = ls.arrive
	if err := l.register(ls); err != nil {
		return nil, err
	}
	l.refs++
	l.io.Go(ls.accept)
	return ls, nil
}

// usable reports whether the listener may be used here, as a Socket's
// usable does.
func (ls *Listener) usable() bool {
	return ls != nil && ls.self == ls && !ls.l.waiting.Load()
}

// misuse panics with what is wrong with the call of method.
func (ls *Listener) misuse(method string) {
	switch {
	case ls == nil || ls.l == nil:
		panic("loop: Listener." + method + " called on a zero or nil Listener; make one with Loop.NewListener")
	case ls.self != ls:
		panic("loop: Listener." + method + " called on a copy of a Listener; use the *Listener that Loop.NewListener returned")
	default:
		ls.l.owned("Listener." + method)
	}
}

// Addr returns the address of the net.Listener. It is safe for
// concurrent use if the net.Listener's is, as net's are.
func (ls *Listener) Addr() net.Addr {
	if ls == nil || ls.self != ls {
		ls.misuse("Addr")
	}
	return ls.ln.Addr()
}

// OnError sets the callback that receives the error of a failed Accept,
// which closes the Listener: OnClose follows. A nil f removes it. It
// panics on a zero, nil or copied Listener, and if called from another
// goroutine while the loop waits for work. The complexity is O(1).
func (ls *Listener) OnError(f func(err error)) {
	if !ls.usable() {
		ls.misuse("OnError")
	}
	ls.onError = f
}

// OnClose sets the callback that runs once the Listener is closed, its
// last. A nil f removes it. It panics as OnError does. The complexity is
// O(1).
func (ls *Listener) OnClose(f func()) {
	if !ls.usable() {
		ls.misuse("OnClose")
	}
	ls.onClose = f
}

// Unref makes the open Listener not keep the loop alive, as libuv's
// uv_unref on a listening handle: Run may return while it listens. It
// still hands connections over while the loop runs. It panics as OnError
// does. The complexity is O(1).
func (ls *Listener) Unref() {
	if !ls.usable() {
		ls.misuse("Unref")
	}
	ls.setRef(ls.l, false)
}

// Ref undoes Unref: the open Listener keeps the loop alive again. It
// panics as OnError does. The complexity is O(1).
func (ls *Listener) Ref() {
	if !ls.usable() {
		ls.misuse("Ref")
	}
	ls.setRef(ls.l, true)
}

// Err returns nil while the Listener is open; once it is closed, the
// error of the Accept that failed, if one did, and an error matching
// net.ErrClosed otherwise. It panics as OnError does. The complexity is
// O(1).
func (ls *Listener) Err() error {
	if !ls.usable() {
		ls.misuse("Err")
	}
	return ls.err
}

// Close closes the net.Listener and stops accepting; OnClose runs on a
// later pass. The sockets accepted stay open. It returns the
// net.Listener's Close error; on a Listener closed already it returns an
// error matching net.ErrClosed. It panics as OnError does. The complexity
// is O(1).
func (ls *Listener) Close() error {
	if !ls.usable() {
		ls.misuse("Close")
	}
	if ls.closed {
		return fmt.Errorf("loop: Listener.Close: %w", net.ErrClosed)
	}
	return ls.closeNow(nil)
}

// shut closes the net.Listener, for Stop, from any goroutine.
func (ls *Listener) shut() { ls.ln.Close() }

// accept is the Listener's accepting goroutine.
func (ls *Listener) accept() {
	for {
		c, err := ls.ln.Accept()
		ls.next.Store(&accepted{c, err})
		if ls.l.Post(ls.arriveFn) != nil {
			ls.drop() // the loop has stopped
			return
		}
		if err != nil {
			return
		}
		select {
		case _, open := <-ls.more:
			if !open { // closed by the loop
				ls.drop()
				ls.l.Post(ls.acceptorGone)
				return
			}
		case <-ls.l.done:
			ls.drop()
			return
		}
	}
}

// drop closes the connection accepted last if the loop has not taken it.
func (ls *Listener) drop() {
	if a := ls.next.Swap(nil); a != nil && a.c != nil {
		a.c.Close()
	}
}

// arrive takes what Accept returned, on the loop.
func (ls *Listener) arrive() {
	a := ls.next.Swap(nil)
	if a != nil && a.err != nil {
		ls.accepting = false // the accepting goroutine has returned
	}
	switch {
	case a == nil: // dropped by the accepting goroutine
	case ls.closed:
		if a.c != nil {
			a.c.Close()
		}
		ls.release()
	case a.err != nil:
		ls.closeNow(a.err)
		if ls.onError != nil && !ls.l.stopped.Load() {
			ls.onError(a.err)
		}
	default:
		ls.more <- struct{}{} // accept the next while this one is set up
		s, err := ls.l.newSocket(a.c)
		if err != nil { // the loop has stopped: nothing would run it
			a.c.Close()
			return
		}
		ls.onConn(s)
	}
}

// acceptorGone hears, on the loop, that the accepting goroutine of the
// closed Listener has returned.
func (ls *Listener) acceptorGone() {
	ls.accepting = false
	ls.release()
}

// closeNow closes the Listener and lets its goroutine go; it returns the
// net.Listener's Close error. release follows once it has returned.
func (ls *Listener) closeNow(err error) error {
	ls.closed = true
	ls.err = err
	if err == nil {
		ls.err = net.ErrClosed
	}
	cerr := ls.ln.Close()
	close(ls.more)
	ls.l.deregister(ls)
	ls.release()
	return cerr
}

// release, once the Listener is closed and its goroutine has returned,
// stops it keeping the loop alive and posts OnClose.
func (ls *Listener) release() {
	if !ls.closed || ls.accepting || ls.released {
		return
	}
	ls.unhold(ls.l)
	ls.l.Post(ls.closing) // ErrStopped: nothing runs again anyway
}

// closing runs OnClose, the Listener's last callback.
func (ls *Listener) closing() {
	if ls.onClose != nil {
		ls.onClose()
	}
}
