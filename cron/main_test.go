package cron_test

import (
	"testing"
	_ "time/tzdata" // the tests' zones load on machines without zone files; the package leaves this to programs

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
