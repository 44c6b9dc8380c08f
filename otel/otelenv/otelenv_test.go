package otelenv

import (
	"context"
	"strings"
	"testing"
)

func TestSetup(t *testing.T) {
	tests := []struct {
		name            string
		traces, metrics string
		wantICs         bool
		wantErr         string
	}{
		{name: "unset", wantICs: false},
		{name: "none", traces: "none", metrics: "none", wantICs: false},
		{name: "console traces", traces: "console", wantICs: true},
		{name: "console metrics", metrics: "console", wantICs: true},
		{name: "unknown traces exporter", traces: "carrier-pigeon", wantErr: "OTEL_TRACES_EXPORTER=carrier-pigeon"},
		{name: "unknown metrics exporter", traces: "console", metrics: "smoke-signal", wantErr: "OTEL_METRICS_EXPORTER=smoke-signal"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("OTEL_TRACES_EXPORTER", tt.traces)
			t.Setenv("OTEL_METRICS_EXPORTER", tt.metrics)
			ctx := context.Background()
			srv, cli, shutdown, err := SetupWith(ctx, &Options{Console: new(strings.Builder), NoGlobal: true})
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("SetupWith: err = %v, want one naming %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer shutdown(ctx)
			if got := len(srv) == 1 && len(cli) == 1; got != tt.wantICs {
				t.Errorf("SetupWith returned %d server and %d client interceptors, want one each: %v", len(srv), len(cli), tt.wantICs)
			}
			if !tt.wantICs && (len(srv) != 0 || len(cli) != 0) {
				t.Errorf("SetupWith with no exporter returned interceptors")
			}
			if Enabled() != tt.wantICs {
				t.Errorf("Enabled() = %v, want %v", Enabled(), tt.wantICs)
			}
		})
	}
}
