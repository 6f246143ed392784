package lab

import (
	"errors"
	"fmt"

	"github.com/timewheel/timewheel/lab/workload"
)

// RBTree is a red-black tree keyed by (deadline, schedule order). It is
// the structure of the reference documents' comparison ("for add, delete
// and find, O(log n); the least node is the leftmost"). It is also the
// structure of nginx's timers and Linux's hrtimers. Like Linux's rb_root_cached it keeps a pointer to
// the leftmost node, so that Next is O(1). It is the textbook tree
// (Cormen et al., chapter 13) with parent pointers.
//
// Schedule, Cancel and Reschedule are O(log n); Expire is O(log n) per
// timer fired; Next is O(1).
//
// An RBTree is not safe for concurrent use.
type RBTree struct {
	root  *RBTimer
	min   *RBTimer // leftmost node; nil when empty
	n     int
	now   int64
	seq   uint64
	steps *workload.Steps // nil unless counting (see Structure)
}

// RBTimer is a timer in an [RBTree].
type RBTimer struct {
	parent, left, right *RBTimer
	when                int64
	seq                 uint64
	red                 bool
	pending             bool
}

// NewRBTree returns an empty tree whose current tick is 0.
func NewRBTree() *RBTree { return &RBTree{} }

func (t *RBTimer) less(u *RBTimer) bool {
	return t.when < u.when || t.when == u.when && t.seq < u.seq
}

func isRed(t *RBTimer) bool { return t != nil && t.red }

// Schedule adds a timer due at tick when and returns it. The complexity is
// O(log n).
func (r *RBTree) Schedule(when int64) *RBTimer {
	t := &RBTimer{}
	r.insert(t, when)
	return t
}

func (r *RBTree) insert(z *RBTimer, when int64) {
	r.seq++
	*z = RBTimer{when: max(when, r.now), seq: r.seq, red: true, pending: true}
	var p *RBTimer
	for x := r.root; x != nil; {
		p = x
		if z.less(x) {
			x = x.left
		} else {
			x = x.right
		}
	}
	z.parent = p
	switch {
	case p == nil:
		r.root = z
	case z.less(p):
		p.left = z
	default:
		p.right = z
	}
	if r.min == nil || z.less(r.min) {
		r.min = z
	}
	if r.steps != nil { // each node on the way down, read and compared; the leftmost compared; the link
		r.steps.Add(r.depth(z) + 2)
	}
	r.n++
	r.insertFixup(z)
}

func (r *RBTree) insertFixup(z *RBTimer) {
	for isRed(z.parent) {
		r.steps.Add(1) // a parent, uncle and grandparent read and recoloured
		p := z.parent
		g := p.parent
		if p == g.left {
			if u := g.right; isRed(u) {
				p.red, u.red, g.red = false, false, true
				z = g
				continue
			}
			if z == p.right {
				z = p
				r.rotateLeft(z)
				p = z.parent
			}
			p.red, g.red = false, true
			r.rotateRight(g)
		} else {
			if u := g.left; isRed(u) {
				p.red, u.red, g.red = false, false, true
				z = g
				continue
			}
			if z == p.left {
				z = p
				r.rotateRight(z)
				p = z.parent
			}
			p.red, g.red = false, true
			r.rotateLeft(g)
		}
	}
	r.root.red = false
}

// Cancel removes t if it is pending and reports whether it was. The
// complexity is O(log n).
func (r *RBTree) Cancel(t *RBTimer) bool {
	r.steps.Add(1)
	if !t.pending {
		return false
	}
	if t == r.min {
		r.min = t.right // the leftmost node's successor: its right subtree's least, or its parent
		if r.min != nil {
			for r.min.left != nil {
				r.min = r.min.left
			}
		} else {
			r.min = t.parent
		}
		if r.steps != nil { // each node passed on the way to the new leftmost: the parent, or down t's right subtree
			passed := 1
			if t.right != nil {
				passed = r.depth(r.min) - r.depth(t)
			}
			r.steps.Add(passed)
		}
	}
	r.delete(t)
	t.parent, t.left, t.right, t.pending = nil, nil, nil, false
	r.n--
	return true
}

func (r *RBTree) delete(z *RBTimer) {
	var x, xp *RBTimer // the node that moves into y's place, and its parent
	y, yRed := z, z.red
	switch {
	case z.left == nil:
		x, xp = z.right, z.parent
		r.transplant(z, z.right)
		r.steps.Add(1) // the child moved up
	case z.right == nil:
		x, xp = z.left, z.parent
		r.transplant(z, z.left)
		r.steps.Add(1)
	default:
		y = z.right
		for y.left != nil {
			y = y.left
		}
		if r.steps != nil { // the successor, found down the right subtree's left edge, and moved up with its child
			r.steps.Add(r.depth(y) - r.depth(z) + 2)
		}
		yRed, x = y.red, y.right
		if y.parent == z {
			xp = y
		} else {
			xp = y.parent
			r.transplant(y, y.right)
			y.right = z.right
			y.right.parent = y
		}
		r.transplant(z, y)
		y.left = z.left
		y.left.parent = y
		y.red = z.red
	}
	if !yRed {
		r.deleteFixup(x, xp)
	}
}

// transplant puts v where u is in u's parent.
func (r *RBTree) transplant(u, v *RBTimer) {
	switch {
	case u.parent == nil:
		r.root = v
	case u == u.parent.left:
		u.parent.left = v
	default:
		u.parent.right = v
	}
	if v != nil {
		v.parent = u.parent
	}
}

// deleteFixup restores the black height after a black node left the path
// to x, whose parent is p (x may be nil).
func (r *RBTree) deleteFixup(x, p *RBTimer) {
	for x != r.root && !isRed(x) {
		r.steps.Add(1) // a sibling and its children read and recoloured
		if x == p.left {
			w := p.right
			if isRed(w) {
				w.red, p.red = false, true
				r.rotateLeft(p)
				w = p.right
			}
			if !isRed(w.left) && !isRed(w.right) {
				w.red = true
				x, p = p, p.parent
				continue
			}
			if !isRed(w.right) {
				w.left.red, w.red = false, true
				r.rotateRight(w)
				w = p.right
			}
			w.red, p.red, w.right.red = p.red, false, false
			r.rotateLeft(p)
		} else {
			w := p.left
			if isRed(w) {
				w.red, p.red = false, true
				r.rotateRight(p)
				w = p.left
			}
			if !isRed(w.left) && !isRed(w.right) {
				w.red = true
				x, p = p, p.parent
				continue
			}
			if !isRed(w.left) {
				w.right.red, w.red = false, true
				r.rotateLeft(w)
				w = p.left
			}
			w.red, p.red, w.left.red = p.red, false, false
			r.rotateRight(p)
		}
		x = r.root
	}
	if x != nil {
		x.red = false
	}
}

func (r *RBTree) rotateLeft(x *RBTimer) {
	y := x.right
	x.right = y.left
	if y.left != nil {
		y.left.parent = x
	}
	r.transplant(x, y)
	y.left, x.parent = x, y
}

func (r *RBTree) rotateRight(x *RBTimer) {
	y := x.left
	x.left = y.right
	if y.right != nil {
		y.right.parent = x
	}
	r.transplant(x, y)
	y.right, x.parent = x, y
}

// Reschedule moves t to tick when, scheduling it anew if it was not
// pending, and reports whether it was pending. The complexity is
// O(log n).
func (r *RBTree) Reschedule(t *RBTimer, when int64) bool {
	pending := r.Cancel(t)
	r.insert(t, when)
	return pending
}

// Expire moves the current tick to now and fires, in order, every timer
// due by then. It returns the number fired. A timer that fire schedules
// waits for the next call. The complexity is O(log n) per timer fired.
func (r *RBTree) Expire(now int64, fire func(*RBTimer)) int {
	if now < r.now {
		return 0
	}
	r.now = now
	limit, fired := r.seq, 0
	for t := r.min; t != nil && t.when <= now && t.seq <= limit; t = r.min {
		r.steps.Add(1) // the leftmost, read and compared
		r.Cancel(t)
		fired++
		fire(t)
	}
	r.steps.Add(1)
	return fired
}

// Next returns the earliest pending deadline and false if nothing is
// pending. The complexity is O(1).
func (r *RBTree) Next() (int64, bool) {
	if r.min == nil {
		return 0, false
	}
	return r.min.when, true
}

// Len returns the number of pending timers. The complexity is O(1).
func (r *RBTree) Len() int { return r.n }

// depth returns how many nodes are above t: for counting steps after the
// fact, so that the timed rounds pay nothing in the loops.
func (r *RBTree) depth(t *RBTimer) int {
	d := 0
	for x := t.parent; x != nil; x = x.parent {
		d++
	}
	return d
}

// countSteps makes r count its steps into s. A node compared on the way
// down, linked, or passed on the way to a successor or to the new
// leftmost is a step. So is each node a delete moves, and each round of
// a fixup (its recolouring, and its rotation if any).
func (r *RBTree) countSteps(s *workload.Steps) { r.steps = s }

// Verify checks the order, the colours, the black height, the links, the
// count and the leftmost pointer, and returns an error naming the first
// broken invariant. It walks every node: it is meant for tests.
func (r *RBTree) Verify() error {
	if isRed(r.root) {
		return errors.New("rbtree: red root")
	}
	if r.root != nil && r.root.parent != nil {
		return errors.New("rbtree: root has a parent")
	}
	count := 0
	var prev *RBTimer
	var walk func(t *RBTimer) (int, error)
	walk = func(t *RBTimer) (int, error) {
		if t == nil {
			return 1, nil
		}
		for _, c := range []*RBTimer{t.left, t.right} {
			if c != nil && c.parent != t {
				return 0, fmt.Errorf("rbtree: child of tick %d has a wrong parent", t.when)
			}
		}
		if t.red && (isRed(t.left) || isRed(t.right)) {
			return 0, fmt.Errorf("rbtree: red node at tick %d has a red child", t.when)
		}
		lh, err := walk(t.left)
		if err != nil {
			return 0, err
		}
		if prev != nil && !prev.less(t) {
			return 0, fmt.Errorf("rbtree: tick %d after tick %d in order", t.when, prev.when)
		}
		if prev == nil && t != r.min {
			return 0, fmt.Errorf("rbtree: leftmost is tick %d, cached is not it", t.when)
		}
		prev = t
		count++
		rh, err := walk(t.right)
		if err != nil {
			return 0, err
		}
		if lh != rh {
			return 0, fmt.Errorf("rbtree: black heights %d and %d under tick %d", lh, rh, t.when)
		}
		if !t.red {
			lh++
		}
		return lh, nil
	}
	if _, err := walk(r.root); err != nil {
		return err
	}
	if r.root == nil && r.min != nil {
		return errors.New("rbtree: empty tree caches a leftmost node")
	}
	if count != r.n {
		return fmt.Errorf("rbtree: Len is %d, but %d nodes are linked", r.n, count)
	}
	return nil
}
