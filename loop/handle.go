package loop

// handle is an open socket or listener of a loop, which Stop closes.
type handle interface {
	// shut closes its connection or listener, from any goroutine.
	shut()
}

// hold is how a socket or listener keeps its loop alive, as a libuv
// handle does: counted in the loop's refs from when it is made until it
// is released (closed, its goroutines gone), unless unreferenced. It is
// owned by the loop goroutine.
type hold struct {
	unref    bool
	released bool // it keeps the loop alive no more, whatever unref says
}

// setRef makes the handle keep l alive, or not, as Ref and Unref do.
func (h *hold) setRef(l *Loop, ref bool) {
	if h.unref == ref && !h.released {
		if ref {
			l.refs++
		} else {
			l.refs--
		}
	}
	h.unref = !ref
}

// unhold stops the handle keeping l alive, for good.
func (h *hold) unhold(l *Loop) {
	if !h.unref {
		l.refs--
	}
	h.released = true
}
