// Command gosdk-server runs one of the go-sdk servers of the interop tests:
//
//	go run ./cmd/gosdk-server MODE [PORT]
//
// MODE is http-stateless, http-stateful, http-legacy, sse, stdio or
// stdio-legacy. HTTP modes listen on 127.0.0.1.
package main

import (
	"os"

	"github.com/mcpkit/mcpkit/interop/gosdkserver"
)

func main() { os.Exit(gosdkserver.Main(os.Args[1:])) }
