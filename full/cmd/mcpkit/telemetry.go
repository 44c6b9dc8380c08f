package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	"go.opentelemetry.io/contrib/exporters/autoexport"
	gotel "go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/exporters/stdout/stdoutmetric"
	"go.opentelemetry.io/otel/exporters/stdout/stdouttrace"
	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"

	"github.com/mcpkit/mcpkit/mcp"
	mcpotel "github.com/mcpkit/mcpkit/otel"
)

// setupTelemetry configures OpenTelemetry for `mcpkit serve` from the
// standard environment variables. OTEL_TRACES_EXPORTER and
// OTEL_METRICS_EXPORTER choose the exporters (unset or "none": none, so
// that a plain `mcpkit serve` exports nothing); "console" writes to
// stderr (stdout carries the protocol on stdio); "otlp" and "prometheus"
// are made by the OpenTelemetry autoexport package, which reads the
// OTEL_EXPORTER_OTLP_* and OTEL_EXPORTER_PROMETHEUS_* variables.
// OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES name the service
// (default "mcpkit").
func setupTelemetry(ctx context.Context, stderr io.Writer, log *slog.Logger) ([]mcp.Interceptor, func(context.Context) error, error) {
	traces := strings.TrimSpace(os.Getenv("OTEL_TRACES_EXPORTER"))
	metrics := strings.TrimSpace(os.Getenv("OTEL_METRICS_EXPORTER"))
	if (traces == "" || traces == "none") && (metrics == "" || metrics == "none") {
		return nil, nil, nil
	}
	res, err := resource.New(ctx,
		resource.WithAttributes(semconv.ServiceName("mcpkit")),
		resource.WithFromEnv(), // OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES win
		resource.WithTelemetrySDK(),
	)
	if err != nil {
		return nil, nil, fmt.Errorf("resource: %w", err)
	}
	var opts mcpotel.Options
	var stops []func(context.Context) error
	stop := func(ctx context.Context) error {
		var errs []error
		for _, f := range stops {
			errs = append(errs, f(ctx))
		}
		return errors.Join(errs...)
	}
	switch traces {
	case "", "none":
	default:
		var exp sdktrace.SpanExporter
		if traces == "console" {
			exp, err = stdouttrace.New(stdouttrace.WithWriter(stderr))
		} else {
			exp, err = autoexport.NewSpanExporter(ctx)
		}
		if err != nil {
			return nil, nil, fmt.Errorf("OTEL_TRACES_EXPORTER=%s: %w", traces, err)
		}
		tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
		stops = append(stops, tp.Shutdown)
		opts.TracerProvider = tp
		gotel.SetTracerProvider(tp)
	}
	switch metrics {
	case "", "none":
	default:
		var r sdkmetric.Reader
		if metrics == "console" {
			var exp sdkmetric.Exporter
			if exp, err = stdoutmetric.New(stdoutmetric.WithWriter(stderr)); err == nil {
				r = sdkmetric.NewPeriodicReader(exp)
			}
		} else {
			r, err = autoexport.NewMetricReader(ctx)
		}
		if err != nil {
			stop(ctx)
			return nil, nil, fmt.Errorf("OTEL_METRICS_EXPORTER=%s: %w", metrics, err)
		}
		mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(r), sdkmetric.WithResource(res))
		stops = append(stops, mp.Shutdown)
		opts.MeterProvider = mp
		gotel.SetMeterProvider(mp)
	}
	gotel.SetTextMapPropagator(propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{}))
	log.Info("OpenTelemetry on", "traces", traces, "metrics", metrics)
	return []mcp.Interceptor{mcpotel.ServerInterceptor(&opts)}, stop, nil
}
