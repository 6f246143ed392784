package loop

// Touch records activity on s, as a delivered chunk or a Write does: the
// refresh of its idle timeout, for the benchmarks.
func Touch(s *Socket) { s.touch() }
