//go:build !race

package wheelctx_test

const raceEnabled = false
