package redisserver

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"time"
)

// A ReplyError is an error reply of the server's (for example "MOVED 12
// 127.0.0.1:7001" or "ERR unknown command").
type ReplyError string

func (e ReplyError) Error() string { return string(e) }

// Do sends one command to the server on a connection of its own and
// returns the reply: a string (simple or bulk), an int64, nil (a null),
// a []any (an array), or a ReplyError. It gives up after 10s.
func (s *Server) Do(args ...string) (any, error) {
	v, err := s.Pipeline(args)
	if err != nil {
		return nil, err
	}
	if re, ok := v[0].(ReplyError); ok {
		return nil, re
	}
	return v[0], nil
}

// Pipeline sends the commands cmds on one connection of their own, in
// one write, and returns their replies, each as Do says (an error reply
// a ReplyError in its place): for a WAIT, which counts the replicas that
// have its own connection's writes. It gives up after 10s.
func (s *Server) Pipeline(cmds ...[]string) ([]any, error) {
	addr := s.Addr
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return nil, fmt.Errorf("redisserver: %s: %w", addr, err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	var b strings.Builder
	for _, args := range cmds {
		fmt.Fprintf(&b, "*%d\r\n", len(args))
		for _, a := range args {
			fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
		}
	}
	if _, err := io.WriteString(conn, b.String()); err != nil {
		return nil, fmt.Errorf("redisserver: %s: %w", addr, err)
	}
	r := bufio.NewReader(conn)
	out := make([]any, len(cmds))
	for i, args := range cmds {
		v, err := readReply(r)
		var re ReplyError
		switch {
		case errors.As(err, &re):
			v = re
		case err != nil:
			return nil, fmt.Errorf("redisserver: %s: %s: %w", addr, args[0], err)
		}
		out[i] = v
	}
	return out, nil
}

// readReply reads one RESP2 reply.
func readReply(r *bufio.Reader) (any, error) {
	line, err := r.ReadString('\n')
	if err != nil {
		return nil, err
	}
	if len(line) < 3 || !strings.HasSuffix(line, "\r\n") {
		return nil, fmt.Errorf("malformed reply %q", line)
	}
	kind, body := line[0], line[1:len(line)-2]
	switch kind {
	case '+':
		return body, nil
	case '-':
		return nil, ReplyError(body)
	case ':':
		return strconv.ParseInt(body, 10, 64)
	case '$':
		n, err := strconv.Atoi(body)
		if err != nil || n < 0 {
			return nil, err
		}
		buf := make([]byte, n+2)
		if _, err := io.ReadFull(r, buf); err != nil {
			return nil, err
		}
		return string(buf[:n]), nil
	case '*':
		n, err := strconv.Atoi(body)
		if err != nil || n < 0 {
			return nil, err
		}
		out := make([]any, n)
		for i := range out {
			v, err := readReply(r)
			var re ReplyError
			if err != nil && !errors.As(err, &re) {
				return nil, err
			}
			if err != nil {
				v = re
			}
			out[i] = v
		}
		return out, nil
	}
	return nil, fmt.Errorf("malformed reply %q", line)
}

// Info returns the fields of the server's INFO section (for example
// "replication", "cpu").
func (s *Server) Info(section string) (map[string]string, error) {
	v, err := s.Do("INFO", section)
	if err != nil {
		return nil, err
	}
	text, _ := v.(string)
	m := map[string]string{}
	for line := range strings.Lines(text) {
		if k, v, ok := strings.Cut(strings.TrimSpace(line), ":"); ok {
			m[k] = v
		}
	}
	return m, nil
}
