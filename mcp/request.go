package mcp

import (
	"encoding/json"
	"strconv"

	"github.com/mcpkit/mcpkit/internal/wire"
	"github.com/mcpkit/mcpkit/jsonrpc"
)

// requestBase is embedded in the request types handlers receive. Its
// methods send request-scoped notifications; they are safe for concurrent
// use and do nothing once the request has been answered.
// Each request type also has an Info field (*RequestInfo): what the
// request declared in its _meta. It is declared in each type rather than
// here, so that go doc shows it.
type requestBase struct {
	x *exchange
}

// Progress reports progress on the request, if the client asked for it with
// a progress token; otherwise it does nothing. progress must increase from
// call to call (a value that does not is dropped); total is sent when
// greater than zero, message when not empty. On Streamable HTTP the first
// notification turns the response into an SSE stream. In a call that runs
// as a task, progress becomes the task's status message instead (message,
// or "progress/total"), which clients see with tasks/get.
func (r *requestBase) Progress(progress, total float64, message string) {
	x := r.x
	if x != nil && x.task != nil && x.task.progress(progress, total, message) {
		return
	}
	if x == nil || len(x.token) == 0 {
		return
	}
	x.mu.Lock()
	if x.sentProgress && progress <= x.lastProgress {
		x.mu.Unlock()
		return
	}
	x.sentProgress, x.lastProgress = true, progress
	x.mu.Unlock()
	p := []byte(`{"progressToken":`)
	p = append(p, x.token...)
	p = append(p, `,"progress":`...)
	p = strconv.AppendFloat(p, progress, 'g', -1, 64)
	if total > 0 {
		p = append(p, `,"total":`...)
		p = strconv.AppendFloat(p, total, 'g', -1, 64)
	}
	if message != "" {
		p = append(p, `,"message":`...)
		p = wire.AppendString(p, message)
	}
	p = append(p, '}')
	x.notify("notifications/progress", p)
}

// Log sends a notifications/message log entry to the client when the
// request asked for logs at level or below; otherwise it does nothing.
// data is any JSON-encodable value; logger optionally names the source.
//
// Revision 2026-07-28 deprecates logging (SEP-2577): new servers should
// log to stderr on stdio, or use OpenTelemetry (the otel module). It stays
// in the specification for at least twelve months and is not deprecated in
// the legacy era, so Log keeps working for the clients that ask for logs.
// (The note is not a "Deprecated:" paragraph for that reason.)
func (r *requestBase) Log(level LogLevel, logger string, data any) {
	x := r.x
	if x == nil || x.info.LogLevel == "" || level.severity() < x.info.LogLevel.severity() {
		return
	}
	d, err := json.Marshal(data)
	if err != nil {
		x.s.log.Error("mcp: encoding log data", "err", err)
		return
	}
	p := []byte(`{"level":`)
	p = wire.AppendString(p, string(level))
	if logger != "" {
		p = append(p, `,"logger":`...)
		p = wire.AppendString(p, logger)
	}
	p = append(p, `,"data":`...)
	p = append(p, d...)
	p = append(p, '}')
	x.notify("notifications/message", p)
}

// appendResult appends a complete result response for the exchange: body
// is the encoded result object without resultType and _meta.
func (x *exchange) appendResult(dst []byte, resultType string, cacheable bool, body, meta []byte) []byte {
	dst = appendResponsePrefix(dst, x.id)
	dst = x.s.appendResultObject(dst, x.era(), resultType, cacheable, body, meta)
	return append(dst, '}')
}

// appendRaw appends a response whose result object is already complete
// (encoded for the modern era, as the snapshot caches it). A legacy
// exchange gets it reshaped by the 2025-11-25 schema.
func (x *exchange) appendRaw(dst []byte, result []byte) []byte {
	return x.era().appendRaw(dst, x.id, result)
}

func appendResponsePrefix(dst []byte, id jsonrpc.ID) []byte {
	dst = append(dst, `{"jsonrpc":"2.0","id":`...)
	if id.IsValid() {
		dst = append(dst, id.Raw()...)
	} else {
		dst = append(dst, "null"...)
	}
	return append(dst, `,"result":`...)
}
