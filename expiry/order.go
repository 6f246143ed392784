package expiry

// bucketHeap is a binary min-heap of buckets by due: the eviction order of
// a map with a capacity. Each bucket keeps its index for O(log B) removal.
type bucketHeap[K comparable, V any] []*bucket[K, V]

func (h *bucketHeap[K, V]) push(b *bucket[K, V]) {
	b.index = len(*h)
	*h = append(*h, b)
	h.up(b.index)
}

func (h *bucketHeap[K, V]) remove(b *bucket[K, V]) {
	s := *h
	i, n := b.index, len(s)-1
	if i != n {
		s.swap(i, n)
	}
	s[n] = nil
	*h = s[:n]
	b.index = -1
	if i != n {
		if !h.down(i) {
			h.up(i)
		}
	}
}

func (h bucketHeap[K, V]) swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index = i
	h[j].index = j
}

func (h bucketHeap[K, V]) up(j int) {
	for j > 0 {
		i := (j - 1) / 2
		if h[i].due <= h[j].due {
			break
		}
		h.swap(i, j)
		j = i
	}
}

// down sifts element i down and reports whether it moved.
func (h bucketHeap[K, V]) down(i int) bool {
	i0 := i
	for {
		l := 2*i + 1
		if l >= len(h) {
			break
		}
		j := l
		if r := l + 1; r < len(h) && h[r].due < h[l].due {
			j = r
		}
		if h[j].due >= h[i].due {
			break
		}
		h.swap(i, j)
		i = j
	}
	return i > i0
}
