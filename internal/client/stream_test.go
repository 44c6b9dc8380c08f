package client

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/jsonrpc"
)

// TestServerRequestFlood: a server sends many input requests at once and
// pings in between. The client runs at most MaxServerRequests handlers at
// a time, refuses the rest at once with -32000, answers every ping without
// a handler, and answers the requests it took once their handlers return.
func TestServerRequestFlood(t *testing.T) {
	const requests, pings = 200, 50
	fromServer, toClient := io.Pipe()
	fromClient, toServer := io.Pipe()
	c := NewStreamConn(fromServer, toServer)
	defer c.Close()
	release := make(chan struct{})
	var running, peak atomic.Int32
	started := make(chan struct{}, requests)
	c.SetHandler(&Handler{Request: func(ctx context.Context, m *jsonrpc.Message) []byte {
		n := running.Add(1)
		for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
		}
		started <- struct{}{}
		<-release
		running.Add(-1)
		return jsonrpc.AppendResult(nil, m.ID, []byte(`{"action":"decline"}`))
	}})

	answers := make(chan jsonrpc.Message, requests+pings)
	go func() {
		sc := bufio.NewScanner(fromClient)
		for sc.Scan() {
			m, err := jsonrpc.Decode(append([]byte(nil), sc.Bytes()...))
			if err != nil {
				t.Errorf("the client wrote %q: %v", sc.Bytes(), err)
				return
			}
			answers <- m
		}
	}()
	go func() {
		for i := range requests {
			fmt.Fprintf(toClient, `{"jsonrpc":"2.0","id":%d,"method":"elicitation/create","params":{"message":"m","requestedSchema":{"type":"object"}}}`+"\n", i)
			if i%4 == 0 {
				fmt.Fprintf(toClient, `{"jsonrpc":"2.0","id":"p%d","method":"ping"}`+"\n", i/4)
			}
		}
	}()

	got := map[string]int{} // "ping", "refused", "answered"
	next := func() jsonrpc.Message {
		select {
		case m := <-answers:
			return m
		case <-time.After(time.Minute):
			t.Fatalf("no answer after a minute; got %v", got)
			return jsonrpc.Message{}
		}
	}
	for range requests - MaxServerRequests + pings {
		m := next()
		var id any
		json.Unmarshal(m.ID.Raw(), &id)
		switch {
		case fmt.Sprint(id)[0] == 'p' && m.Error == nil:
			got["ping"]++
		case m.Error != nil && m.Error.Code == CodeTooManyServerRequests:
			got["refused"]++
		default:
			t.Fatalf("before any handler returned: %s", m.Result)
		}
	}
	if got["ping"] != pings || got["refused"] != requests-MaxServerRequests {
		t.Errorf("got %v, want %d pings and %d refused", got, pings, requests-MaxServerRequests)
	}
	for range MaxServerRequests {
		<-started
	}
	if n := len(started); n != 0 || peak.Load() != MaxServerRequests {
		t.Errorf("%d handlers ran, at most %d at once; want %d", MaxServerRequests+n, peak.Load(), MaxServerRequests)
	}
	close(release)
	for range MaxServerRequests {
		if m := next(); m.Error != nil {
			t.Errorf("an accepted request was answered with %v", m.Error)
		}
	}
}

// TestStreamCloseWithStuckWrite: the server stopped reading and a request
// fills the pipe. The request gives up when its context ends, the
// cancellation that follows does not wait, and Close returns.
func TestStreamCloseWithStuckWrite(t *testing.T) {
	fromServer, _ := io.Pipe()
	_, toServer := io.Pipe() // nobody reads: every write blocks
	c := NewStreamConn(fromServer, toServer)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	done := make(chan error)
	go func() {
		_, err := c.RoundTrip(ctx, &Request{Method: "tools/call", Params: json.RawMessage(`{}`), Cancel: true})
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, ErrTimeout) {
			t.Errorf("RoundTrip = %v, want ErrTimeout", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("RoundTrip still waits on the stuck write after a minute")
	}
	// Fill the queue behind the stuck write: cancellations are dropped.
	for range WriteQueue + 10 {
		c.w.tryWrite([]byte(`{}`))
	}
	closed := make(chan error)
	go func() { closed <- c.Close() }()
	select {
	case <-closed:
	case <-time.After(time.Minute):
		t.Fatal("Close still waits on the stuck write after a minute")
	}
	if _, err := c.Notify(context.Background(), &Request{Method: "notifications/x"}); !errors.Is(err, ErrClosed) {
		t.Errorf("Notify after Close = %v, want ErrClosed", err)
	}
}

// TestServerRequestFloodHTTP: the same bound on a Streamable HTTP response
// stream, where each answer is a POST of its own.
func TestServerRequestFloodHTTP(t *testing.T) {
	const requests, pings = 60, 10
	answers := make(chan jsonrpc.Message, requests+pings)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		m, err := jsonrpc.Decode(body)
		if err != nil {
			t.Errorf("the client posted %q: %v", body, err)
			return
		}
		if m.IsResponse() {
			answers <- m
			w.WriteHeader(http.StatusAccepted)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		for i := range requests {
			fmt.Fprintf(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"elicitation/create\",\"params\":{}}\n\n", i)
			if i%6 == 0 {
				fmt.Fprintf(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":\"p%d\",\"method\":\"ping\"}\n\n", i)
			}
		}
		w.(http.Flusher).Flush()
		<-r.Context().Done() // the client gives up on the call once the test has seen enough
	}))
	defer srv.Close()
	c := DialHTTP(srv.URL, nil)
	release := make(chan struct{})
	var running, peak atomic.Int32
	c.SetHandler(&Handler{Request: func(ctx context.Context, m *jsonrpc.Message) []byte {
		n := running.Add(1)
		for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
		}
		<-release
		running.Add(-1)
		return jsonrpc.AppendResult(nil, m.ID, []byte(`{"action":"decline"}`))
	}})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel() // before srv.Close, which waits for the stream to end
	go c.RoundTrip(ctx, &Request{Method: "tools/call", Params: json.RawMessage(`{}`)})
	got := map[string]int{}
	for range requests - MaxServerRequests + pings {
		select {
		case m := <-answers:
			switch {
			case m.Error != nil && m.Error.Code == CodeTooManyServerRequests:
				got["refused"]++
			case m.Error == nil && strings.HasPrefix(string(m.ID.Raw()), `"p`):
				got["ping"]++
			default:
				t.Fatalf("before any handler returned: %s %s", m.ID.Raw(), m.Result)
			}
		case <-time.After(time.Minute):
			t.Fatalf("no answer after a minute; got %v", got)
		}
	}
	if got["ping"] != pings || got["refused"] != requests-MaxServerRequests || peak.Load() > MaxServerRequests {
		t.Errorf("got %v with at most %d handlers at once; want %d pings, %d refused, %d handlers", got, peak.Load(), pings, requests-MaxServerRequests, MaxServerRequests)
	}
	close(release)
	for range MaxServerRequests {
		select {
		case m := <-answers:
			if m.Error != nil {
				t.Errorf("an accepted request was answered with %v", m.Error)
			}
		case <-time.After(time.Minute):
			t.Fatal("the accepted requests were not answered within a minute")
		}
	}
}
