package load

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"testing"

	"github.com/mcpkit/mcpkit/bench/servers"
)

// recorder is a reusable http.ResponseWriter for in-process benchmarks: it
// keeps its header map and body buffer between requests, so that the
// benchmark counts the handler's allocations, not the recorder's.
type recorder struct {
	h      http.Header
	status int
	body   []byte
}

func (r *recorder) Header() http.Header { return r.h }
func (r *recorder) WriteHeader(code int) {
	if r.status == 0 {
		r.status = code
	}
}
func (r *recorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	r.body = append(r.body, b...)
	return len(b), nil
}
func (r *recorder) Flush() {}

func (r *recorder) reset() {
	clear(r.h)
	r.status = 0
	r.body = r.body[:0]
}

// bodyReader is a reusable request body.
type bodyReader struct {
	bytes.Reader
}

func (*bodyReader) Close() error { return nil }

// InProcess serves requests to an http.Handler without a network: the
// request and response objects are reused, so that allocations measured per
// request are the handler's own.
type InProcess struct {
	impl, method string
	h            http.Handler
	req          *http.Request
	body         []byte
	rd           bodyReader
	w            recorder
	checker      *Checker
}

// NewInProcess builds impl's handler and a method request for it, the way
// net/http hands requests to handlers on a loopback listener (so that
// DNS-rebinding checks run), and checks one response deeply.
func NewInProcess(impl, method string) (*InProcess, error) {
	h, err := servers.HTTPHandler(impl)
	if err != nil {
		return nil, err
	}
	ctx := context.WithValue(context.Background(), http.LocalAddrContextKey, net.Addr(&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8080}))
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://127.0.0.1:8080"+servers.Path, nil)
	if err != nil {
		return nil, err
	}
	req.RemoteAddr = "127.0.0.1:40000"
	req.RequestURI = servers.Path
	for _, kv := range Headers(method) {
		req.Header.Add(kv[0], kv[1])
	}
	p := &InProcess{impl: impl, method: method, h: h, req: req, body: AppendBody(nil, method, goldenID), w: recorder{h: http.Header{}}}
	req.ContentLength = int64(len(p.body))
	if err := p.serve(); err != nil {
		return nil, err
	}
	if p.checker, err = NewChecker(impl, HTTP, method, p.w.body); err != nil {
		return nil, fmt.Errorf("%s %s in-process: %w", impl, method, err)
	}
	return p, nil
}

func (p *InProcess) serve() error {
	p.w.reset()
	p.rd.Reset(p.body)
	p.req.Body = &p.rd
	p.h.ServeHTTP(&p.w, p.req)
	if p.w.status != http.StatusOK {
		return fmt.Errorf("%s %s in-process: HTTP status %d: %.200q", p.impl, p.method, p.w.status, p.w.body)
	}
	return nil
}

// Serve serves one request and checks the response.
func (p *InProcess) Serve() error {
	if err := p.serve(); err != nil {
		return err
	}
	return p.checker.Check(p.w.body, goldenID)
}

// Benchmark serves b.N requests, each checked, reporting allocations.
func (p *InProcess) Benchmark(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if err := p.Serve(); err != nil {
			b.Fatal(err)
		}
	}
}
