package load

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"strconv"
	"time"
)

// httpConn is a minimal keep-alive HTTP/1.1 client connection for one MCP
// endpoint. It costs far less CPU per request than net/http's client, which
// matters when client and server share two cores: the floor measures the
// server, not the client.
type httpConn struct {
	addr string
	head []byte // request line and fixed headers, without Content-Length
	conn net.Conn
	br   *bufio.Reader
	req  []byte
	body []byte
	// session is the Mcp-Session-Id of the last response that had one.
	session string
	// retryAfter reports whether the last response had Retry-After.
	retryAfter bool
	// deadline, when set, bounds every read and write (the open-loop
	// driver's per-request timeout).
	deadline time.Time
}

// newHTTPConn prepares a connection that posts method requests to rawURL.
func newHTTPConn(rawURL, method string) (*httpConn, error) {
	return newHTTPConnHeaders(rawURL, Headers(method))
}

// newHTTPConnHeaders prepares a connection that posts to rawURL with the
// given headers (besides Host and Content-Length).
func newHTTPConnHeaders(rawURL string, headers [][2]string) (*httpConn, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, err
	}
	if u.Scheme != "http" {
		return nil, fmt.Errorf("load: only http URLs are supported, not %q", rawURL)
	}
	path := u.RequestURI()
	head := []byte("POST " + path + " HTTP/1.1\r\nHost: " + u.Host + "\r\n")
	for _, h := range headers {
		head = append(head, h[0]+": "+h[1]+"\r\n"...)
	}
	return &httpConn{addr: u.Host, head: head}, nil
}

func (c *httpConn) dial() error {
	conn, err := net.DialTimeout("tcp", c.addr, 5*time.Second)
	if err != nil {
		return err
	}
	c.conn = conn
	if c.br == nil {
		c.br = bufio.NewReaderSize(conn, 32<<10)
	} else {
		c.br.Reset(conn)
	}
	return nil
}

func (c *httpConn) close() {
	if c.conn != nil {
		c.conn.Close()
		c.conn = nil
	}
}

// do sends body and returns the HTTP status and the JSON-RPC message of the
// response: the body of an application/json response, or the last data line
// of a text/event-stream response. The returned slice is valid until the
// next call. A connection the server closed is redialled once.
func (c *httpConn) do(body []byte) (int, []byte, error) {
	for attempt := 0; ; attempt++ {
		if c.conn == nil {
			if err := c.dial(); err != nil {
				return 0, nil, err
			}
		}
		if !c.deadline.IsZero() {
			c.conn.SetDeadline(c.deadline)
		}
		status, msg, closeAfter, err := c.roundTrip(body)
		if err != nil {
			c.close()
			if attempt == 0 && isReset(err) {
				continue
			}
			return 0, nil, err
		}
		if closeAfter {
			c.close()
		}
		return status, msg, nil
	}
}

func isReset(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, net.ErrClosed)
}

func (c *httpConn) roundTrip(body []byte) (status int, msg []byte, closeAfter bool, err error) {
	c.req = append(c.req[:0], c.head...)
	c.req = append(c.req, "Content-Length: "...)
	c.req = strconv.AppendInt(c.req, int64(len(body)), 10)
	c.req = append(c.req, "\r\n\r\n"...)
	c.req = append(c.req, body...)
	if _, err := c.conn.Write(c.req); err != nil {
		return 0, nil, false, err
	}
	line, err := c.br.ReadSlice('\n')
	if err != nil {
		return 0, nil, false, err
	}
	if len(line) < 12 || !bytes.HasPrefix(line, []byte("HTTP/1.")) {
		return 0, nil, false, fmt.Errorf("malformed status line %q", line)
	}
	status, ok := atoi(line[9:12])
	if !ok {
		return 0, nil, false, fmt.Errorf("malformed status line %q", line)
	}
	length, chunked, sse := -1, false, false
	c.retryAfter = false
	for {
		line, err := c.br.ReadSlice('\n')
		if err != nil {
			return 0, nil, false, err
		}
		if len(line) <= 2 {
			break
		}
		colon := bytes.IndexByte(line, ':')
		if colon < 0 {
			return 0, nil, false, fmt.Errorf("malformed header line %q", line)
		}
		name, value := line[:colon], bytes.TrimSpace(line[colon+1:])
		switch {
		case bytes.EqualFold(name, []byte("Content-Length")):
			n, ok := atoi(value)
			if !ok {
				return 0, nil, false, fmt.Errorf("malformed Content-Length %q", value)
			}
			length = n
		case bytes.EqualFold(name, []byte("Transfer-Encoding")):
			chunked = bytes.EqualFold(value, []byte("chunked"))
		case bytes.EqualFold(name, []byte("Content-Type")):
			sse = bytes.HasPrefix(value, []byte("text/event-stream"))
		case bytes.EqualFold(name, []byte("Mcp-Session-Id")):
			c.session = string(value)
		case bytes.EqualFold(name, []byte("Retry-After")):
			c.retryAfter = len(value) > 0
		case bytes.EqualFold(name, []byte("Connection")):
			closeAfter = bytes.EqualFold(value, []byte("close"))
		}
	}
	c.body = c.body[:0]
	switch {
	case chunked:
		for {
			line, err := c.br.ReadSlice('\n')
			if err != nil {
				return 0, nil, false, err
			}
			line = bytes.TrimSpace(line)
			if i := bytes.IndexByte(line, ';'); i >= 0 {
				line = line[:i]
			}
			n, err := strconv.ParseInt(string(line), 16, 32)
			if err != nil {
				return 0, nil, false, fmt.Errorf("malformed chunk size %q", line)
			}
			if n == 0 {
				for { // trailers
					line, err := c.br.ReadSlice('\n')
					if err != nil {
						return 0, nil, false, err
					}
					if len(line) <= 2 {
						break
					}
				}
				break
			}
			if c.body, err = readN(c.br, c.body, int(n)); err != nil {
				return 0, nil, false, err
			}
			if _, err := c.br.Discard(2); err != nil {
				return 0, nil, false, err
			}
		}
	case length >= 0:
		if c.body, err = readN(c.br, c.body, length); err != nil {
			return 0, nil, false, err
		}
	default:
		return 0, nil, false, errors.New("response has neither Content-Length nor chunked encoding")
	}
	if sse {
		return status, lastSSEData(c.body), closeAfter, nil
	}
	return status, c.body, closeAfter, nil
}

func readN(br *bufio.Reader, dst []byte, n int) ([]byte, error) {
	start := len(dst)
	dst = append(dst, make([]byte, n)...)
	_, err := io.ReadFull(br, dst[start:])
	return dst, err
}

// lastSSEData returns the data of the last event of an SSE body: the
// response, which follows any notifications.
func lastSSEData(body []byte) []byte {
	var last []byte
	for len(body) > 0 {
		line := body
		if i := bytes.IndexByte(body, '\n'); i >= 0 {
			line, body = body[:i], body[i+1:]
		} else {
			body = nil
		}
		line = bytes.TrimRight(line, "\r")
		if d, ok := bytes.CutPrefix(line, []byte("data:")); ok {
			last = bytes.TrimPrefix(d, []byte(" "))
		}
	}
	return last
}

func atoi(b []byte) (int, bool) {
	n, ok := parseInt(b)
	return int(n), ok
}
