package cli

import (
	"context"
	"io"
	"log/slog"
	"time"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/internal/clip"
	"github.com/mcpkit/mcpkit/mcp"
)

// Telemetry is what a build with OpenTelemetry (full/cmd/mcpkit) adds to
// `mcpkit serve`, `bridge` and `gateway`: from the standard OTEL_*
// environment variables, the interceptors that trace and measure every
// call the server serves, those for the calls a bridge or gateway makes
// to its backends (a CLIENT span per hop, the trace context in the
// backend request's _meta), and a function that flushes and stops the
// exporters. Console output goes to stderr: stdout belongs to the
// protocol on stdio.
type Telemetry func(ctx context.Context, stderr io.Writer, log *slog.Logger) (interceptors []mcp.Interceptor, backend []client.Interceptor, shutdown func(context.Context) error, err error)

// maxLogName bounds the name field of an access log line: the tool or
// prompt name, resource URI or task id is the client's to choose, and a
// name the server does not know may be megabytes long (docs/security.md).
const maxLogName = 256

// accessLog returns the interceptor of `serve --log-requests`: one log
// line per call with its method, name (at most maxLogName bytes),
// transport, duration, outcome and the attributes its handler attached
// (mcp.Annotate: mcp.backend, the backend a gateway routed it to). It
// never logs arguments, params or tokens.
func accessLog(log *slog.Logger) mcp.Interceptor {
	return func(ctx context.Context, c *mcp.Call, next mcp.CallHandler) mcp.Outcome {
		start := time.Now()
		o := next(ctx, c)
		attrs := make([]slog.Attr, 0, 10)
		attrs = append(attrs, slog.String("method", c.Method))
		if c.Name != "" {
			attrs = append(attrs, slog.String("name", clip.String(c.Name, maxLogName)))
		}
		if c.Phase != mcp.PhaseRequest {
			attrs = append(attrs, slog.String("phase", c.Phase.String()))
		}
		attrs = append(attrs, slog.String("transport", string(c.Transport)), slog.String("era", c.Info.Era.String()),
			slog.Duration("duration", time.Since(start)))
		switch {
		case o.Err != nil:
			attrs = append(attrs, slog.String("outcome", "error"), slog.Int("code", int(o.Err.Code)))
		case o.ToolError:
			attrs = append(attrs, slog.String("outcome", "tool_error"))
		case o.ResultType != "":
			attrs = append(attrs, slog.String("outcome", o.ResultType))
		default:
			attrs = append(attrs, slog.String("outcome", "no response"))
		}
		if o.HTTPStatus != 0 && c.Transport == mcp.TransportStreamableHTTP {
			attrs = append(attrs, slog.Int("status", o.HTTPStatus))
		}
		for _, a := range c.Attributes() { // mcp.backend, behind a gateway
			attrs = append(attrs, slog.String(a.Key, clip.String(a.Value, maxLogName)))
		}
		log.LogAttrs(ctx, slog.LevelInfo, "mcp request", attrs...)
		return o
	}
}

// observe adds the interceptors of --log-requests and of the build's
// Telemetry to opts, and returns the Telemetry's interceptors for calls to
// backends and the function that stops the telemetry (nil when there is
// none).
func observe(ctx context.Context, logRequests bool, stderr io.Writer, log *slog.Logger, opts *mcp.ServerOptions) ([]client.Interceptor, func(context.Context) error, error) {
	var stop func(context.Context) error
	var backend []client.Interceptor
	if build.Telemetry != nil {
		ics, bics, shutdown, err := build.Telemetry(ctx, stderr, log)
		if err != nil {
			return nil, nil, err
		}
		opts.Interceptors = append(opts.Interceptors, ics...) // outermost: spans cover the log line
		backend, stop = bics, shutdown
	}
	if logRequests {
		opts.Interceptors = append(opts.Interceptors, accessLog(log))
	}
	return backend, stop, nil
}
