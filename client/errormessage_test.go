package client_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/mcp"
)

// TestErrorMessageBounded: a server's error message of 100 KB reaches the
// caller cut to MaxErrorMessage, valid UTF-8, in both eras.
func TestErrorMessageBounded(t *testing.T) {
	for _, era := range []client.EraPreference{client.ModernOnly, client.LegacyOnly} {
		s := mcp.NewServer(nil)
		mcp.AddTool(s, &mcp.Tool{Name: "huge", Description: "Fails with a long message."}, func(context.Context, *mcp.ToolRequest, struct{}) (string, error) {
			return "", &mcp.Error{Code: -32001, Message: strings.Repeat("é", 50_000)}
		})
		c, err := client.Connect(context.Background(), &client.MemoryTransport{Server: s}, &client.Options{Eras: era})
		if err != nil {
			t.Fatal(err)
		}
		_, err = c.CallTool(context.Background(), "huge", nil)
		c.Close()
		var e *mcp.Error
		if !errors.As(err, &e) || e.Code != -32001 {
			t.Fatalf("era %v: err = %v", era, err)
		}
		if len(e.Message) > client.MaxErrorMessage || !utf8.ValidString(e.Message) || !strings.HasPrefix(e.Message, "éé") || !strings.HasSuffix(e.Message, "… (100000 bytes in all)") {
			t.Errorf("era %v: message of %d bytes (valid UTF-8 %v), want at most %d", era, len(e.Message), utf8.ValidString(e.Message), client.MaxErrorMessage)
		}
	}
}
