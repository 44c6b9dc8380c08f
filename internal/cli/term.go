package cli

import (
	"fmt"
	"io"
	"net/url"
	"os"
	"strings"
	"unicode"
	"unicode/utf8"
)

// termSafe returns s made harmless for a terminal: every rune that could
// move the cursor, erase or recolour text, reorder it or hide itself is
// replaced by a visible escape (\x1b, \u202e, \xff for a byte that is not
// UTF-8): C0 and C1 controls and DEL (newline and tab are kept when
// multiline), bidi controls and the other format characters (Unicode
// category Cf: zero-width spaces and joiners, soft hyphen), and line and
// paragraph separators. Server strings go through it before the CLI
// prints them for a person to read.
func termSafe(s string, multiline bool) string {
	i := 0
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		if unsafeRune(r, n, multiline) {
			break
		}
		i += n
	}
	if i == len(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	b.WriteString(s[:i])
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case unsafeRune(r, n, multiline) && r < 0x100:
			fmt.Fprintf(&b, `\x%02x`, r)
		case unsafeRune(r, n, multiline):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// unsafeRune reports whether the rune r, n bytes long, must not reach a
// terminal as it is.
func unsafeRune(r rune, n int, multiline bool) bool {
	switch {
	case r == utf8.RuneError && n == 1:
		return true
	case r == '\n' || r == '\t':
		return !multiline
	case r < 0x20 || (r >= 0x7f && r < 0xa0):
		return true
	case r == '\u2028' || r == '\u2029':
		return true
	}
	return unicode.Is(unicode.Cf, r)
}

// describeURL shows a URL a server asks the user to open: the URL itself
// (termSafe), then its host on a line of its own, so that the user sees
// where it leads, with a warning when the host is not plain (punycode,
// xn--, can imitate another name; an IP address or user info are shown as
// they are).
func describeURL(raw string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "  %s\n", termSafe(raw, false))
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		b.WriteString("  warning: this is not a valid web address with a host (it may hold characters a URL cannot): do not open it\n")
		return b.String()
	}
	host := u.Hostname()
	fmt.Fprintf(&b, "  host: %s\n", termSafe(host, false))
	if u.User != nil {
		fmt.Fprintf(&b, "  warning: the URL carries user info (%s@) before the host, which can make it look like another site\n", termSafe(u.User.Username(), false))
	}
	if idn(host) {
		b.WriteString("  warning: the host is an internationalized name (punycode, xn--), which can imitate another site's name\n")
	}
	if u.Scheme != "https" {
		fmt.Fprintf(&b, "  warning: the URL is not https (%s)\n", termSafe(u.Scheme, false))
	}
	return b.String()
}

// idn reports whether host is an internationalized name: a label in
// punycode (xn--) or a character outside ASCII.
func idn(host string) bool {
	for _, r := range host {
		if r >= utf8.RuneSelf {
			return true
		}
	}
	for label := range strings.SplitSeq(strings.ToLower(host), ".") {
		if strings.HasPrefix(label, "xn--") {
			return true
		}
	}
	return false
}

// forTerminal returns s made harmless (termSafe, multiline) when w is a
// terminal, and s as it is otherwise: content printed to a pipe or a file
// stays byte for byte what the server sent.
func forTerminal(w io.Writer, s string) string {
	if f, ok := w.(*os.File); ok {
		if fi, err := f.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
			return termSafe(s, true)
		}
	}
	return s
}
