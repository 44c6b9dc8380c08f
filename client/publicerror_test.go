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
