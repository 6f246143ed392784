package report

import (
	"bufio"
	"fmt"
	"os"
	"runtime"
	"strings"
)

// Machine describes where the lab ran.
type Machine struct {
	CPU        string `json:"cpu"`
	NumCPU     int    `json:"num_cpu"`
	GOMAXPROCS int    `json:"gomaxprocs"`
	Go         string `json:"go"`
	OS         string `json:"os"`
	Arch       string `json:"arch"`
}

// ThisMachine returns the machine the program runs on; the CPU model comes
// from /proc/cpuinfo where there is one.
func ThisMachine() Machine {
	return Machine{
		CPU:        cpuModel("/proc/cpuinfo"),
		NumCPU:     runtime.NumCPU(),
		GOMAXPROCS: runtime.GOMAXPROCS(0),
		Go:         runtime.Version(),
		OS:         runtime.GOOS,
		Arch:       runtime.GOARCH,
	}
}

// cpuModel returns the first "model name" of a cpuinfo file, or "unknown".
func cpuModel(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return "unknown"
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		key, value, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(key) == "model name" {
			return strings.TrimSpace(value)
		}
	}
	return "unknown"
}

// String returns the machine in one line.
func (m Machine) String() string {
	return fmt.Sprintf("%s, %d CPUs, GOMAXPROCS=%d, %s %s/%s", m.CPU, m.NumCPU, m.GOMAXPROCS, m.Go, m.OS, m.Arch)
}

// PeakRSS returns the most memory the process has held resident so far,
// in bytes: VmHWM in /proc/self/status, or 0 where there is none.
func PeakRSS() int64 { return peakRSS("/proc/self/status") }

// peakRSS reads VmHWM from a /proc status file.
func peakRSS(path string) int64 {
	f, err := os.Open(path)
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		key, value, ok := strings.Cut(sc.Text(), ":")
		if !ok || key != "VmHWM" {
			continue
		}
		var kb int64
		if _, err := fmt.Sscanf(strings.TrimSpace(value), "%d kB", &kb); err != nil {
			return 0
		}
		return kb << 10
	}
	return 0
}
