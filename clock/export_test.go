package clock

// SetRearmLimit sets how many timers due at once the callbacks of one
// advance may start in a row before it panics, and returns a func that
// restores the limit.
func SetRearmLimit(n int) (restore func()) {
	old := rearmLimit
	rearmLimit = n
	return func() { rearmLimit = old }
}
