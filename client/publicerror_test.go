package client

import (
	"errors"
	"fmt"
	"io"
	"testing"

	iclient "github.com/mcpkit/mcpkit/internal/client"
)

// A transport failure reaches the caller as a *TransportError, alone or
// inside a longer chain, which keeps its other errors and its message.
func TestPublicError(t *testing.T) {
	inner := &iclient.TransportError{Op: "POST http://x/mcp", Err: io.ErrClosedPipe}
	for _, err := range []error{inner, fmt.Errorf("reading: %w", inner)} {
		got := publicError(err)
		var te *TransportError
		if !errors.As(got, &te) || te.Op != inner.Op || te.Err != io.ErrClosedPipe {
			t.Errorf("publicError(%v) = %#v, want a *TransportError for %q", err, got, inner.Op)
		}
		if !errors.Is(got, io.ErrClosedPipe) {
			t.Errorf("publicError(%v) lost io.ErrClosedPipe from its chain", err)
		}
	}
	if got := publicError(fmt.Errorf("reading: %w", inner)).Error(); got != "reading: POST http://x/mcp: io: read/write on closed pipe" {
		t.Errorf("message %q", got)
	}
	other := errors.New("other")
	if publicError(other) != other || publicError(nil) != nil {
		t.Error("publicError changed an error without a transport error in it")
	}
}

// A request's transport failure names the package once: "client: METHOD:
// Op: cause", the *TransportError still in its chain.
func TestCallErrorOnePrefix(t *testing.T) {
	inner := &iclient.TransportError{Op: "POST http://x/mcp", Err: io.ErrClosedPipe}
	err := error(&callError{method: "tools/call", err: publicError(inner)})
	if got, want := err.Error(), "client: tools/call: POST http://x/mcp: io: read/write on closed pipe"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	var te *TransportError
	if !errors.As(err, &te) || !errors.Is(err, io.ErrClosedPipe) {
		t.Errorf("%v lost its *TransportError or its cause", err)
	}
}
