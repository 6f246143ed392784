//go:build race

package lockcheck

// Enabled reports whether the checks run: under the race detector.
const Enabled = true
