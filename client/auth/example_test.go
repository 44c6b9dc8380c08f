package auth_test

import (
	"fmt"
	"os/exec"
	"path/filepath"

	"github.com/mcpkit/mcpkit/client/auth"
)

// A command-line client that logs in through the browser when the server
// asks, and keeps its tokens in a file only the user can read.
func ExampleNewTransport() {
	login, err := auth.NewLoopback("", func(u string) error {
		return exec.Command("xdg-open", u).Start()
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer login.Close()
	tr, err := auth.NewTransport("https://mcp.example.com/mcp", &auth.Options{
		Interaction:       login,
		ClientMetadataURL: "https://app.example.com/oauth/client.json",
		Store:             &auth.FileStore{Path: filepath.Join("/home/me/.config/app", "tokens.json")},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	httpClient := tr.Client() // give it to the MCP client
	_ = httpClient
	fmt.Println("ready")
	// Output: ready
}
