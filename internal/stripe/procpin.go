package stripe

import _ "unsafe" // for go:linkname

// procPin pins the calling goroutine to its processor and returns the
// processor's id; procUnpin undoes it. They are the runtime's own, which
// sync.Pool uses, reached as the root package reaches them (see its
// procpin.go for why that is allowed and what it risks).
//
//go:linkname procPin runtime.procPin
func procPin() int

//go:linkname procUnpin runtime.procUnpin
func procUnpin()
