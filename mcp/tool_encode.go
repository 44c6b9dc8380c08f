package mcp

import (
	"bytes"
	"encoding/json"

	"github.com/mcpkit/mcpkit/internal/wire"
)

// appendCallToolResult appends the result object of a tool call (without
// resultType and _meta, which the result encoder adds). Plain text content
// and compact raw structured content, what most tools return, are written
// directly; everything else goes through encoding/json.
func appendCallToolResult(dst []byte, r *CallToolResult) ([]byte, error) {
	dst = append(dst, `{"content":[`...)
	for i, c := range r.Content {
		if i > 0 {
			dst = append(dst, ',')
		}
		if t, ok := c.(*TextContent); ok && t != nil && t.Annotations == nil && len(t.Meta) == 0 {
			dst = append(dst, `{"type":"text","text":`...)
			dst = wire.AppendString(dst, t.Text)
			dst = append(dst, '}')
			continue
		}
		b, err := json.Marshal(c)
		if err != nil {
			return dst, err
		}
		dst = append(dst, b...)
	}
	dst = append(dst, ']')
	if r.StructuredContent != nil {
		dst = append(dst, `,"structuredContent":`...)
		raw, ok := r.StructuredContent.(json.RawMessage)
		if ok && !bytes.ContainsAny(raw, " \t\r\n") && json.Valid(raw) {
			dst = append(dst, raw...)
		} else {
			b, err := json.Marshal(r.StructuredContent)
			if err != nil {
				return dst, err
			}
			dst = append(dst, b...)
		}
	}
	if r.IsError {
		dst = append(dst, `,"isError":true`...)
	}
	return append(dst, '}'), nil
}
