// Package idlehttp makes the idle timeout of an [idleconn.Listener] an
// HTTP keep-alive timeout. An [http.Server] served on the listener closes
// a connection that waits too long for its next request. It never closes
// one whose handler is still working, however long it stays silent.
//
//	ln, err := net.Listen("tcp", ":8080")
//	...
//	iln, err := idleconn.NewListener(ln, nil, 2*time.Minute) // nil: timewheel.Default()
//	...
//	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
//	idlehttp.KeepAlive(srv) // time only the waits between requests
//	srv.Serve(iln)
//
// Without KeepAlive, an idleconn.Listener measures silence in both
// directions, whatever the HTTP state (see "With net/http" in package
// idleconn). Some want exactly that; leave KeepAlive out for it.
//
// It is a package of its own so that package idleconn does not link
// net/http into programs that serve other protocols.
package idlehttp

import (
	"net"
	"net/http"

	"github.com/timewheel/timewheel/idleconn"
)

// KeepAlive installs a ConnState hook on srv that marks each
// [idleconn.Conn] it serves busy (see [idleconn.Conn.SetBusy]). A
// connection is busy from the moment a request starts to be read until
// its response has been written. The idle timeout then runs only while
// the connection waits for a request, on a new connection and between
// keep-alive requests, as http.Server.IdleTimeout does. Clearing the mark
// counts as activity, so a connection is closed one full idle timeout
// after its last response.
//
// The hook finds the idleconn.Conn under wrappers that have a NetConn
// method, as *tls.Conn has. It works for HTTPS (srv.ServeTLS on the
// listener) too, and for HTTP/2, whose connections net/http reports
// active while a stream is open. Connections that are not idleconn's are
// left alone. A hijacked connection stays busy: it is the handler's from
// then on, and net/http's IdleTimeout does not apply to it either (call
// SetBusy(false) on it to time its silence again).
//
// A hook already in srv.ConnState keeps being called, after KeepAlive's,
// with the same arguments; calling KeepAlive twice is harmless. KeepAlive
// must be called before srv serves, and srv.ConnState must not be set
// after it, which would remove the hook. It panics if srv is nil. The
// hook's complexity is O(1) per state change.
func KeepAlive(srv *http.Server) {
	if srv == nil {
		panic("idlehttp: KeepAlive called with a nil *http.Server")
	}
	next := srv.ConnState
	srv.ConnState = func(c net.Conn, s http.ConnState) {
		if ic := find(c); ic != nil {
			switch s {
			case http.StateActive:
				ic.SetBusy(true)
			case http.StateIdle:
				ic.SetBusy(false)
			}
		}
		if next != nil {
			next(c, s)
		}
	}
}

// maxWrappers bounds the unwrapping, in case a NetConn method returns its
// own receiver.
const maxWrappers = 8

// find returns the idleconn.Conn c is or wraps, or nil.
func find(c net.Conn) *idleconn.Conn {
	for range maxWrappers {
		switch v := c.(type) {
		case *idleconn.Conn:
			return v
		case interface{ NetConn() net.Conn }:
			c = v.NetConn()
		default:
			return nil
		}
	}
	return nil
}
