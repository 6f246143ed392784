//go:build race

package wheelctx_test

// raceEnabled: the race detector slows the tests that repeat an
// interleaving many times, so they repeat it fewer times under it (the
// plain run, in CI too, repeats it in full).
const raceEnabled = true
