package idleconn

import "sync/atomic"

// Stats is what the connections a Listener accepted have done since
// NewListener: the figures a server puts on its dashboard. Counters only
// grow; a rate is the difference of two readings. [Listener.Stats]
// returns it. (A Conn made by NewConn on its own is counted nowhere.)
type Stats struct {
	// Accepted counts the connections Accept returned.
	Accepted uint64
	// Open is the number of those not closed yet, by Close or for
	// idleness: Accepted - Closed - ClosedIdle.
	Open int
	// Closed counts connections closed by their Close.
	Closed uint64
	// ClosedIdle counts connections closed for idleness (a connection
	// closed for idleness holds its socket for the linger delay after).
	// Its share of the closes says who ends connections: clients that
	// keep connections open and leave them idle, or the server.
	ClosedIdle uint64
}

// counters are a Listener's Stats as its connections update them,
// indexed by the constants below.
type counters [3]atomic.Uint64

const (
	accepted = iota
	closedCount
	closedIdleCount
)

// add adds 1 to counter i, if there are counters: a Conn made by NewConn
// has none.
func (s *counters) add(i int) {
	if s != nil {
		s[i].Add(1)
	}
}

// Stats returns what the listener's connections have done; a zero
// Listener's are all zero. The complexity is O(1).
func (l *Listener) Stats() Stats {
	if l == nil {
		panic("idleconn: Stats called on a nil *Listener")
	}
	st := Stats{
		Closed:     l.stats[closedCount].Load(),
		ClosedIdle: l.stats[closedIdleCount].Load(),
	}
	st.Accepted = l.stats[accepted].Load() // last: Open is never negative
	st.Open = int(st.Accepted - st.Closed - st.ClosedIdle)
	return st
}
