// Package otelenv configures OpenTelemetry for an MCP server or client from the standard OTEL_*
// environment variables, and returns the mcpkit interceptors that record through it. It is the
// setup that the full mcpkit command uses for `mcpkit serve`, as a library call.
//
// OTEL_TRACES_EXPORTER and OTEL_METRICS_EXPORTER choose the exporters: unset or "none" is none
// (so a program run without them exports nothing and Setup returns no interceptors), "console"
// writes to Options.Console (default stderr: stdout carries the protocol on stdio), and "otlp"
// and "prometheus" are made by the OpenTelemetry autoexport package, which reads the
// OTEL_EXPORTER_OTLP_* and OTEL_EXPORTER_PROMETHEUS_* variables. OTEL_SERVICE_NAME and
// OTEL_RESOURCE_ATTRIBUTES name the service.
//
// It is a nested module of its own (github.com/mcpkit/mcpkit/otel/otelenv) because autoexport
// brings gRPC, Prometheus and protobuf, which the light otel module must not.
package otelenv

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
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

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/mcp"
	mcpotel "github.com/mcpkit/mcpkit/otel"
)

// Options adjusts Setup. The zero value (or nil) is what Setup uses.
type Options struct {
	// ServiceName is the service.name resource attribute when OTEL_SERVICE_NAME and
	// OTEL_RESOURCE_ATTRIBUTES do not set it. Default: the program's file name.
	ServiceName string
	// Console receives what the "console" exporters write. Default: os.Stderr.
	Console io.Writer
	// NoGlobal leaves the global providers and propagator of go.opentelemetry.io/otel alone.
	// By default Setup installs the providers it makes and the W3C propagators as the global
	// ones, so that other instrumented libraries of the program join the same traces.
	NoGlobal bool
}

// Enabled reports whether the environment asks for any telemetry: OTEL_TRACES_EXPORTER or
// OTEL_METRICS_EXPORTER set to something other than "none".
func Enabled() bool {
	t, m := exporters()
	return t != "" || m != ""
}

// exporters returns the trace and metric exporter names, "" for none.
func exporters() (traces, metrics string) {
	traces = strings.TrimSpace(os.Getenv("OTEL_TRACES_EXPORTER"))
	metrics = strings.TrimSpace(os.Getenv("OTEL_METRICS_EXPORTER"))
	if traces == "none" {
		traces = ""
	}
	if metrics == "none" {
		metrics = ""
	}
	return traces, metrics
}

// Setup is SetupWith(ctx, nil).
func Setup(ctx context.Context) (serverICs []mcp.Interceptor, clientICs []client.Interceptor, shutdown func(context.Context) error, err error) {
	return SetupWith(ctx, nil)
}

// SetupWith makes the exporters and providers the OTEL_* environment variables ask for and
// returns a server interceptor (for mcp.ServerOptions.Interceptors) and a client interceptor
// (for client.Options.Interceptors) that record through them, and shutdown, which flushes and
// stops the exporters (call it once, when the program ends). When the environment asks for no
// telemetry it returns no interceptors and a shutdown that does nothing. An exporter name that
// autoexport does not know, or an exporter that cannot be made, is an error naming the variable;
// what was made before it is shut down. SetupWith is safe to call more than once (each call makes
// its own providers); opts may be nil.
func SetupWith(ctx context.Context, opts *Options) (serverICs []mcp.Interceptor, clientICs []client.Interceptor, shutdown func(context.Context) error, err error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Console == nil {
		o.Console = os.Stderr
	}
	if o.ServiceName == "" {
		o.ServiceName = filepath.Base(os.Args[0])
	}
	noop := func(context.Context) error { return nil }
	traces, metrics := exporters()
	if traces == "" && metrics == "" {
		return nil, nil, noop, nil
	}
	res, err := resource.New(ctx,
		resource.WithAttributes(semconv.ServiceName(o.ServiceName)),
		resource.WithFromEnv(), // OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES win
		resource.WithTelemetrySDK(),
	)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("otelenv: resource: %w", err)
	}
	var mo mcpotel.Options
	var stops []func(context.Context) error
	stop := func(ctx context.Context) error {
		var errs []error
		for _, f := range stops {
			errs = append(errs, f(ctx))
		}
		return errors.Join(errs...)
	}
	if traces != "" {
		var exp sdktrace.SpanExporter
		if traces == "console" {
			exp, err = stdouttrace.New(stdouttrace.WithWriter(o.Console))
		} else {
			exp, err = autoexport.NewSpanExporter(ctx)
		}
		if err != nil {
			return nil, nil, nil, fmt.Errorf("otelenv: OTEL_TRACES_EXPORTER=%s: %w", traces, err)
		}
		tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
		stops = append(stops, tp.Shutdown)
		mo.TracerProvider = tp
	}
	if metrics != "" {
		var r sdkmetric.Reader
		if metrics == "console" {
			var exp sdkmetric.Exporter
			if exp, err = stdoutmetric.New(stdoutmetric.WithWriter(o.Console)); err == nil {
				r = sdkmetric.NewPeriodicReader(exp)
			}
		} else {
			r, err = autoexport.NewMetricReader(ctx)
		}
		if err != nil {
			stop(ctx)
			return nil, nil, nil, fmt.Errorf("otelenv: OTEL_METRICS_EXPORTER=%s: %w", metrics, err)
		}
		mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(r), sdkmetric.WithResource(res))
		stops = append(stops, mp.Shutdown)
		mo.MeterProvider = mp
	}
	mo.Propagator = propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})
	if !o.NoGlobal {
		if mo.TracerProvider != nil {
			gotel.SetTracerProvider(mo.TracerProvider)
		}
		if mo.MeterProvider != nil {
			gotel.SetMeterProvider(mo.MeterProvider)
		}
		gotel.SetTextMapPropagator(mo.Propagator)
	}
	return []mcp.Interceptor{mcpotel.ServerInterceptor(&mo)}, []client.Interceptor{mcpotel.ClientInterceptor(&mo)}, stop, nil
}
