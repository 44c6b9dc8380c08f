//go:build !only_gosdk && !only_mcpgo && !only_floor

package servers

import (
	"context"
	"io"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/mcpkit/mcpkit/mcp"
)

func init() {
	built[Mcpkit] = implementation{
		http: func() http.Handler { return newMcpkit() },
		stdio: func(ctx context.Context, r io.Reader, w io.Writer) error {
			return newMcpkit().ServeStdio(ctx, r, w)
		},
	}
}

func newMcpkit() *mcp.Server {
	queueDelay := time.Duration(0) // the default: adaptive
	if FixedInFlight {
		queueDelay = mcp.Off
	}
	s := mcp.NewServer(&mcp.ServerOptions{
		Info:         mcp.Implementation{Name: Name, Version: Version},
		Instructions: Instructions,
		Cache:        mcp.CacheOptions{TTL: CacheTTL, Scope: mcp.CachePublic},
		Logger:       mcpkitLogger(),
		// Every benchmark client is 127.0.0.1: the listener curve opens up
		// to 19,000 streams from it (bench/scale.sh).
		Listen: mcp.ListenOptions{MaxSubscriptions: mcp.Off},
		Quotas: mcp.QuotaOptions{MaxSubscriptionsPerClient: mcp.Off, MaxInFlightRequests: MaxInFlight, MaxQueueDelay: queueDelay},
		Bus:    mcpkitBus(), // -redis: a replica (redis.go)
	})
	mcp.AddTool(s, &mcp.Tool{Name: ToolName, Description: ToolDesc},
		func(ctx context.Context, req *mcp.ToolRequest, in EchoIn) (string, error) {
			return in.Text, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: BurnTool, Description: BurnDesc},
		func(ctx context.Context, req *mcp.ToolRequest, in EchoIn) (string, error) {
			Burn(BurnIters)
			return in.Text, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: SleepTool, Description: SleepDesc},
		func(ctx context.Context, req *mcp.ToolRequest, in EchoIn) (string, error) {
			if !sleepCtx(ctx.Done()) {
				return "", ctx.Err()
			}
			return in.Text, nil
		})
	if Touch {
		var present atomic.Bool
		mcp.AddTool(s, &mcp.Tool{Name: TouchTool, Description: TouchDesc},
			func(ctx context.Context, req *mcp.ToolRequest, in struct{}) (string, error) {
				if present.CompareAndSwap(false, true) {
					mcp.AddTool(s, &mcp.Tool{Name: TransientTool, Description: TransientDesc},
						func(ctx context.Context, req *mcp.ToolRequest, in EchoIn) (string, error) { return in.Text, nil })
				} else if present.CompareAndSwap(true, false) {
					s.RemoveTools(TransientTool)
				}
				return TouchText, nil
			})
	}
	return s
}
