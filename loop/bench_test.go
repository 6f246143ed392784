package loop_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/timewheel/timewheel/loop"
)

func noop() {}

// BenchmarkTimerStartStop is the cost of a timer that is started and
// stopped before it fires (an I/O timeout on the loop), with n other
// timers pending. package time's reusable timer (Reset and Stop) runs as
// a sub-benchmark in the same function:
//
//	go test -run '^$' -bench StartStop -count 6 ./loop > loop.txt
//	go run golang.org/x/perf/cmd/benchstat@latest -col /impl loop.txt
func BenchmarkTimerStartStop(b *testing.B) {
	for _, n := range []int{0, 1e5} {
		b.Run(fmt.Sprintf("pending=%.0e/impl=loop", float64(n)), func(b *testing.B) {
			l := loop.New()
			for i := range n {
				l.AfterFunc(time.Minute+time.Duration(i)*time.Microsecond, noop)
			}
			t := l.NewTimer(noop)
			b.ReportAllocs()
			for b.Loop() {
				t.Start(time.Second, 0)
				t.Stop()
			}
		})
		b.Run(fmt.Sprintf("pending=%.0e/impl=time", float64(n)), func(b *testing.B) {
			for i := range n {
				t := time.AfterFunc(time.Minute+time.Duration(i)*time.Microsecond, noop)
				defer t.Stop()
			}
			t := time.AfterFunc(time.Hour, noop)
			defer t.Stop()
			b.ReportAllocs()
			for b.Loop() {
				t.Reset(time.Second)
				t.Stop()
			}
		})
	}
}
