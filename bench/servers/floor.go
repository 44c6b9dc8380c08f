package servers

import (
	"bufio"
	"io"
	"net/http"
)

// FloorDiscoverBody and FloorCallBody are what the HTTP floor writes: a
// server/discover and a tools/call response of the size the MCP servers
// send, fixed, with no parsing and no encoding.
var (
	FloorDiscoverBody = []byte(`{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","ttlMs":3600000,"cacheScope":"public","supportedVersions":["2026-07-28"],"capabilities":{"tools":{}},"instructions":"A benchmark server with one tool, echo, that returns its text.","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"bench-server","version":"1.0.0"}}}}`)
	FloorCallBody     = []byte(`{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","content":[{"type":"text","text":"hello"}],"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"bench-server","version":"1.0.0"}}}}`)
)

// FloorListenAck is the event the HTTP floor sends on a
// subscriptions/listen request before it holds the stream open.
var FloorListenAck = []byte(`{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":1},"notifications":{"toolsListChanged":true}}}`)

var (
	jsonCT = []string{"application/json"}
	sseCT  = []string{"text/event-stream"}
)

// FloorHandler is the HTTP floor: it drains the request body and writes a
// fixed body chosen by the Mcp-Method header. It is as little as a handler
// can do and still answer with a response of the right size. A
// subscriptions/listen request gets a fixed acknowledgment event and an
// idle stream.
type FloorHandler struct{}

func (FloorHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	io.Copy(io.Discard, r.Body)
	body := FloorDiscoverBody
	if len(r.Header["Mcp-Session-Id"]) == 1 {
		// A legacy (2025-11-25) tools/call: the harness skips the
		// handshake with the floor and sends a fixed session id.
		body = FloorCallBody
	}
	if m := r.Header["Mcp-Method"]; len(m) == 1 {
		switch m[0] {
		case "tools/call":
			body = FloorCallBody
		case "subscriptions/listen":
			// An idle stream: one fixed event, then nothing until the
			// client goes away.
			w.Header()["Content-Type"] = sseCT
			w.Write([]byte("event: message\ndata: "))
			w.Write(FloorListenAck)
			w.Write([]byte("\n\n"))
			http.NewResponseController(w).Flush()
			<-r.Context().Done()
			return
		}
	}
	w.Header()["Content-Type"] = jsonCT
	w.Write(body)
}

// FloorStdio is the stdio floor: it writes every line it reads back,
// unchanged, until r ends.
func FloorStdio(r io.Reader, w io.Writer) error {
	br := bufio.NewReaderSize(r, 64<<10)
	bw := bufio.NewWriterSize(w, 64<<10)
	for {
		line, err := br.ReadSlice('\n')
		if len(line) > 0 {
			bw.Write(line)
			// Flush only when no more input is buffered, as a line server
			// that batches its writes would.
			if br.Buffered() == 0 {
				if ferr := bw.Flush(); ferr != nil {
					return ferr
				}
			}
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if err != nil {
			if err == io.EOF {
				return bw.Flush()
			}
			return err
		}
	}
}
