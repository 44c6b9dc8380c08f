package mcp_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/mcpkit/mcpkit/mcp"
)

// Health probes on a mux of one's own: /readyz fails from the moment
// Shutdown is called (and while a Bus or store that implements
// mcp.ReadyChecker reports an error). NewHTTPServer mounts both already.
func ExampleServer_ReadinessHandler() {
	s := mcp.NewServer(nil)
	mux := http.NewServeMux()
	mux.Handle("/mcp", s)
	mux.Handle("GET /healthz", s.LivenessHandler())
	mux.Handle("GET /readyz", s.ReadinessHandler())
	probe := func(path string) {
		w := httptest.NewRecorder()
		mux.ServeHTTP(w, httptest.NewRequest(http.MethodGet, path, nil))
		b, _ := io.ReadAll(w.Body)
		fmt.Println(path, w.Code, strings.TrimSpace(string(b)))
	}
	probe("/healthz")
	probe("/readyz")
	s.Shutdown(context.Background())
	probe("/readyz")
	probe("/healthz")
	// Output:
	// /healthz 200 ok
	// /readyz 200 ready
	// /readyz 503 not ready: mcp: the server is shutting down
	// /healthz 200 ok
}
