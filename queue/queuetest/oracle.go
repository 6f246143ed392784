package queuetest

import (
	"math"
	"math/rand/v2"
	"slices"

	"github.com/timewheel/timewheel/queue"
)

// OpKind names an operation of the oracle.
type OpKind uint8

// The operations the oracle replays.
const (
	OpSchedule   OpKind = iota // schedule a timer due at now+Arg
	OpCancel                   // cancel timer Pick (modulo the timers made)
	OpReschedule               // reschedule timer Pick to now+Arg
	OpExpire                   // expire at now+Arg
	numOpKinds
)

// Op is one operation. Arg is a tick offset from the queue's current tick
// (saturating at the int64 range); Pick chooses among the timers made so
// far.
type Op struct {
	Kind OpKind
	Arg  int64
	Pick int
}

// oracle holds a queue and the reference side by side with a model of
// which timers are pending.
type oracle[H comparable] struct {
	t    TB
	q    queue.Queue[H]
	ref  *queue.Reference
	opts Options
	step int
	now  int64

	handles []H
	refs    []*queue.RefTimer
	index   map[H]int
	pending []bool
	when    []int64 // effective deadline of the latest schedule
	at      []int64 // tick of the latest schedule
}

// addSat returns a+b, saturated to the int64 range. The oracle keeps its
// own rather than use internal/ticks.Add, which the code under test uses,
// so that a bug there cannot hide in both.
func addSat(a, b int64) int64 {
	s := a + b
	if b > 0 && s < a {
		return math.MaxInt64
	}
	if b < 0 && s > a {
		return math.MinInt64
	}
	return s
}

func (o *oracle[H]) latest(i int) int64 {
	return addSat(o.when[i], o.opts.slack(o.at[i], o.when[i]))
}

func (o *oracle[H]) apply(op Op) {
	o.t.Helper()
	if o.index == nil {
		o.index = map[H]int{}
	}
	switch op.Kind {
	case OpSchedule:
		when := addSat(o.now, op.Arg)
		h := o.q.Schedule(when)
		o.index[h] = len(o.handles)
		o.handles = append(o.handles, h)
		o.refs = append(o.refs, o.ref.Schedule(when))
		o.pending = append(o.pending, true)
		o.when = append(o.when, max(when, o.now))
		o.at = append(o.at, o.now)
	case OpCancel:
		if len(o.handles) == 0 {
			return
		}
		i := op.Pick % len(o.handles)
		got, want := o.q.Cancel(o.handles[i]), o.pending[i]
		refGot := o.ref.Cancel(o.refs[i])
		if got != want {
			o.t.Fatalf("step %d: Cancel(timer %d) = %v, want %v", o.step, i, got, want)
		}
		if !o.opts.loose() && refGot != want {
			o.t.Fatalf("step %d: reference Cancel(timer %d) = %v, model says %v", o.step, i, refGot, want)
		}
		o.pending[i] = false
	case OpReschedule:
		if len(o.handles) == 0 {
			return
		}
		i := op.Pick % len(o.handles)
		when := addSat(o.now, op.Arg)
		got, want := o.q.Reschedule(o.handles[i], when), o.pending[i]
		o.ref.Reschedule(o.refs[i], when)
		if got != want {
			o.t.Fatalf("step %d: Reschedule(timer %d) = %v, want %v", o.step, i, got, want)
		}
		o.pending[i], o.when[i], o.at[i] = true, max(when, o.now), o.now
	case OpExpire:
		o.expire(addSat(o.now, max(op.Arg, 0)))
	}
}

func (o *oracle[H]) expire(now int64) {
	o.t.Helper()
	var got, want []int
	o.q.Expire(now, func(h H) { got = append(got, o.index[h]) })
	o.ref.Expire(now, func(r *queue.RefTimer) { want = append(want, slices.Index(o.refs, r)) })
	for _, i := range got {
		switch {
		case !o.pending[i]:
			o.t.Fatalf("step %d: Expire(%d) fired timer %d, which was not pending (fired twice or after cancel)", o.step, now, i)
		case o.when[i] > now:
			o.t.Fatalf("step %d: Expire(%d) fired timer %d early: due at %d", o.step, now, i, o.when[i])
		}
		o.pending[i] = false
	}
	for i, p := range o.pending {
		if p && o.latest(i) <= now {
			o.t.Fatalf("step %d: Expire(%d) did not fire timer %d, due at %d (latest %d)", o.step, now, i, o.when[i], o.latest(i))
		}
	}
	if !o.opts.loose() && !slices.Equal(got, want) {
		o.t.Fatalf("step %d: Expire(%d) fired timers %v, reference fired %v", o.step, now, got, want)
	}
	o.now = max(o.now, now)
}

func (o *oracle[H]) verify() {
	o.t.Helper()
	if v, ok := o.q.(verifier); ok {
		if err := v.Verify(); err != nil {
			o.t.Fatalf("step %d: invariant broken: %v", o.step, err)
		}
	}
	n := 0
	for _, p := range o.pending {
		if p {
			n++
		}
	}
	if got := o.q.Len(); got != n {
		o.t.Fatalf("step %d: Len() = %d, want %d", o.step, got, n)
	}
	if o.opts.loose() {
		return
	}
	got, gotOK := o.q.Next()
	want, wantOK := o.ref.Next()
	if got != want || gotOK != wantOK {
		o.t.Fatalf("step %d: Next() = %d, %v; reference says %d, %v", o.step, got, gotOK, want, wantOK)
	}
}

// offset draws a tick offset from a mix of scales: the same tick, level 0,
// the next levels, far (a day at 1 ms), the past, and the end of time.
func offset(class uint8, v uint64) int64 {
	switch class % 8 {
	case 0:
		return int64(v % 4)
	case 1:
		return int64(v % 70)
	case 2:
		return int64(v % 5000)
	case 3:
		return int64(v % 300_000)
	case 4:
		return int64(v % 86_400_000)
	case 5:
		return -int64(v % 100)
	case 6:
		return int64(v >> 1) // anywhere in the int64 range
	default:
		return math.MaxInt64 - int64(v%3)
	}
}

// RandomOps returns n operations drawn from a seeded generator.
func RandomOps(seed int64, n int) []Op {
	r := rand.New(rand.NewPCG(uint64(seed), 0x7469_6d65))
	ops := make([]Op, n)
	for i := range ops {
		kind := OpKind(r.IntN(int(numOpKinds)))
		if r.IntN(3) == 0 {
			kind = OpSchedule
		}
		ops[i] = Op{Kind: kind, Arg: offset(uint8(r.IntN(8)), r.Uint64()), Pick: r.IntN(1 << 20)}
		if kind == OpExpire && r.IntN(4) != 0 {
			ops[i].Arg = offset(uint8(r.IntN(4)), r.Uint64()) // mostly short steps
		}
	}
	return ops
}

// OpsFromBytes decodes fuzz input into operations, four bytes each: kind,
// scale, and two bytes of value and pick.
func OpsFromBytes(data []byte) []Op {
	ops := make([]Op, 0, len(data)/4)
	for len(data) >= 4 {
		b := data[:4]
		data = data[4:]
		v := uint64(b[2])<<8 | uint64(b[3])
		v = v*0x9E3779B97F4A7C15 ^ v // spread small values over the range
		ops = append(ops, Op{
			Kind: OpKind(b[0] % uint8(numOpKinds)),
			Arg:  offset(b[1], v),
			Pick: int(b[3]),
		})
	}
	return ops
}
