package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"

	"github.com/mcpkit/mcpkit/client/auth"
)

// loginFlags are the OAuth flags of the client commands (--auth).
type loginFlags struct {
	auth              bool
	clientMetadataURL string
	clientID          string
	stderr            io.Writer // where sign-in prompts go; default os.Stderr
}

func (l *loginFlags) register(fs *flag.FlagSet) {
	fs.BoolVar(&l.auth, "auth", false, "log in when the server asks (OAuth, in the browser); tokens are kept per server in "+displayTokenFile()+" (forget them with mcpkit logout URL)")
	fs.StringVar(&l.clientMetadataURL, "client-metadata-url", "", "with --auth: the https `URL` of this client's Client ID Metadata Document, used as its client_id where the authorization server supports it (otherwise the client registers itself)")
	fs.StringVar(&l.clientID, "client-id", "", "with --auth: a pre-registered OAuth client `ID` (its secret, if any, from $MCPKIT_CLIENT_SECRET)")
}

// check reports flag combinations that make no sense.
func (l *loginFlags) check(isHTTP bool) error {
	if !l.auth && (l.clientMetadataURL != "" || l.clientID != "") {
		return errors.New("--client-metadata-url and --client-id need --auth")
	}
	if l.auth && !isHTTP {
		return errors.New("--auth applies to HTTP only; a stdio server takes its credentials from its environment")
	}
	return nil
}

// tokenFile is where the CLI keeps tokens: mcpkit/tokens.json in the
// user's configuration directory.
func tokenFile() (string, error) {
	dir, err := os.UserConfigDir()
	if err != nil {
		return "", fmt.Errorf("no configuration directory for the token file: %w", err)
	}
	return filepath.Join(dir, "mcpkit", "tokens.json"), nil
}

func displayTokenFile() string {
	if runtime.GOOS == "linux" {
		return "$XDG_CONFIG_HOME/mcpkit/tokens.json (~/.config/mcpkit)"
	}
	return "the user's configuration directory (mcpkit/tokens.json)"
}

// openBrowser shows the sign-in page; tests replace it.
var openBrowser = func(u string) error {
	var cmd *exec.Cmd
	switch runtime.GOOS {
	case "darwin":
		cmd = exec.Command("open", u)
	case "windows":
		cmd = exec.Command("rundll32", "url.dll,FileProtocolHandler", u)
	default:
		cmd = exec.Command("xdg-open", u)
	}
	cmd.Stdout, cmd.Stderr = nil, nil
	if err := cmd.Start(); err != nil {
		return err
	}
	go cmd.Wait()
	return nil
}

// lazyLoopback starts the redirect receiver only when a login happens.
type lazyLoopback struct {
	stderr io.Writer
	once   sync.Once
	l      *auth.Loopback
	err    error
}

func (z *lazyLoopback) start() {
	z.once.Do(func() {
		z.l, z.err = auth.NewLoopback("", func(u string) error {
			fmt.Fprintf(z.stderr, "mcpkit: the server asks you to sign in; opening your browser at:\n%s", describeURL(u))
			return openBrowser(u)
		})
		if z.l != nil {
			z.l.OnOpenError = func(string, error) {
				fmt.Fprintln(z.stderr, "mcpkit: could not start a browser; open the URL above yourself")
			}
		}
	})
}

func (z *lazyLoopback) RedirectURL() string {
	z.start()
	if z.l == nil {
		return "http://127.0.0.1/callback"
	}
	return z.l.RedirectURL()
}

func (z *lazyLoopback) Authorize(ctx context.Context, authURL string) (url.Values, error) {
	z.start()
	if z.err != nil {
		return nil, z.err
	}
	return z.l.Authorize(ctx, authURL)
}

func (z *lazyLoopback) Close() {
	if z.l != nil {
		z.l.Close()
	}
}

// httpClient returns the HTTP client that logs in to serverURL, and the
// function that releases it.
func (l *loginFlags) httpClient(serverURL string, stderr io.Writer) (*http.Client, func(), error) {
	path, err := tokenFile()
	if err != nil {
		return nil, nil, err
	}
	if stderr == nil {
		stderr = os.Stderr
	}
	lb := &lazyLoopback{stderr: stderr}
	opts := auth.Options{
		Interaction:       lb,
		ClientMetadataURL: l.clientMetadataURL,
		ClientName:        "mcpkit CLI",
		Store:             &auth.FileStore{Path: path},
	}
	if l.clientID != "" {
		opts.Client = &auth.Client{ID: l.clientID, Secret: os.Getenv("MCPKIT_CLIENT_SECRET")}
	}
	tr, err := auth.NewTransport(serverURL, &opts)
	if err != nil {
		return nil, nil, err
	}
	return tr.Client(), lb.Close, nil
}

// logoutCommand is `mcpkit logout URL`.
var logoutCommand = &Command{
	UsageLine: "logout URL",
	Short:     "forget the tokens and client registration --auth keeps for a server",
	Long: `Forgets the OAuth tokens and client registrations kept for the MCP server at URL
(see --auth of discover, call and the lists).
`,
	Flag:   func(fs *flag.FlagSet) Runner { return logout },
	Exits:  exitsLocal,
	Failed: "the token file cannot be read or written",
}

// logout runs `mcpkit logout URL`.
func logout(inv *invocation) int {
	stdout, stderr := inv.stdout, inv.stderr
	if len(inv.args) != 1 || inv.dash {
		return inv.usageError("give one server URL")
	}
	target := inv.args[0]
	path, err := tokenFile()
	if err != nil {
		fmt.Fprintf(stderr, "mcpkit logout: %v\n", err)
		return exitFailed
	}
	st := &auth.FileStore{Path: path}
	e, err := st.Load(context.Background(), target)
	if err != nil {
		fmt.Fprintf(stderr, "mcpkit logout: %v\n", err)
		return exitFailed
	}
	if e == nil {
		fmt.Fprintf(stdout, "no tokens kept for %s\n", target)
		return exitOK
	}
	if err := st.Delete(context.Background(), target); err != nil {
		fmt.Fprintf(stderr, "mcpkit logout: %v\n", err)
		return exitFailed
	}
	fmt.Fprintf(stdout, "forgot the tokens for %s\n", target)
	return exitOK
}
