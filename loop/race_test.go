//go:build race

package loop_test

// raceEnabled is set under the race detector, which makes every
// goroutine hand-off and system call several times slower.
const raceEnabled = true
