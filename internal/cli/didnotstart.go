package cli

import (
	"fmt"
	"strings"

	"github.com/mcpkit/mcpkit/client"
)

// didNotStart reports whether the stdio server of the failed Connect ce exited by itself
// without answering any request, and if so returns the message that says so: its exit status
// and the end of its stderr, one line each, indented by two spaces.
func didNotStart(ce *client.ConnectError) (string, bool) {
	if ce.Exit == nil || ce.Exit.Forced != "" || ce.Kind == client.Incompatible {
		return "", false // not a process, or silent until it was ended: it did start
	}
	for _, st := range ce.Steps {
		if st.Latency > 0 {
			return "", false // something answered
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "the server exited with status %d before it answered any request", ce.Exit.Code)
	if _, stderr, ok := strings.Cut(ce.Error(), "its stderr ends with:\n"); ok {
		b.WriteString("; its stderr ends with:")
		for _, l := range strings.Split(strings.TrimRight(stderr, "\n"), "\n") {
			b.WriteString("\n  " + strings.TrimSpace(l))
		}
	} else {
		b.WriteString("; it wrote nothing to stderr")
	}
	return b.String(), true
}
