package lab_test

import (
	"flag"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/timewheel/timewheel/lab"
	"github.com/timewheel/timewheel/lab/report"
	"github.com/timewheel/timewheel/lab/workload"
)

// The workloads of cmd/timerlab, as benchmarks: one function per workload,
// a sub-benchmark per size and contender, package time and the scheduler
// beside the structures where the workload makes sense, so that one
// benchstat checks any number the lab prints:
//
//	go test -run '^$' -bench Churn -count 6 -lab.sizes 1e3,1e5 ./lab > churn.txt
//	go run golang.org/x/perf/cmd/benchstat@latest -col /engine churn.txt
//
// Sizes are small by default so that -benchtime 1x is quick; -lab.sizes
// and -lab.farsizes take the lab's.
var (
	sizesFlag    = flag.String("lab.sizes", "1e3,1e4", "comma-separated sizes (pending timers) for the benchmarks")
	farSizesFlag = flag.String("lab.farsizes", "1e3", "comma-separated sizes for BenchmarkFar")
	onlyFlag     = flag.String("lab.only", "", "comma-separated contenders to benchmark (default all)")
)

func parseSizes(b *testing.B, s string) []int {
	var sizes []int
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil || v < 1 {
			b.Fatalf("bad size %q in %q", f, s)
		}
		sizes = append(sizes, int(v))
	}
	return sizes
}

// contenders returns the contenders -lab.only selects that support k.
func contenders(k workload.Kind) []workload.Contender {
	var cs []workload.Contender
	for _, c := range lab.Contenders() {
		if c.Supports(k) && (*onlyFlag == "" || strings.Contains(","+*onlyFlag+",", ","+c.Name+",")) {
			cs = append(cs, c)
		}
	}
	return cs
}

// benchStation runs workload k on stations of every size and contender.
func benchStation(b *testing.B, k workload.Kind) {
	for _, n := range parseSizes(b, *sizesFlag) {
		for _, c := range contenders(k) {
			b.Run(fmt.Sprintf("n=%s/engine=%s", report.SizeLabel(n), c.Name), func(b *testing.B) {
				st, _ := c.Open(n, 1)
				defer st.Close()
				b.ReportAllocs()
				b.ResetTimer()
				b.StopTimer() // the station times the operations themselves
				st.Run(k, b.N, b)
			})
		}
	}
}

// BenchmarkSchedule: Schedule one more timer into n pending.
func BenchmarkSchedule(b *testing.B) { benchStation(b, workload.Schedule) }

// BenchmarkCancel: Cancel one of n pending timers.
func BenchmarkCancel(b *testing.B) { benchStation(b, workload.Cancel) }

// BenchmarkExpire: ns per timer fired, in bursts of 1,000 due within
// 100 ms, with n other timers pending.
func BenchmarkExpire(b *testing.B) { benchStation(b, workload.Expire) }

// BenchmarkChurn (W1): cancel a random one of n pending timers, schedule
// a new one.
func BenchmarkChurn(b *testing.B) { benchStation(b, workload.Churn) }

// BenchmarkRefresh (W2): reschedule a random one of n pending timers to
// 30 s out.
func BenchmarkRefresh(b *testing.B) { benchStation(b, workload.Refresh) }

// BenchmarkFar: n timers 10 minutes to a day out, the clock driven in 1 s
// steps until all fired. One op is the whole day; ns/timer is the lab's
// number.
func BenchmarkFar(b *testing.B) {
	for _, n := range parseSizes(b, *farSizesFlag) {
		for _, c := range contenders(workload.Far) {
			b.Run(fmt.Sprintf("n=%s/engine=%s", report.SizeLabel(n), c.Name), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					c.Far(n, 1, nopWatch{})
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/timer")
			})
		}
	}
}

type nopWatch struct{}

func (nopWatch) StartTimer() {}
func (nopWatch) StopTimer()  {}

// BenchmarkMemory (W4): heap bytes per pending timer.
func BenchmarkMemory(b *testing.B) {
	for _, n := range parseSizes(b, *sizesFlag) {
		for _, c := range contenders(workload.Memory) {
			b.Run(fmt.Sprintf("n=%s/engine=%s", report.SizeLabel(n), c.Name), func(b *testing.B) {
				var perTimer float64
				for b.Loop() {
					st, mem := c.Open(n, 1)
					st.Close()
					perTimer = mem
				}
				b.ReportMetric(perTimer, "B/timer")
			})
		}
	}
}
