package servers

import (
	"errors"
	"fmt"
)

// RedisURL, when set before a handler is built (benchserver -redis URL),
// makes the mcpkit server a replica: its change notifications travel on a
// Redis pub/sub bus (github.com/mcpkit/mcpkit/redis) shared with every
// other benchserver given the same URL, so that a touch on one replica
// reaches the listen streams of all of them (bench/scale.sh -replicas).
var RedisURL string

// dialBus connects the Redis bus of the mcpkit server; nil in a
// benchserver built without mcpkit.
var dialBus func(url string) error

// setupRedis connects the Redis bus for impl when RedisURL is set.
func setupRedis(impl string) error {
	if RedisURL == "" {
		return nil
	}
	if impl != Mcpkit {
		return fmt.Errorf("-redis: only %s has a Redis bus, not %s", Mcpkit, impl)
	}
	if dialBus == nil {
		return errors.New("-redis: this benchserver was built without mcpkit")
	}
	return dialBus(RedisURL)
}
