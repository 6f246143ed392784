package workload

// rng is a xorshift generator: cheap enough not to blur the numbers, and
// seeded, so that every contender sees the same sequence.
type rng uint64

func newRNG(seed uint64) rng {
	if seed == 0 {
		seed = 0x9E3779B97F4A7C15
	}
	return rng(seed)
}

func (r *rng) next() uint64 {
	*r ^= *r << 13
	*r ^= *r >> 7
	*r ^= *r << 17
	return uint64(*r)
}

// intn returns a number in [0, n).
func (r *rng) intn(n int) int { return int(r.next() % uint64(n)) }

// between returns a tick offset in [lo, hi).
func (r *rng) between(lo, hi int64) int64 { return lo + int64(r.next()%uint64(hi-lo)) }
