package durable

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/redis/go-redis/v9"
)

// ErrConfigRefused is wrapped by the error of RequiresFullCoverage when a
// node refuses CONFIG GET, as managed Redis services often do: read the
// setting from the service's own configuration then.
var ErrConfigRefused = errors.New("durable: CONFIG GET refused")

// RequiresFullCoverage reports whether a node of the Redis Cluster behind
// rdb runs with cluster-require-full-coverage yes, Redis's default. Such a
// node answers every command, on every slot, with CLUSTERDOWN while some
// slot has no live primary: one primary's failover then stops every shard
// of every queue for its last half second or so, not its own shards
// alone (see docs/durable.md, "A failover and the other shards"). Set it
// to no on every node so that the others serve on.
//
// It asks every primary the client knows of, and returns true if any
// says yes; set it on the replicas as well, since a failover promotes
// one. (CLUSTER SLOTS, which go-redis reads, may leave replicas out.) A client that is not a
// *redis.ClusterClient returns false: a single server has no other slots
// to hold up. A node that answers CONFIG GET with an error or without the
// setting gives an error wrapping ErrConfigRefused. It is safe for
// concurrent use, and costs a round trip to each primary, in parallel.
func RequiresFullCoverage(ctx context.Context, rdb redis.UniversalClient) (bool, error) {
	cc, ok := rdb.(*redis.ClusterClient)
	if !ok {
		return false, nil
	}
	var (
		mu   sync.Mutex
		full bool // guarded by mu
	)
	err := cc.ForEachMaster(ctx, func(ctx context.Context, node *redis.Client) error {
		yes, err := nodeFullCoverage(ctx, node)
		if err != nil {
			return err
		}
		mu.Lock()
		full = full || yes
		mu.Unlock()
		return nil
	})
	if err != nil {
		return false, err
	}
	return full, nil
}

// nodeFullCoverage reads cluster-require-full-coverage from one node.
func nodeFullCoverage(ctx context.Context, node *redis.Client) (bool, error) {
	const param = "cluster-require-full-coverage"
	addr := node.Options().Addr
	v, err := node.ConfigGet(ctx, param).Result()
	var re redis.Error
	switch {
	case errors.As(err, &re):
		return false, fmt.Errorf("%w by %s: %w", ErrConfigRefused, addr, err)
	case err != nil:
		return false, fmt.Errorf("durable: RequiresFullCoverage: %s: %w", addr, err)
	}
	s, ok := v[param]
	if !ok {
		return false, fmt.Errorf("%w by %s: no %s in the reply", ErrConfigRefused, addr, param)
	}
	return strings.EqualFold(s, "yes"), nil
}
