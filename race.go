//go:build race

package timewheel

const raceEnabled = true
