package store

import (
	"fmt"
	"strconv"

	"github.com/redis/go-redis/v9"
)

// A reply decodes a script's reply, an array, field by field: the first
// field of the wrong type or missing sets err, naming the script and the
// field, and later reads return zero values.
type reply struct {
	script string
	v      []any
	err    error
}

// decode returns a reply of cmd's array; a reply that is not one is a
// *ReplyError.
func decode(name string, cmd *redis.Cmd) *reply {
	r := &reply{script: name}
	if err := cmd.Err(); err != nil {
		r.err = err
		return r
	}
	v, ok := cmd.Val().([]any)
	if !ok {
		r.err = &ReplyError{name, fmt.Sprintf("%T where an array was due", cmd.Val())}
	}
	r.v = v
	return r
}

func (r *reply) fail(i int, what string) {
	if r.err == nil {
		got := "nothing"
		if i < len(r.v) {
			got = fmt.Sprintf("%T", r.v[i])
		}
		r.err = &ReplyError{r.script, fmt.Sprintf("field %d: %s where %s was due", i+1, got, what)}
	}
}

// has reports whether the reply has field i.
func (r *reply) has(i int) bool { return r.err == nil && i < len(r.v) }

// int returns field i, an integer.
func (r *reply) int(i int) int64 {
	if !r.has(i) {
		r.fail(i, "an integer")
		return 0
	}
	n, ok := r.v[i].(int64)
	if !ok {
		r.fail(i, "an integer")
	}
	return n
}

// str returns field i, a string.
func (r *reply) str(i int) string {
	if !r.has(i) {
		r.fail(i, "a string")
		return ""
	}
	s, ok := r.v[i].(string)
	if !ok {
		r.fail(i, "a string")
	}
	return s
}

// opt returns field i, a string or nil (Lua's false).
func (r *reply) opt(i int) (string, bool) {
	if !r.has(i) {
		r.fail(i, "a string or nil")
		return "", false
	}
	if r.v[i] == nil {
		return "", false
	}
	s, ok := r.v[i].(string)
	if !ok {
		r.fail(i, "a string or nil")
	}
	return s, ok
}

// score returns field i, a score as Redis writes it (an integer of µs,
// or in exponent form).
func (r *reply) score(i int) int64 {
	s := r.str(i)
	if r.err != nil {
		return 0
	}
	n, err := ParseScore(s)
	if err != nil {
		r.fail(i, "a score")
	}
	return n
}

// strs returns field i, an array of strings.
func (r *reply) strs(i int) []string {
	if !r.has(i) {
		r.fail(i, "an array of strings")
		return nil
	}
	a, ok := r.v[i].([]any)
	if !ok {
		r.fail(i, "an array of strings")
		return nil
	}
	out := make([]string, 0, len(a))
	for _, x := range a {
		s, ok := x.(string)
		if !ok {
			r.fail(i, "an array of strings")
			return nil
		}
		out = append(out, s)
	}
	return out
}

// rest checks that the fields from i on come in groups of n, and returns
// how many groups there are.
func (r *reply) rest(i, n int) int {
	if r.err != nil {
		return 0
	}
	if len(r.v) < i || (len(r.v)-i)%n != 0 {
		r.err = &ReplyError{r.script, fmt.Sprintf("%d fields, not %d and groups of %d", len(r.v), i, n)}
		return 0
	}
	return (len(r.v) - i) / n
}

// integer decodes a reply that is one integer.
func integer(name string, cmd *redis.Cmd) (int64, error) {
	if err := cmd.Err(); err != nil {
		return 0, err
	}
	n, ok := cmd.Val().(int64)
	if !ok {
		return 0, &ReplyError{name, fmt.Sprintf("%T where an integer was due", cmd.Val())}
	}
	return n, nil
}

// ParseScore parses a score Redis wrote: µs, an integer below 2^53,
// written as one or in exponent form.
func ParseScore(s string) (int64, error) {
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return n, nil
	}
	f, err := strconv.ParseFloat(s, 64)
	return int64(f), err
}
