package load

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/mcpkit/mcpkit/bench/servers"
)

// ListenStreams is the number of idle subscriptions/listen streams the
// memory case opens on one server process, twice (IdleListenMemory).
const ListenStreams = 500

// Listeners are open, idle subscriptions/listen streams, one per
// connection.
type Listeners struct {
	streams []*listenStream
}

// listenStream is one open listen stream: its connection and a reader of
// its events (past the acknowledgment).
type listenStream struct {
	id     int
	conn   net.Conn
	events *bufio.Reader
	notes  streamNotes // what the fan-out cases' reader records (notify.go)
}

// Close closes every stream.
func (l *Listeners) Close() {
	for _, s := range l.streams {
		s.conn.Close()
	}
	l.streams = nil
}

// OpenListeners opens n subscriptions/listen streams on the MCP endpoint at
// rawURL, each on its own connection, subscribing to tools list changes,
// and checks each stream's first message: the acknowledgment carrying the
// request id as its subscription id (the floor's fixed acknowledgment for
// the floor). The streams stay open, and idle, until Close.
func OpenListeners(rawURL, impl string, n int) (*Listeners, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, err
	}
	l := &Listeners{}
	for id := 1; id <= n; id++ {
		s, err := openListener(u, impl, id)
		if err != nil {
			l.Close()
			return nil, fmt.Errorf("%s subscriptions/listen stream %d: %w", impl, id, err)
		}
		l.streams = append(l.streams, s)
	}
	return l, nil
}

// ListenBody is the subscriptions/listen request with the given id.
func ListenBody(id int) string {
	return `{"jsonrpc":"2.0","id":` + strconv.Itoa(id) + `,"method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true},` + requestMeta + `}}`
}

func openListener(u *url.URL, impl string, id int) (*listenStream, error) {
	c, err := net.DialTimeout("tcp", u.Host, 5*time.Second)
	if err != nil {
		return nil, err
	}
	fail := func(err error) (*listenStream, error) {
		c.Close()
		return nil, err
	}
	body := ListenBody(id)
	req := "POST " + u.RequestURI() + " HTTP/1.1\r\nHost: " + u.Host + "\r\n" +
		"Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n" +
		"Mcp-Protocol-Version: " + ProtocolVersion + "\r\nMcp-Method: subscriptions/listen\r\n" +
		"Content-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body
	if _, err := io.WriteString(c, req); err != nil {
		return fail(err)
	}
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	br := bufio.NewReader(c)
	status, err := br.ReadString('\n')
	if err != nil {
		return fail(err)
	}
	if !strings.HasPrefix(status, "HTTP/1.1 200") {
		return fail(fmt.Errorf("status %q", strings.TrimSpace(status)))
	}
	chunked, sse := false, false
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			return fail(err)
		}
		line = strings.TrimSpace(line)
		if line == "" {
			break
		}
		k, v, _ := strings.Cut(line, ":")
		v = strings.TrimSpace(v)
		switch strings.ToLower(k) {
		case "transfer-encoding":
			chunked = strings.EqualFold(v, "chunked")
		case "content-type":
			sse = strings.HasPrefix(v, "text/event-stream")
		}
	}
	if !sse {
		return fail(fmt.Errorf("the response is not an event stream"))
	}
	var r io.Reader = br
	if chunked {
		r = httputil.NewChunkedReader(br)
	}
	events := bufio.NewReader(r)
	for {
		line, err := events.ReadBytes('\n')
		if err != nil {
			return fail(fmt.Errorf("reading the acknowledgment: %w", err))
		}
		if d, ok := bytes.CutPrefix(bytes.TrimRight(line, "\r\n"), []byte("data:")); ok {
			if err := checkAck(impl, bytes.TrimSpace(d), id); err != nil {
				return fail(err)
			}
			break
		}
	}
	c.SetReadDeadline(time.Time{})
	return &listenStream{id: id, conn: c, events: events}, nil
}

// checkAck checks the first message of a listen stream.
func checkAck(impl string, msg []byte, id int) error {
	if impl == servers.Floor {
		if !bytes.Equal(msg, servers.FloorListenAck) {
			return fmt.Errorf("floor sent %.200q", msg)
		}
		return nil
	}
	var m struct {
		Method string `json:"method"`
		ID     any    `json:"id"`
		Params struct {
			Meta          map[string]any `json:"_meta"`
			Notifications map[string]any `json:"notifications"`
		} `json:"params"`
	}
	if err := json.Unmarshal(msg, &m); err != nil {
		return fmt.Errorf("the first message is not JSON: %v: %.200q", err, msg)
	}
	if m.Method != "notifications/subscriptions/acknowledged" || m.ID != nil {
		return fmt.Errorf("the first message is not notifications/subscriptions/acknowledged: %.200q", msg)
	}
	if sid := m.Params.Meta["io.modelcontextprotocol/subscriptionId"]; sid != float64(id) {
		return fmt.Errorf("subscriptionId is %v, want %d", sid, id)
	}
	if m.Params.Notifications["toolsListChanged"] != true {
		return fmt.Errorf("the acknowledgment does not grant toolsListChanged: %.200q", msg)
	}
	return nil
}

// IdleMemory is the resident memory an idle listen stream costs a server,
// in bytes per stream, measured two ways.
type IdleMemory struct {
	// Marginal is what each stream past the first batch adds: the growth
	// of VmRSS from n to 2n open streams, divided by n. It leaves out the
	// process's costs that do not grow with the streams (the runtime's
	// minimum heap, buffers the first connections leave behind).
	Marginal int64
	// Average is the growth of VmRSS from none to n streams, divided by n:
	// per-stream cost plus the fixed costs spread over n streams.
	Average int64
}

// IdleListenMemory starts a fresh server process (argv, as for Start) for
// impl, opens 2n idle listen streams on it in two batches of n, and
// returns their memory cost per stream.
func IdleListenMemory(argv []string, impl string, n int) (IdleMemory, error) {
	p, err := Start(argv, impl, HTTP)
	if err != nil {
		return IdleMemory{}, err
	}
	defer p.Stop()
	time.Sleep(100 * time.Millisecond)
	rss := []int64{}
	before, err := ProcRSS(p.Pid())
	if err != nil {
		return IdleMemory{}, err
	}
	rss = append(rss, before)
	for range 2 {
		l, err := OpenListeners(p.URL, impl, n)
		if err != nil {
			return IdleMemory{}, err
		}
		defer l.Close()
		time.Sleep(300 * time.Millisecond) // let the server settle
		now, err := ProcRSS(p.Pid())
		if err != nil {
			return IdleMemory{}, err
		}
		rss = append(rss, now)
	}
	return IdleMemory{Average: (rss[1] - rss[0]) / int64(n), Marginal: (rss[2] - rss[1]) / int64(n)}, nil
}
