package main

import (
	"context"
	"io"
	"log/slog"
	"os"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/otel/otelenv"
)

// setupTelemetry configures OpenTelemetry for `mcpkit serve`, `bridge` and `gateway` from the
// standard environment variables, with github.com/mcpkit/mcpkit/otel/otelenv (see its doc for
// the variables): the service is named "mcpkit" unless OTEL_SERVICE_NAME says otherwise, and the
// console exporters write to stderr (stdout carries the protocol on stdio). The client
// interceptors trace the calls a bridge makes to its backend.
func setupTelemetry(ctx context.Context, stderr io.Writer, log *slog.Logger) ([]mcp.Interceptor, []client.Interceptor, func(context.Context) error, error) {
	if !otelenv.Enabled() {
		return nil, nil, nil, nil
	}
	ics, cics, shutdown, err := otelenv.SetupWith(ctx, &otelenv.Options{ServiceName: "mcpkit", Console: stderr})
	if err != nil {
		return nil, nil, nil, err
	}
	log.Info("OpenTelemetry on", "traces", os.Getenv("OTEL_TRACES_EXPORTER"), "metrics", os.Getenv("OTEL_METRICS_EXPORTER"))
	return ics, cics, shutdown, nil
}
