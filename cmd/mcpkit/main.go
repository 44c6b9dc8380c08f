package main

//go:generate go test ../../internal/cli -run TestPackageDoc -update

import (
	"os"

	"github.com/mcpkit/mcpkit/internal/cli"
)

func main() {
	os.Exit(cli.Run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr, nil))
}
