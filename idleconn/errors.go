package idleconn

import (
	"errors"
	"fmt"
	"net"
	"time"
)

// ErrIdleTimeout is the reason a connection was closed for idleness: it is
// what [Conn.Err] returns, and errors.Is matches it in the errors of
// operations on such a connection.
var ErrIdleTimeout = errors.New("idleconn: idle timeout")

// TimeoutError is the error [NewConn] and [NewListener] return for an idle
// timeout that is not positive. Timeout is the value refused.
type TimeoutError struct {
	Timeout time.Duration
}

// Error returns "idleconn: non-positive idle timeout " and the value
// ("<nil>" for a nil *TimeoutError, as net's error types do).
func (e *TimeoutError) Error() string {
	if e == nil {
		return "<nil>"
	}
	return fmt.Sprintf("idleconn: non-positive idle timeout %v", e.Timeout)
}

// idleClosedError is the Err of the *net.OpError that operations on a
// connection closed for idleness return: it is both net.ErrClosed, as on
// any closed connection, and ErrIdleTimeout, the reason.
type idleClosedError struct{}

// Error says both what and why, since the error text is all a log shows.
func (idleClosedError) Error() string {
	return "use of closed network connection (idleconn: idle timeout)"
}

// Unwrap makes errors.Is match net.ErrClosed and ErrIdleTimeout.
func (idleClosedError) Unwrap() []error { return []error{net.ErrClosed, ErrIdleTimeout} }

var errIdleClosed error = idleClosedError{}

// errNoCloseWrite is CloseWrite's error when the underlying connection
// cannot half-close.
var errNoCloseWrite = errors.New("idleconn: underlying connection has no CloseWrite")
