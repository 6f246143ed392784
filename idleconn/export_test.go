package idleconn

// Linger is the linger delay after an idle close, for the tests.
const Linger = linger
