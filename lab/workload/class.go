package workload

import (
	"fmt"
	"math"
	"slices"
)

// Class is a growth class of a cost in n: what the reference documents
// claim for an operation, and what the lab fits to the steps it counted.
type Class int

// The classes the lab tells apart, in the order it prefers them: a fit
// takes the first one that explains the steps (see FitSteps).
const (
	Unknown Class = iota // too few sizes to tell
	O1                   // O(1)
	OLogN                // O(log n)
	OSqrtN               // O(√n)
	ON                   // O(n)
	ONLogN               // O(n log n)
	ON2                  // O(n²)
)

// Classes returns every class a fit chooses from, in order.
func Classes() []Class { return []Class{O1, OLogN, OSqrtN, ON, ONLogN, ON2} }

// String returns the class as the documents write it: "O(log n)".
func (c Class) String() string {
	switch c {
	case O1:
		return "O(1)"
	case OLogN:
		return "O(log n)"
	case OSqrtN:
		return "O(√n)"
	case ON:
		return "O(n)"
	case ONLogN:
		return "O(n log n)"
	case ON2:
		return "O(n²)"
	}
	return "?"
}

// term returns the class's term at n: 1, ln n, √n, n, n ln n, n².
func (c Class) term(n float64) float64 {
	switch c {
	case OLogN:
		return math.Log(n)
	case OSqrtN:
		return math.Sqrt(n)
	case ON:
		return n
	case ONLogN:
		return n * math.Log(n)
	case ON2:
		return n * n
	}
	return 1
}

// Fit is the growth class fitted to one contender's steps per operation
// at the sizes counted: steps ≈ A + B·term(n). A workload whose cost per
// timer includes work shared by all n adds Shared/n (far: the day's
// 86,400 clock steps). B and Shared are never negative; A may be,
// a shift of the term (3·ln n − 5 is 3·ln(n/5)).
type Fit struct {
	Class  Class
	A, B   float64
	Shared float64
	// Err is the root mean square of the relative residuals: 0.02 means
	// the fit is off by 2 % at a typical size.
	Err    float64
	Points int // sizes fitted
	// Apart is a size the fit leaves out, or 0. It is the one size that
	// no class explains with the others. That happens when every class
	// misses the full series by more than Tolerance and one fits it
	// without that size.
	Apart int
}

// Tolerance is how far off a fit may be and still explain the steps.
// Steps are exact counts averaged over thousands of random operations.
// But a small queue is not yet what a large one is. A heap of 100 is too
// shallow for the sifts a heap of 10,000 makes, and a burst of 1,000
// stands beside the n. So a class that is right leaves residuals of a
// few percent at the smallest sizes. A series whose O(log n) term adds
// less than a sixth over four decades reads as O(1).
const (
	Tolerance    = 0.05
	PreferWithin = 1.5
)

// FitSteps returns the class of a contender's steps per operation. Of
// every class, it takes the first (the slowest growing) whose fit is
// within Tolerance, or within PreferWithin times the best fit's error.
// So a flat series is O(1), even though an O(log n) line with a slope
// of nearly zero fits it as well. And a series that bends is not called
// flat because a flat line misses it by a few percent.
//
// If no class is within Tolerance of every size, but one is once a
// single size is left out, that fit is taken, with the size in Apart.
// One size that stands out from a series the others agree on does not
// make a flat series O(n); an example is a queue whose deadlines begin
// to repeat at a million timers.
// shared adds the Shared/n term. Only results with status OK and a
// positive value count; with fewer sizes than the model has terms plus
// one, the class is Unknown.
func FitSteps(rs []Result, shared bool) Fit {
	var ns, ys []float64
	for _, r := range rs {
		if r.Status == OK && r.Value > 0 && r.N > 0 {
			ns, ys = append(ns, float64(r.N)), append(ys, r.Value)
		}
	}
	terms := 2
	if shared {
		terms = 3
	}
	if len(ns) < terms+1 {
		return Fit{Points: len(ns)}
	}
	f := choose(ns, ys, shared)
	if f.Err <= Tolerance || len(ns) < terms+2 {
		return f
	}
	best := f
	for i := range ns {
		rest := func(xs []float64) []float64 { return append(slices.Clone(xs[:i]), xs[i+1:]...) }
		g := choose(rest(ns), rest(ys), shared)
		if g.Err <= Tolerance && (best.Apart == 0 || g.Err < best.Err) {
			best, best.Apart, best.Points = g, int(ns[i]), len(ns)
		}
	}
	return best
}

// choose fits every class to the points and returns the first within
// Tolerance, or within PreferWithin times the best error. A growing
// class counts only where its growth shows at two sizes or more: where
// its term adds more than Tolerance to the fitted steps over those at
// the smallest size. One size alone does not make a class: four flat
// sizes and a fifth above them fit a + b·n as well as a jump does.
func choose(ns, ys []float64, shared bool) Fit {
	fits := make([]Fit, 0, len(Classes()))
	best := math.Inf(1)
	for _, c := range Classes() {
		f := fitClass(c, ns, ys, shared)
		if c != O1 && f.shows(ns) < 2 {
			f.Err = math.Inf(1)
		}
		fits = append(fits, f)
		best = min(best, f.Err)
	}
	for _, f := range fits {
		if f.Err <= max(Tolerance, PreferWithin*best) {
			return f
		}
	}
	return fits[0] // every growing class refused: the flat fit, however far off
}

// shows returns at how many sizes the fit's growing term adds more than
// Tolerance to its steps over those at the smallest size.
func (f Fit) shows(ns []float64) int {
	n0 := slices.Min(ns)
	count := 0
	for _, n := range ns {
		at := f.A + f.B*f.Class.term(n) + f.Shared/n
		if at > 0 && f.B*(f.Class.term(n)-f.Class.term(n0)) > Tolerance*at {
			count++
		}
	}
	return count
}

// fitClass fits A + B·term(n) (+ Shared/n) to the points by least squares
// on relative residuals, B and Shared at least zero. It solves each
// subset of the terms and keeps the best solution with none negative.
// O(1) has no B, and its A is positive.
func fitClass(c Class, ns, ys []float64, shared bool) Fit {
	basis := []func(n float64) float64{func(float64) float64 { return 1 }} // A
	if c != O1 {
		basis = append(basis, c.term) // B
	}
	if shared {
		basis = append(basis, func(n float64) float64 { return 1 / n }) // Shared
	}
	best := Fit{Class: c, Err: math.Inf(1), Points: len(ns)}
	for mask := 1; mask < 1<<len(basis); mask++ {
		var use []int
		for j := range basis {
			if mask&(1<<j) != 0 {
				use = append(use, j)
			}
		}
		coef, ok := leastSquares(ns, ys, basis, use)
		if !ok {
			continue
		}
		full := make([]float64, len(basis))
		negative := false
		for i, j := range use {
			full[j] = coef[i]
			negative = negative || coef[i] < 0 && (j > 0 || c == O1) // only A of a growing class may be
		}
		if negative {
			continue
		}
		var sum float64
		for i, n := range ns {
			pred := 0.0
			for j, f := range basis {
				pred += full[j] * f(n)
			}
			r := (ys[i] - pred) / ys[i]
			sum += r * r
		}
		if err := math.Sqrt(sum / float64(len(ns))); err < best.Err {
			best.Err, best.A = err, full[0]
			if c != O1 {
				best.B = full[1]
			}
			if shared {
				best.Shared = full[len(full)-1]
			}
		}
	}
	return best
}

// leastSquares solves for the coefficients of the basis functions use
// that minimise the squared relative residuals, by the normal equations
// (at most three unknowns), and reports false if they are singular.
func leastSquares(ns, ys []float64, basis []func(float64) float64, use []int) ([]float64, bool) {
	k := len(use)
	m := make([][]float64, k) // k × (k+1), augmented
	for r := range m {
		m[r] = make([]float64, k+1)
	}
	for i, n := range ns {
		w := 1 / ys[i] // relative: each residual over its own value
		row := make([]float64, k)
		for a, j := range use {
			row[a] = basis[j](n) * w
		}
		for r := range k {
			for col := range k {
				m[r][col] += row[r] * row[col]
			}
			m[r][k] += row[r] * ys[i] * w
		}
	}
	for col := range k { // Gauss–Jordan with partial pivoting
		p := col
		for r := col + 1; r < k; r++ {
			if math.Abs(m[r][col]) > math.Abs(m[p][col]) {
				p = r
			}
		}
		if math.Abs(m[p][col]) < 1e-300 {
			return nil, false
		}
		m[col], m[p] = m[p], m[col]
		for r := range k {
			if r != col {
				f := m[r][col] / m[col][col]
				for c := col; c <= k; c++ {
					m[r][c] -= f * m[col][c]
				}
			}
		}
	}
	coef := make([]float64, k)
	for r := range k {
		coef[r] = m[r][k] / m[r][r]
		if math.IsNaN(coef[r]) || math.IsInf(coef[r], 0) {
			return nil, false
		}
	}
	return coef, true
}

// String returns the class and how far off its fit is, as "O(log n)
// ±3%", with the size left out in brackets ("O(1) ±2% (1e6)"), or "?"
// with the number of sizes when there are too few.
func (f Fit) String() string {
	if f.Class == Unknown {
		return fmt.Sprintf("? %d sizes", f.Points)
	}
	s := fmt.Sprintf("%s ±%.0f%%", f.Class, 100*f.Err)
	if f.Apart > 0 {
		s += " (" + SizeLabel(f.Apart) + ")"
	}
	return s
}

// SizeLabel returns n as 1e3 when it is a power of ten, as is otherwise.
func SizeLabel(n int) string {
	p, m := 0, n
	for m >= 10 && m%10 == 0 {
		m /= 10
		p++
	}
	if m == 1 && p > 0 {
		return fmt.Sprintf("1e%d", p)
	}
	return fmt.Sprint(n)
}

// Formula returns the fitted curve, as "2.1 + 0.72·ln n + 9.4M/n".
func (f Fit) Formula() string {
	if f.Class == Unknown {
		return "?"
	}
	s := fmt.Sprintf("%.3g", f.A)
	if f.B > 0 {
		term := map[Class]string{OLogN: "ln n", OSqrtN: "√n", ON: "n", ONLogN: "n ln n", ON2: "n²"}[f.Class]
		s += fmt.Sprintf(" + %.3g·%s", f.B, term)
	}
	if f.Shared > 0 {
		s += fmt.Sprintf(" + %.3g/n", f.Shared)
	}
	if f.Apart > 0 {
		s += fmt.Sprintf(" (%s left out)", SizeLabel(f.Apart))
	}
	return s
}
