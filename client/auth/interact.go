package auth

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"time"
)

// Interaction is the user's part of the authorization code grant, which
// the host implements: send the user to the authorization server, and
// hand back the redirect it answers with.
type Interaction interface {
	// RedirectURL is the redirect URI the authorization server sends the
	// user back to. It is registered with the server and must be stable
	// for the Interaction's lifetime.
	RedirectURL() string
	// Authorize sends the user to authURL (open a browser, print it, ...)
	// and returns the query parameters of the redirect to RedirectURL
	// (code, state, iss, or error and error_description). The transport
	// validates them. Authorize must return when ctx is done.
	Authorize(ctx context.Context, authURL string) (url.Values, error)
}

// Loopback is an [Interaction] for command-line programs: it receives the
// redirect on a loopback address (RFC 8252 §7.3) and asks Open to show
// the authorization URL to the user.
type Loopback struct {
	// Open shows authURL to the user, typically by starting a browser. If
	// it fails the URL is still valid: the error is only reported to
	// OnOpenError.
	Open func(authURL string) error
	// OnOpenError, if set, is told when Open fails (to print the URL instead).
	OnOpenError func(authURL string, err error)
	// Timeout bounds the wait for the redirect; default 5 minutes.
	Timeout time.Duration

	ln   net.Listener
	srv  *http.Server
	path string

	mu      sync.Mutex
	waiting map[string]chan url.Values // by state
}

// NewLoopback listens on 127.0.0.1 on a free port (or on addr's port, if
// addr is "127.0.0.1:PORT") for the redirect. Close it when done.
func NewLoopback(addr string, open func(authURL string) error) (*Loopback, error) {
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil || !isLoopback(host) {
		return nil, fmt.Errorf("auth: loopback address %q is not a loopback host:port", addr)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	l := &Loopback{Open: open, ln: ln, path: "/callback", waiting: map[string]chan url.Values{}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+l.path, l.callback)
	l.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go l.srv.Serve(ln)
	return l, nil
}

// RedirectURL returns http://127.0.0.1:PORT/callback.
func (l *Loopback) RedirectURL() string {
	return "http://" + l.ln.Addr().String() + l.path
}

// Close stops the listener.
func (l *Loopback) Close() error { return l.srv.Close() }

func (l *Loopback) callback(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	state := q.Get("state")
	l.mu.Lock()
	var ch chan url.Values
	for s, c := range l.waiting {
		if subtle.ConstantTimeCompare([]byte(s), []byte(state)) == 1 {
			ch = c
			delete(l.waiting, s)
			break
		}
	}
	l.mu.Unlock()
	if ch == nil {
		http.Error(w, "This sign-in link is not expected (unknown or already used state).", http.StatusBadRequest)
		return
	}
	// The whole page reaches the browser before Authorize returns: an application closes the
	// Loopback as soon as it has the code, and Close cuts the connections.
	const page = "<!doctype html><title>Signed in</title><p>You can close this window and return to the application.</p>"
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Length", strconv.Itoa(len(page)))
	io.WriteString(w, page)
	http.NewResponseController(w).Flush()
	ch <- q // buffered, and this state's only sender: it was removed from waiting above
}

// Authorize opens authURL and waits for the redirect that carries its state.
func (l *Loopback) Authorize(ctx context.Context, authURL string) (url.Values, error) {
	u, err := url.Parse(authURL)
	if err != nil {
		return nil, errors.New("auth: unparsable authorization URL")
	}
	state := u.Query().Get("state")
	if state == "" {
		return nil, errors.New("auth: authorization URL has no state")
	}
	ch := make(chan url.Values, 1)
	l.mu.Lock()
	l.waiting[state] = ch
	l.mu.Unlock()
	defer func() {
		l.mu.Lock()
		delete(l.waiting, state)
		l.mu.Unlock()
	}()
	if l.Open != nil {
		if err := l.Open(authURL); err != nil && l.OnOpenError != nil {
			l.OnOpenError(authURL, err)
		}
	}
	d := l.Timeout
	if d <= 0 {
		d = 5 * time.Minute
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case q := <-ch:
		return q, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-t.C:
		return nil, &Error{Op: "authorize", Code: "timeout", Description: fmt.Sprintf("no redirect within %v", d)}
	}
}
