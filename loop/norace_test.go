//go:build !race

package loop_test

// raceEnabled is set under the race detector.
const raceEnabled = false
