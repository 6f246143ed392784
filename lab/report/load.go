package report

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// Load is how busy the machine was during a run: how many cores other
// processes kept busy while the lab measured, from the system's CPU
// counters less the lab's own CPU time. Every cell shares the run's
// machine, so a busy machine makes every number larger and noisier.
type Load struct {
	// Known is false where the counters cannot be read (not Linux).
	Known bool `json:"known"`
	// Seconds is the wall time the averages cover.
	Seconds float64 `json:"seconds"`
	// CPUs is the number of cores the system counts.
	CPUs int `json:"cpus"`
	// Busy is the number of cores busy on average, every process counted;
	// Own those the lab itself kept busy; Others the rest.
	Busy   float64 `json:"busy_cores"`
	Own    float64 `json:"own_cores"`
	Others float64 `json:"other_cores"`
	// Steal is the number of cores the hypervisor gave to other machines.
	Steal float64 `json:"steal_cores"`
	// LoadAvg is the one-minute load average at the start and at the end.
	LoadAvg [2]float64 `json:"loadavg"`
}

// cpuSample is one reading of the counters.
type cpuSample struct {
	at          time.Time
	busy, steal float64 // seconds, all cores
	own         float64 // seconds of the lab's own CPU time
	cpus        int
	loadavg     float64
	ok          bool
}

// LoadMeter measures the load between its start and Stop.
type LoadMeter struct{ start cpuSample }

// StartLoad starts measuring the machine's load.
func StartLoad() *LoadMeter { return &LoadMeter{start: sampleCPU()} }

// Stop returns the load since the meter started.
func (m *LoadMeter) Stop() Load {
	end := sampleCPU()
	return loadBetween(m.start, end)
}

func loadBetween(a, b cpuSample) Load {
	wall := b.at.Sub(a.at).Seconds()
	if !a.ok || !b.ok || wall <= 0 {
		return Load{Seconds: wall}
	}
	l := Load{Known: true, Seconds: wall, CPUs: b.cpus,
		Busy:    (b.busy - a.busy) / wall,
		Own:     (b.own - a.own) / wall,
		Steal:   (b.steal - a.steal) / wall,
		LoadAvg: [2]float64{a.loadavg, b.loadavg}}
	l.Others = max(0, l.Busy-l.Own)
	return l
}

// String returns the load in one line.
func (l Load) String() string {
	if !l.Known {
		return "unknown (no /proc/stat)"
	}
	s := fmt.Sprintf("other processes kept %.2f of %d cores busy on average (the lab %.2f, steal %.2f); 1-min load average %.2f → %.2f",
		l.Others, l.CPUs, l.Own, l.Steal, l.LoadAvg[0], l.LoadAvg[1])
	if l.Others+l.Steal >= 0.25 {
		s += "\n      a busy machine: every number is larger and noisier than on an idle one; compare rows of this run, not runs"
	}
	return s
}

// clockTicks is USER_HZ, the unit of /proc/stat: 100 on every Linux
// architecture Go runs on.
const clockTicks = 100

// parseProcStat returns the busy and steal seconds of the "cpu" line of a
// /proc/stat file and the number of "cpuN" lines.
func parseProcStat(text string) (busy, steal float64, cpus int, ok bool) {
	for _, line := range strings.Split(text, "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || !strings.HasPrefix(f[0], "cpu") {
			continue
		}
		if f[0] != "cpu" {
			cpus++
			continue
		}
		// user nice system idle iowait irq softirq steal ...
		if len(f) < 9 {
			return 0, 0, 0, false
		}
		var v [8]float64
		for i := range v {
			x, err := strconv.ParseFloat(f[i+1], 64)
			if err != nil {
				return 0, 0, 0, false
			}
			v[i] = x / clockTicks
		}
		busy, steal, ok = v[0]+v[1]+v[2]+v[5]+v[6], v[7], true
	}
	return busy, steal, cpus, ok
}

// parseLoadAvg returns the first field of a /proc/loadavg file.
func parseLoadAvg(text string) float64 {
	f := strings.Fields(text)
	if len(f) == 0 {
		return 0
	}
	x, _ := strconv.ParseFloat(f[0], 64)
	return x
}

func sampleCPU() cpuSample {
	s := cpuSample{at: time.Now(), own: ownCPU()}
	stat, err := os.ReadFile("/proc/stat")
	if err != nil || s.own < 0 {
		return s
	}
	s.busy, s.steal, s.cpus, s.ok = parseProcStat(string(stat))
	if avg, err := os.ReadFile("/proc/loadavg"); err == nil {
		s.loadavg = parseLoadAvg(string(avg))
	}
	return s
}
