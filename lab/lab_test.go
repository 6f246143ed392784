package lab_test

import (
	"testing"

	"pgregory.net/rapid"

	"github.com/timewheel/timewheel/lab"
	"github.com/timewheel/timewheel/lab/workload"
	"github.com/timewheel/timewheel/queue"
	"github.com/timewheel/timewheel/queue/queuetest"
)

// suite is one structure with what it declares to the conformance suite.
// Its queues come from Structure.New, handles as any: the suite's cost
// does not matter, and one list serves every structure.
type suite struct {
	name     string
	opts     queuetest.Options
	run      func(t *testing.T)
	property func(t *testing.T)
	check    func(t queuetest.TB, ops []queuetest.Op)
	reenter  func(t *testing.T)
	random   func(t *testing.T) // reentrant, on random seeds
}

// suites is every structure of lab.Structures.
var suites = func() []suite {
	var ss []suite
	for _, s := range lab.Structures() {
		ss = append(ss, bind(s, s.New))
	}
	return ss
}()

// countingSuites is every structure of lab.Structures counting its steps,
// as the lab's counting pass runs them: counting must change nothing of
// what they do.
var countingSuites = func() []suite {
	var ss []suite
	for _, s := range lab.Structures() {
		ss = append(ss, bind(s, func() queue.Queue[any] { return s.NewCounted(new(workload.Steps)) }))
	}
	return ss
}()

// options returns what a structure declares to the suite: its slack, and
// whether it keeps order (libco does not; see lab.Libco).
func options(s lab.Structure) queuetest.Options {
	return queuetest.Options{Slack: s.Slack, Unordered: s.Unordered}
}

func bind(s lab.Structure, newPlain func() queue.Queue[any]) suite {
	newQueue := newPlain
	if s.Name == "libco" {
		newQueue = func() queue.Queue[any] { return &sparse{Queue: newPlain()} }
	}
	opts, name := options(s), s.Name
	return suite{
		name: name,
		opts: opts,
		run: func(t *testing.T) {
			queuetest.Run(t, newQueue, opts)
		},
		property: func(t *testing.T) {
			rapid.Check(t, queuetest.Property(newQueue, opts))
		},
		check: func(t queuetest.TB, ops []queuetest.Op) {
			queuetest.Check(named{t, name}, newQueue, opts, ops)
		},
		reenter: func(t *testing.T) { reenter(t, newQueue()) },
		random:  func(t *testing.T) { reentrant(t, name, newQueue, opts.Slack, opts.Unordered) },
	}
}

// sparse hands a libco wheel to the suite with a Verify that checks every
// 16th call: a full check walks 60,000 slots, and the suite calls it
// after every step.
type sparse struct {
	queue.Queue[any]
	calls int
}

func (s *sparse) Verify() error {
	s.calls++
	if s.calls%16 != 0 {
		return nil
	}
	return s.Queue.(interface{ Verify() error }).Verify()
}

// named prefixes every failure with the structure's name, so that one fuzz
// target can hold every structure.
type named struct {
	queuetest.TB
	name string
}

func (n named) Fatalf(format string, args ...any) {
	n.TB.Helper()
	n.TB.Fatalf("engine=%s: "+format, append([]any{n.name}, args...)...)
}

func TestConformance(t *testing.T) {
	for _, s := range suites {
		t.Run("engine="+s.name, s.run)
	}
}

func TestConformanceCounting(t *testing.T) {
	for _, s := range countingSuites {
		t.Run("engine="+s.name, s.run)
	}
}

func TestProperty(t *testing.T) {
	for _, s := range suites {
		t.Run("engine="+s.name, s.property)
	}
}

// FuzzLab replays every input on every structure against the reference.
func FuzzLab(f *testing.F) {
	f.Add([]byte{0, 1, 5, 5, 0, 2, 9, 9, 3, 1, 0, 40, 1, 0, 0, 1, 3, 6, 255, 255})
	f.Add([]byte{0, 7, 0, 0, 0, 6, 1, 2, 2, 3, 4, 5, 3, 6, 255, 255, 3, 7, 0, 0})
	f.Add([]byte{0, 4, 1, 1, 0, 3, 1, 1, 0, 4, 1, 1, 3, 3, 200, 9, 3, 4, 255, 255, 3, 4, 255, 255})
	f.Add([]byte{0, 2, 0, 1, 0, 2, 0, 1, 2, 3, 7, 0, 3, 2, 0, 200, 1, 0, 0, 1, 3, 6, 0, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		ops := queuetest.OpsFromBytes(data)
		for _, s := range suites {
			s.check(t, ops)
		}
	})
}
