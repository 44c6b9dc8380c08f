package mcp

import (
	"encoding/base64"
	"encoding/json"
	"fmt"

	"github.com/mcpkit/mcpkit/internal/jsonscan"

	"github.com/mcpkit/mcpkit/internal/wire"
)

var b64 = base64.RawURLEncoding

// Result types of revision 2026-07-28.
const (
	resultComplete      = "complete"
	resultInputRequired = "input_required"
)

// appendResultObject is the one encoder of result objects. It appends body
// (an encoded JSON object without _meta) with resultType first, the cache
// hints when cacheable, and _meta carrying serverInfo merged with userMeta
// (an encoded JSON object, or nil).
//
// The era encodes it (era.go): the legacy one follows the 2025-11-25
// schema instead.
func (s *Server) appendResultObject(dst []byte, w era, resultType string, cacheable bool, body, userMeta []byte) []byte {
	var hint []byte
	if cacheable {
		hint = s.cacheHint
	}
	return s.appendResultObjectHint(dst, w, resultType, hint, body, userMeta)
}

// appendResultObjectHint is appendResultObject with explicit cache hint
// members (`"ttlMs":N,"cacheScope":"..."`); a nil hint means the result is
// not cacheable.
func (s *Server) appendResultObjectHint(dst []byte, w era, resultType string, hint []byte, body, userMeta []byte) []byte {
	return w.appendResultObject(s, dst, resultType, hint, body, userMeta)
}

// appendModernResultObject is the 2026-07-28 encoding of a result object
// (modernWire.appendResultObject).
func (s *Server) appendModernResultObject(dst []byte, resultType string, hint []byte, body, userMeta []byte) []byte {
	dst = append(dst, `{"resultType":"`...)
	dst = append(dst, resultType...)
	dst = append(dst, '"')
	if len(hint) > 0 {
		dst = append(dst, ',')
		dst = append(dst, hint...)
	}
	if inner := objectInner(body); len(inner) > 0 {
		dst = append(dst, ',')
		dst = append(dst, inner...)
	}
	dst = append(dst, `,"_meta":{`...)
	dst = append(dst, s.identity.Load().meta...)
	if inner := objectInner(userMeta); len(inner) > 0 {
		dst = append(dst, ',')
		dst = append(dst, inner...)
	}
	return append(dst, "}}"...)
}

// objectInner returns the members of an encoded JSON object without the
// braces, trimmed of space.
func objectInner(obj []byte) []byte {
	i := jsonscan.SkipSpace(obj, 0)
	j := len(obj)
	for j > i && (obj[j-1] == ' ' || obj[j-1] == '\n' || obj[j-1] == '\t' || obj[j-1] == '\r') {
		j--
	}
	if j-i < 2 || obj[i] != '{' {
		return nil
	}
	inner := obj[i+1 : j-1]
	k := jsonscan.SkipSpace(inner, 0)
	return inner[k:]
}

// appendMember appends `"key":value`.
func appendMember(dst []byte, key string, value []byte) []byte {
	dst = wire.AppendString(dst, key)
	dst = append(dst, ':')
	return append(dst, value...)
}

// mustMarshal encodes v, which must be encodable (a value built by this
// package).
func mustMarshal(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("mcp: encoding %T: %v", v, err))
	}
	return b
}
