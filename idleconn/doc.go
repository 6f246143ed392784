// Package idleconn closes network connections that stay idle: a
// [net.Conn] wrapper whose idle timeout is refreshed by every Read and
// Write, and a [net.Listener] wrapper that hands out such connections,
// both on a [timewheel.Wheel].
//
//	c, err := idleconn.NewConn(conn, nil, time.Minute) // nil: timewheel.Default()
//	if err != nil {
//		return err
//	}
//	defer c.Close()
//	// Use c as conn: it closes itself after a minute without a Read or Write,
//	// and then c.Err() is ErrIdleTimeout.
//
// Every socket of a server carries an idle timeout that is refreshed on
// each read and write and almost never fires (the reference documents'
// Node.js socket.setTimeout and HTTP keep-alive). Package idleconn makes
// that refresh nearly free: a Read or Write stores the time of the last
// activity in an atomic word and touches neither the wheel nor the
// runtime's timers. Each connection has one wheel timer, set for one idle
// timeout ahead. When it fires it compares the clock with the last
// activity. If the connection was active meanwhile, it re-arms itself for
// the time that remains. Only a connection that has really been idle for
// the whole timeout is closed, never earlier (see [Conn] for the details
// and the trade-off).
//
// # Reasons and errors
//
// A connection closed for idleness reports [ErrIdleTimeout] from [Conn.Err].
// Reads and Writes after the close, and a Read in progress when it
// happens, fail as on any closed connection: with a *net.OpError whose
// error matches both net.ErrClosed and ErrIdleTimeout under errors.Is.
// Closing a connection twice returns such an error too. A Write in
// progress is never interrupted by an idle close: it counts as activity.
//
// # With net/http
//
// Serve a [net/http.Server] on a [Listener], and call
// [github.com/timewheel/timewheel/idleconn/idlehttp.KeepAlive] on it so
// that the idle timeout is a keep-alive timeout. A connection waiting for
// its next request is closed after it. One whose handler is working is
// not, however long the handler stays silent.
//
//	ln, err := net.Listen("tcp", ":8080")
//	...
//	iln, err := idleconn.NewListener(ln, nil, 2*time.Minute) // nil: timewheel.Default()
//	...
//	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
//	idlehttp.KeepAlive(srv) // time only the waits between requests
//	srv.Serve(iln)
//
// Without idlehttp.KeepAlive the idle timeout measures silence in both
// directions, whatever the HTTP state. A handler that neither reads nor
// writes for longer than it (a long computation, a long poll) has its
// connection closed under it. Leave KeepAlive out for that, or pick a
// timeout longer than any such pause. (KeepAlive installs an
// http.Server.ConnState hook that calls [Conn.SetBusy]; it lives in a
// package of its own so that this one does not link net/http.)
//
// The idle timeout and http.Server's own timeouts are independent and all
// apply; whichever fires first ends the connection (or the request):
//
//   - http.Server.IdleTimeout bounds the wait for the next request on a
//     keep-alive connection, by setting a read deadline on it, which is a
//     runtime timer per connection reset for every request. With idleconn
//     and KeepAlive in front it can be left zero; note that when it is
//     zero, net/http uses ReadTimeout in its place.
//   - ReadTimeout and ReadHeaderTimeout bound the reading of one request,
//     WriteTimeout the writing of one response. idleconn does not replace
//     them: a client that trickles one byte a second is active, not idle,
//     so only ReadHeaderTimeout protects against it; and a Write blocked
//     because the client does not read is activity too, which only
//     WriteTimeout (a write deadline) bounds.
//
// # Misuse
//
// A zero Conn or Listener, or a nil *Conn or *Listener, panics when used,
// naming the method (but a zero Listener's Stats reports zeros). NewConn
// and NewListener panic on a nil connection or listener and on a zero
// Wheel. They return a *[TimeoutError] for a timeout that is not positive.
// For a closed wheel, where the connection would never time out, they
// return an error matching [timewheel.ErrClosed]; Accept does too once the
// wheel is closed. Closing a Conn or Listener twice returns an error matching
// net.ErrClosed, as package net does.
//
// Deadlines set with SetDeadline, SetReadDeadline and SetWriteDeadline
// pass through to the underlying connection unchanged.
package idleconn
