package gosdkserver

import (
	"fmt"
	"net"
	"net/http"
	"os"
)

func listen(h http.Handler, port string) int {
	ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", port))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Fprintf(os.Stderr, "listening on http://%s/\n", ln.Addr())
	if err := http.Serve(ln, h); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}
