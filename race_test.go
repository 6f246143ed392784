//go:build race

package timewheel_test

// raceEnabled is set under the race detector, which delays the freeing of
// objects and the cleanups that follow.
const raceEnabled = true
