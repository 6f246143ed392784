package workload

import "fmt"

// Kind names a workload; see the package documentation.
type Kind string

// The workloads.
const (
	Schedule Kind = "schedule"
	Cancel   Kind = "cancel"
	Expire   Kind = "expire"
	Churn    Kind = "churn"
	Refresh  Kind = "refresh"
	Far      Kind = "far"
	Memory   Kind = "memory"
)

// Kinds returns every workload, in the order the lab prints them.
func Kinds() []Kind { return []Kind{Schedule, Cancel, Expire, Churn, Refresh, Far, Memory} }

// Unit returns the unit of the workload's measure.
func (k Kind) Unit() string {
	switch k {
	case Expire:
		return "ns/fired"
	case Far:
		return "ns/timer"
	case Memory:
		return "B/timer"
	}
	return "ns/op"
}

// resident reports whether the workload runs on a station of n pending
// timers (or, for memory, is measured while one is filled).
func (k Kind) resident() bool { return k != Far }

// ParseKind returns the workload named s.
func ParseKind(s string) (Kind, error) {
	for _, k := range Kinds() {
		if string(k) == s {
			return k, nil
		}
	}
	return "", fmt.Errorf("workload: no workload named %q", s)
}
