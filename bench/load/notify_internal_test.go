package load

import (
	"bufio"
	"net"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// TestNotifyWatch runs the fan-out cases' reader on streams that behave
// and on streams that misbehave: a run must fail, not report a time, when
// a listener gets two notifications for one change, none, one with another
// subscription's id or another method, or when its stream ends.
func TestNotifyWatch(t *testing.T) {
	event := func(data string) string { return "event: message\ndata: " + data + "\n\n" }
	good := func(id int) string {
		return `{"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":` + strconv.Itoa(id) + `}}}`
	}
	const streams = 3
	for _, tc := range []struct {
		name string
		// send returns what stream id (1 to streams) gets for one change.
		send func(id int) string
		// change is the error of the change, quiet the error of the quiet
		// window after it, during which stream 3 gets a second
		// notification if quiet is set; "" for none.
		change, quiet string
	}{
		{"one each", func(id int) string { return ":\n\n" + event(good(id)) }, "", ""},
		{"two for one change", func(id int) string {
			if id == 2 {
				return event(good(id)) + event(good(id))
			}
			return event(good(id))
		}, "listener 2 received two notifications for one change", ""},
		{"a late second one", func(id int) string { return event(good(id)) }, "", "listener 3 received two notifications for one change"},
		{"none", func(id int) string {
			if id == 1 {
				return ":\n\n"
			}
			return event(good(id))
		}, "2 of 3 listeners received notifications/tools/list_changed within 1s", ""},
		{"another subscription's id", func(id int) string { return event(good(id%streams + 1)) }, "subscriptionId is", ""},
		{"another notification", func(id int) string {
			return event(strings.Replace(good(id), "tools/list_changed", "prompts/list_changed", 1))
		}, "want notifications/tools/list_changed", ""},
		{"the stream ends", func(id int) string { return "" }, "reading the stream: EOF", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var ss []*listenStream
				var servers []net.Conn
				for id := 1; id <= streams; id++ {
					client, server := net.Pipe()
					defer client.Close()
					defer server.Close()
					ss = append(ss, &listenStream{id: id, conn: client, events: bufio.NewReader(client)})
					servers = append(servers, server)
				}
				w := watchNotifications(ss)
				defer w.close()
				_, delays, err := w.change(1, time.Second, func() error {
					for i, c := range servers {
						go func() {
							out := tc.send(i + 1)
							c.Write([]byte(out))
							if out == "" {
								c.Close()
							}
						}()
					}
					return nil
				})
				if !matches(err, tc.change) {
					t.Fatalf("change: error %v, want %q", err, tc.change)
				}
				if err != nil {
					return
				}
				if len(delays) != streams {
					t.Fatalf("%d delivery times, want %d", len(delays), streams)
				}
				if tc.quiet != "" {
					go servers[2].Write([]byte(event(good(3))))
				}
				if err := w.quiet(200 * time.Millisecond); !matches(err, tc.quiet) {
					t.Fatalf("quiet: error %v, want %q", err, tc.quiet)
				}
			})
		})
	}
}

// matches reports whether err is nil and want empty, or err's message
// contains want.
func matches(err error, want string) bool {
	if err == nil || want == "" {
		return (err == nil) == (want == "")
	}
	return strings.Contains(err.Error(), want)
}
