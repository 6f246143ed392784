package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// This file is the command's way to Redis: the client -addr and
// -cluster ask for, and how a failure to reach it is told.

// connError tells apart, for an error that is a failed dial or the end
// of the command's time, a Redis that cannot be reached (a connection
// error) from one that is reached but does not answer (stalled, or far
// behind): it dials -addr's first node once, within a second.
func connError(err error, addr string, cluster bool, timeout time.Duration) error {
	var op *net.OpError
	if !errors.Is(err, context.DeadlineExceeded) && !(errors.As(err, &op) && op.Op == "dial") {
		return err
	}
	host := strings.Split(addr, ",")[0]
	if o, perr := redisOptions(host); perr == nil && (!cluster || !strings.Contains(addr, "://")) {
		host = o.Addr
	} else if o, perr := redis.ParseClusterURL(addr); perr == nil && len(o.Addrs) > 0 {
		host = o.Addrs[0]
	}
	conn, derr := net.DialTimeout("tcp", host, time.Second)
	if derr != nil {
		return fmt.Errorf("cannot connect to Redis at %s: connection error: %v", host, derr)
	}
	conn.Close()
	return fmt.Errorf("no reply from Redis at %s within -timeout %v: connected, but it does not answer (stalled, or far behind): %w", host, timeout, err)
}

// client returns the client -addr and -cluster ask for.
func client(addr string, cluster bool) (redis.UniversalClient, error) {
	if !cluster {
		opts, err := redisOptions(addr)
		if err != nil {
			return nil, err
		}
		return redis.NewClient(opts), nil
	}
	if strings.Contains(addr, "://") {
		o, err := redis.ParseClusterURL(addr)
		if err != nil {
			return nil, fmt.Errorf("-addr: %w", err)
		}
		return redis.NewClusterClient(o), nil
	}
	seeds := strings.Split(addr, ",")
	if slices.Contains(seeds, "") {
		return nil, fmt.Errorf("-addr %q: an empty seed node", addr)
	}
	return redis.NewClusterClient(&redis.ClusterOptions{Addrs: seeds}), nil
}

// redisOptions parses -addr: a URL if it has a scheme, else host:port.
func redisOptions(addr string) (*redis.Options, error) {
	if strings.Contains(addr, "://") {
		o, err := redis.ParseURL(addr)
		if err != nil {
			return nil, fmt.Errorf("-addr: %w", err)
		}
		return o, nil
	}
	if addr == "" {
		return nil, errors.New("-addr is empty")
	}
	return &redis.Options{Addr: addr}, nil
}
