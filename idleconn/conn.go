package idleconn

import (
	"fmt"
	"github.com/timewheel/timewheel/internal/nilarg"
	"io"
	"net"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/timewheel/timewheel"
)

// Conn is a net.Conn that closes itself when it has been idle, with
// neither a Read returning data nor a Write in progress or completed, for
// its idle timeout. It is made by [NewConn] or by a [Listener]'s Accept.
//
// # How the timeout is kept
//
// Every Read that returns data and every Write stores the clock's current
// time in an atomic word. The refresh costs one clock reading (the
// monotonic clock alone, on a real-clock wheel) and one compare-and-swap;
// a Write adds two atomic adds (below). It takes no lock and allocates
// nothing. The connection's single wheel timer is not reset on each call,
// as it would be with package time or with a deadline.
//
// The timer is set once, for one timeout ahead. When it fires, it reads
// the clock and the last activity. If the connection has been idle for
// the whole timeout, it is closed. Otherwise the timer is re-armed for the
// time that remains, (last activity + timeout) - now. A connection is
// never closed before its deadline, and is closed at most one wheel tick
// (plus the wheel's own delay) after it.
//
// The downside of this choice is that a connection that stays active
// costs one timer firing per timeout period; a reset-on-every-call timer
// would not. For the idle timeouts servers use (seconds to minutes) that
// is far cheaper than touching a shared timer structure on every Read and
// Write. (Node.js makes the same trade for its sockets: one list per
// duration, re-checked when its timer fires.)
//
// # Writes
//
// A Write in progress counts as activity: an idle close never interrupts
// it, so data the application has written is never cut short by the
// timer. Write announces itself in an atomic state word, which the timer
// must find empty to close the connection, and a Write that starts after
// the close fails without touching the connection. A Read in progress is
// not activity: a blocked Read is how an idle connection looks. A Read
// that returns data in the very instant the timer decides to close may
// lose that race, exactly as bytes arriving at a read deadline may.
//
// # Closing without losing data
//
// A connection closed for idleness never loses data already written by
// the application. A plain close(2) could: over TCP, closing a socket
// whose peer sent bytes the application never read makes the kernel
// answer with a RST, which discards the written data the peer has not
// received yet. When the underlying connection can half-close (it has
// a CloseWrite method, as *net.TCPConn does), the idle close is done as
// net/http's server does it, in three steps:
//   - The timer calls CloseWrite, which sends a FIN after the data written.
//   - It sets a read deadline in the past on the underlying connection.
//     A Read in progress, and every later one, returns at once with the
//     idle-close error.
//   - The connection's own timer releases the underlying connection for
//     good a linger delay of 500 ms later (rounded up to the wheel's tick).
//
// net/http waits the same 500 ms, about a round trip around the planet,
// for the peer to read the data and the FIN. Connections without
// CloseWrite, and connections whose CloseWrite fails, are closed at once.
//
// From the idle decision on, the Conn behaves as closed: [Conn.Err]
// reports ErrIdleTimeout, Reads, Writes and deadline changes fail with the
// idle-close error, and [Conn.Close] returns it too, releasing a lingering
// connection at once. If the wheel is closed during the linger, the
// underlying connection is released only by Close.
//
// The downside of this choice is that a connection closed for idleness
// holds its file descriptor and socket buffers for the linger delay. And
// a peer that has not read everything by then may still get a RST and
// lose the rest, as with net/http. A longer linger would hold every
// idle-closed socket longer, for peers that are most likely gone.
//
// The connection is also kept open while it is marked busy ([Conn.SetBusy]).
// A Conn that is dropped without Close is closed by its timer once idle.
// NewConn and Accept refuse a closed wheel (see Misuse in the package
// documentation). If the wheel is closed later, while the connection is
// open, its timer is dropped with the wheel's other timers. The
// connection then no longer idles out.
//
// # Zero value
//
// The zero Conn wraps no connection and is not usable. Each of its
// methods, and each method of a nil *Conn, panics with a message that
// names the method. The message says to make Conns with NewConn or a
// Listener's Accept.
//
// A Conn is safe for concurrent use, like the net.Conn it wraps.
type Conn struct {
	nc    net.Conn
	w     *timewheel.Wheel
	d     time.Duration
	epoch time.Time                       // w.Now() when the Conn was made; activity is measured from it
	last  atomic.Int64                    // nanoseconds from epoch to the last activity
	state atomic.Int64                    // closedIdle, closedByUser, busy, released flags and the count of Writes in progress
	timer atomic.Pointer[timewheel.Timer] // fires at the earliest possible idle deadline, then at the end of the linger
	stats *counters                       // the Listener's, or nil
}

// linger is how long the underlying connection stays open, half-closed,
// after an idle close. It gives the peer time to read what was written and
// the FIN before the full close, whose RST would discard it. It is
// net/http's rstAvoidanceDelay, chosen as "latency around the planet".
const linger = 500 * time.Millisecond

// closeWriter is a connection that can half-close, as *net.TCPConn can.
type closeWriter interface{ CloseWrite() error }

// aLongTimeAgo is a read deadline in the past: setting it wakes a Read in
// progress at once, and makes every later one fail.
var aLongTimeAgo = time.Unix(1, 0)

// state bits: the low bits are flags, the middle ones count Writes in
// progress, and the high ones count Writes ended. With them the timer can
// tell, with one compare-and-swap, that no Write started or ended while it
// was deciding to close. The counts wrap around harmlessly.
const (
	closedIdle   = 1 << 0  // closed by the timer
	closedByUser = 1 << 1  // closed by Close
	busy         = 1 << 2  // SetBusy(true)
	released     = 1 << 3  // the underlying connection has been closed, or is being closed
	writing      = 1 << 4  // one Write in progress
	wrote        = 1 << 32 // one Write ended

	closed  = closedIdle | closedByUser
	writes  = wrote - writing // the count of Writes in progress
	waiting = busy | writes   // what makes the timer wait instead of closing
)

// NewConn returns c wrapped so that it is closed after being idle for d,
// timed on the wheel w (nil means [timewheel.Default]). The timeout starts
// now; any positive d is accepted, one below the wheel's tick meaning the
// first tick after now. NewConn returns a *[TimeoutError] if d is not
// positive, and an error matching [timewheel.ErrClosed] if w is closed
// (a connection on it would never time out); c is then left as it was,
// open. It panics if c is nil (or a nil pointer) or w is a zero Wheel.
// The complexity is O(1).
func NewConn(c net.Conn, w *timewheel.Wheel, d time.Duration) (*Conn, error) {
	if nilarg.Is(c) {
		panic(fmt.Sprintf("idleconn: NewConn called with nil net.Conn%s", nilarg.Type(c)))
	}
	if d <= 0 {
		return nil, &TimeoutError{Timeout: d}
	}
	w = wheelOrDefault(w)
	ic := newConn(c, w, d, nil)
	// After the timer is set: if the wheel closes later, the timer was
	// pending and is dropped with the wheel's others.
	if err := closedWheel("NewConn", w); err != nil {
		ic.timer.Load().Stop()
		return nil, err
	}
	return ic, nil
}

// wheelOrDefault returns w, or the default wheel if w is nil. (A zero
// Wheel panics, naming the method, at its first use: the caller's
// constructor calls one.)
func wheelOrDefault(w *timewheel.Wheel) *timewheel.Wheel {
	if w == nil {
		return timewheel.Default()
	}
	return w
}

// closedWheel returns fn's error for a closed wheel, or nil if w is open.
func closedWheel(fn string, w *timewheel.Wheel) error {
	if err := w.Err(); err != nil {
		return fmt.Errorf("idleconn: %s on a closed wheel, where connections never time out: %w", fn, err)
	}
	return nil
}

// check panics, for method m, if c is nil or a zero Conn.
func (c *Conn) check(m string) {
	if c == nil || c.nc == nil {
		c.zero(m)
	}
}

// zero panics for method m of c, a nil or zero Conn.
func (c *Conn) zero(m string) {
	if c == nil {
		panic("idleconn: " + m + " called on a nil *Conn")
	}
	panic("idleconn: " + m + " called on a zero Conn; make one with NewConn or a Listener's Accept")
}

func newConn(nc net.Conn, w *timewheel.Wheel, d time.Duration, stats *counters) *Conn {
	c := &Conn{nc: nc, w: w, d: d, epoch: w.Now(), stats: stats}
	c.timer.Store(w.AfterFunc(d, c.expire))
	return c
}

// since returns the wheel clock's time since c.epoch, in nanoseconds. On
// the real clock this reads only the monotonic clock (Wheel.Since).
func (c *Conn) since() int64 { return int64(c.w.Since(c.epoch)) }

// touch records activity now. Concurrent calls keep the latest time: a
// Read that read the clock before a Write but stores after it must not
// move the deadline earlier.
func (c *Conn) touch() {
	now := c.since()
	for {
		old := c.last.Load()
		if now <= old || c.last.CompareAndSwap(old, now) {
			return
		}
	}
}

// expire is the timer's callback: it closes the connection if it has been
// idle for the whole timeout, and otherwise re-arms the timer for the time
// that remains. Closing is one compare-and-swap of the state read before
// the last activity: it fails, and the decision is taken again, if a
// Write started or ended meanwhile. After an idle close that lingers, the
// timer fires once more, at the end of the linger, to release the
// underlying connection.
func (c *Conn) expire() {
	t := c.timer.Load()
	for t == nil { // fired before newConn stored it: only for a timeout of a tick or less
		runtime.Gosched()
		t = c.timer.Load()
	}
	for {
		s := c.state.Load() // before last: a Write that ends after this changes the state
		if s&closed != 0 {
			if s&closedIdle != 0 {
				c.release() // the end of the linger
			}
			return // closed meanwhile
		}
		idle := time.Duration(c.since() - c.last.Load())
		if idle < c.d {
			t.Reset(c.d - idle)
			return
		}
		if s&waiting != 0 { // busy, or a Write in progress: look again later
			t.Reset(c.d)
			return
		}
		if c.state.CompareAndSwap(s, s|closedIdle) {
			c.stats.add(closedIdleCount)
			c.closeIdle(t)
			return
		}
	}
}

// closeIdle closes the connection after the idle decision, t being its
// timer: with a half-close and a linger if the underlying connection can
// half-close, at once otherwise.
func (c *Conn) closeIdle(t *timewheel.Timer) {
	cw, ok := c.nc.(closeWriter)
	if !ok || cw.CloseWrite() != nil {
		c.release()
		return
	}
	c.nc.SetReadDeadline(aLongTimeAgo) // wakes a Read in progress
	t.Reset(linger)
	switch {
	case c.w.Err() != nil: // the wheel is closed: the timer will not fire
		c.release()
	case c.state.Load()&released != 0: // Close released it meanwhile
		t.Stop()
	}
}

// release closes the underlying connection, once: after an idle close
// either the end of the linger or Close may do it, whichever comes first.
func (c *Conn) release() {
	if c.state.Or(released)&released == 0 {
		c.nc.Close()
	}
}

// Read reads data from the connection, as net.Conn's Read. A Read that
// returns data counts as activity. On a connection that has been closed,
// or that is closed while Read waits, it returns a *net.OpError matching
// net.ErrClosed (and ErrIdleTimeout after an idle close). The refresh
// costs O(1) and allocates nothing.
func (c *Conn) Read(b []byte) (int, error) {
	c.check("Read")
	n, err := c.nc.Read(b)
	if n > 0 {
		c.touch()
	}
	if err != nil {
		err = c.closedErr("read", err)
	}
	return n, err
}

// Write writes data to the connection, as net.Conn's Write. A Write counts
// as activity from start to end: an idle close waits for it, in the sense
// that the timer does not close the connection while a Write is in
// progress. On a closed connection Write writes nothing and returns a
// *net.OpError matching net.ErrClosed (and ErrIdleTimeout after an idle
// close). The refresh costs O(1) and allocates nothing.
func (c *Conn) Write(b []byte) (int, error) {
	c.check("Write")
	if !c.beginWrite() {
		return 0, c.opError("write")
	}
	n, err := c.nc.Write(b)
	c.endWrite()
	if err != nil {
		err = c.closedErr("write", err)
	}
	return n, err
}

// ReadFrom copies r to the connection, using the underlying connection's
// ReadFrom when it has one (so that net/http can still use sendfile). The
// whole copy counts as one Write in progress. It panics if r is nil.
func (c *Conn) ReadFrom(r io.Reader) (int64, error) {
	c.check("ReadFrom")
	if r == nil {
		panic("idleconn: ReadFrom called with a nil io.Reader")
	}
	if !c.beginWrite() {
		return 0, c.opError("readfrom")
	}
	var n int64
	var err error
	if rf, ok := c.nc.(io.ReaderFrom); ok {
		n, err = rf.ReadFrom(r)
	} else {
		n, err = io.Copy(writerOnly{c.nc}, r)
	}
	c.endWrite()
	if err != nil {
		err = c.closedErr("readfrom", err)
	}
	return n, err
}

// writerOnly hides every method but Write, so that io.Copy does not call
// back into ReadFrom.
type writerOnly struct{ io.Writer }

// beginWrite registers a Write in progress and reports whether the
// connection is open. After a false return the Write must not proceed.
func (c *Conn) beginWrite() bool {
	if c.state.Add(writing)&closed != 0 {
		c.state.Add(-writing)
		return false
	}
	return true
}

// endWrite records the activity and ends the Write in progress, in that
// order: the timer, once it sees no Write in progress, also sees its time.
func (c *Conn) endWrite() {
	c.touch()
	c.state.Add(wrote - writing)
}

// SetBusy marks the connection busy or not. A busy connection is never
// closed for idleness, as if a Write were in progress; clearing the mark
// counts as activity, so the idle timeout restarts then. An http.Server
// calls it through idlehttp.KeepAlive: busy while a request is active, so
// that a handler's long silence does not close its connection, and only
// the wait between requests is timed. On a closed connection it has no
// effect. The complexity is O(1).
func (c *Conn) SetBusy(b bool) {
	c.check("SetBusy")
	if b {
		c.state.Or(busy)
		return
	}
	c.touch()
	c.state.And(^busy)
}

// Close closes the connection and stops its idle timer. Closing a
// connection that is already closed, by Close or for idleness, returns a
// *net.OpError matching net.ErrClosed, as net's own connections do. After
// an idle close the error also matches ErrIdleTimeout; if the connection
// still lingers, Close releases it at once. Close does not wait for Reads
// and Writes in progress; they fail, as with any net.Conn. The complexity
// is O(1).
func (c *Conn) Close() error {
	c.check("Close")
	for {
		s := c.state.Load()
		if s&closed != 0 {
			if s&released == 0 { // lingering after an idle close
				c.release() // before Stop: see closeIdle
				c.timer.Load().Stop()
			}
			return c.opError("close")
		}
		if c.state.CompareAndSwap(s, s|closedByUser|released) {
			break
		}
	}
	c.stats.add(closedCount)
	c.timer.Load().Stop()
	return c.nc.Close()
}

// Err returns why the connection is closed: nil while it is open,
// ErrIdleTimeout if it was closed for idleness, and net.ErrClosed if it
// was closed by Close. The complexity is O(1).
func (c *Conn) Err() error {
	c.check("Err")
	return reason(c.state.Load())
}

func reason(s int64) error {
	switch {
	case s&closedIdle != 0:
		return ErrIdleTimeout
	case s&closedByUser != 0:
		return net.ErrClosed
	}
	return nil
}

// IdleTimeout returns the connection's idle timeout.
func (c *Conn) IdleTimeout() time.Duration {
	c.check("IdleTimeout")
	return c.d
}

// NetConn returns the underlying connection. Reads and Writes made on it
// directly are not seen as activity.
func (c *Conn) NetConn() net.Conn {
	c.check("NetConn")
	return c.nc
}

// LocalAddr returns the local network address, as net.Conn's.
func (c *Conn) LocalAddr() net.Addr {
	c.check("LocalAddr")
	return c.nc.LocalAddr()
}

// RemoteAddr returns the remote network address, as net.Conn's.
func (c *Conn) RemoteAddr() net.Addr {
	c.check("RemoteAddr")
	return c.nc.RemoteAddr()
}

// SetDeadline sets the read and write deadlines of the underlying
// connection. They are independent of the idle timeout. On a closed
// connection it returns a *net.OpError matching net.ErrClosed (and
// ErrIdleTimeout after an idle close): a connection that lingers after an
// idle close keeps the past read deadline that ends its Reads.
func (c *Conn) SetDeadline(t time.Time) error {
	c.check("SetDeadline")
	if c.state.Load()&closed != 0 {
		return c.opError("set")
	}
	err := c.nc.SetDeadline(t)
	return c.keepIdleDeadline("set", err)
}

// SetReadDeadline sets the read deadline of the underlying connection. On
// a closed connection it fails as SetDeadline does.
func (c *Conn) SetReadDeadline(t time.Time) error {
	c.check("SetReadDeadline")
	if c.state.Load()&closed != 0 {
		return c.opError("set")
	}
	err := c.nc.SetReadDeadline(t)
	return c.keepIdleDeadline("set", err)
}

// keepIdleDeadline runs after a read deadline was set on the underlying
// connection. If the idle close came in meanwhile, the caller's deadline
// may have replaced the past one that ends Reads. It is put back, and
// the call fails as on a closed connection. closeIdle marks the state
// before it sets its deadline, so one of the two sets it last.
func (c *Conn) keepIdleDeadline(op string, err error) error {
	if c.state.Load()&closedIdle == 0 {
		return err
	}
	c.nc.SetReadDeadline(aLongTimeAgo)
	return c.opError(op)
}

// SetWriteDeadline sets the write deadline of the underlying connection.
// On a closed connection it fails as SetDeadline does.
func (c *Conn) SetWriteDeadline(t time.Time) error {
	c.check("SetWriteDeadline")
	if c.state.Load()&closed != 0 {
		return c.opError("set")
	}
	return c.nc.SetWriteDeadline(t)
}

// CloseWrite shuts down the writing side of the underlying connection if
// it supports that (as *net.TCPConn does); net/http uses it for a graceful
// close. It does not close the Conn.
func (c *Conn) CloseWrite() error {
	c.check("CloseWrite")
	if cw, ok := c.nc.(closeWriter); ok {
		return cw.CloseWrite()
	}
	return &net.OpError{Op: "close", Net: c.network(), Source: c.nc.LocalAddr(), Addr: c.nc.RemoteAddr(), Err: errNoCloseWrite}
}

// closedErr replaces err, an error from the underlying connection, by the
// closed-connection error if c has been closed: a Read interrupted by an
// idle close then says so.
func (c *Conn) closedErr(op string, err error) error {
	if c.state.Load()&closed == 0 {
		return err
	}
	return c.opError(op)
}

// opError returns the error of operation op on the closed connection c,
// shaped like net's: a *net.OpError around net.ErrClosed, or around an
// error that is both net.ErrClosed and ErrIdleTimeout.
func (c *Conn) opError(op string) error {
	err := net.ErrClosed
	if c.state.Load()&closedIdle != 0 {
		err = errIdleClosed
	}
	return &net.OpError{Op: op, Net: c.network(), Source: c.nc.LocalAddr(), Addr: c.nc.RemoteAddr(), Err: err}
}

func (c *Conn) network() string {
	if a := c.nc.LocalAddr(); a != nil {
		return a.Network()
	}
	return ""
}
