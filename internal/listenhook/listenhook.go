// Package listenhook chains mcp.ListenOptions.Observe hooks: the bridge
// and the gateway observe listen streams for their backends after the
// hook their user configured.
package listenhook

import (
	"context"

	"github.com/mcpkit/mcpkit/mcp"
)

// Observe is the type of mcp.ListenOptions.Observe.
type Observe = func(ctx context.Context, info *mcp.RequestInfo, granted mcp.SubscriptionFilter) (end func(), err error)

// Chain returns a hook that calls user (nil: none) and then own. When
// user refuses the stream, own is not called; when own refuses it,
// user's end function runs at once. The returned end function runs own's
// end, then user's. It is safe for concurrent use when user and own are.
func Chain(user, own Observe) Observe {
	if user == nil {
		return own
	}
	return func(ctx context.Context, info *mcp.RequestInfo, f mcp.SubscriptionFilter) (func(), error) {
		end, err := user(ctx, info, f)
		if err != nil {
			return end, err
		}
		end2, err := own(ctx, info, f)
		if err != nil {
			if end != nil {
				end()
			}
			return nil, err
		}
		return func() {
			if end2 != nil {
				end2()
			}
			if end != nil {
				end()
			}
		}, nil
	}
}
