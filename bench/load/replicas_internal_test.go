package load

import (
	"bufio"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestReplicaReaderRejects feeds one reader of the replicas case a stream
// that misbehaves and checks that the run would fail, not report a time.
func TestReplicaReaderRejects(t *testing.T) {
	event := func(data string) string { return "event: message\ndata: " + data + "\n\n" }
	good := string(listChangedFor(7))
	for _, tc := range []struct {
		name, stream, want string
	}{
		{"two notifications for one change", event(good) + event(good), "2 notifications for 1 changes"},
		{"another subscription's id", event(strings.Replace(good, ":7}", ":8}", 1)), "subscriptionId is 8, want 7"},
		{"another notification", event(`{"jsonrpc":"2.0","method":"notifications/prompts/list_changed","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":7}}}`), "want notifications/tools/list_changed"},
		{"the stream ends", "", "reading the stream: EOF"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			client, server := net.Pipe()
			defer client.Close()
			go func() {
				server.Write([]byte(tc.stream))
				server.Close()
			}()
			rd := &replicaReader{s: &listenStream{id: 7, conn: client, events: bufio.NewReader(client)}, at: make([]time.Time, 1), want: listChangedFor(7)}
			var received, target atomic.Int64
			target.Store(1)
			errc := make(chan error, 1)
			rd.read(&received, &target, make(chan struct{}, 1), errc)
			select {
			case err := <-errc:
				if !strings.Contains(err.Error(), tc.want) {
					t.Errorf("error %q, want it to contain %q", err, tc.want)
				}
			default:
				t.Errorf("no error, want one containing %q", tc.want)
			}
		})
	}
}

// TestReplicaReaderCounts checks that a well-behaved stream is stamped
// and counted, and signals completion at the target.
func TestReplicaReaderCounts(t *testing.T) {
	client, server := net.Pipe()
	defer client.Close()
	go func() {
		server.Write([]byte(": keep-alive\n\nevent: message\ndata: " + string(listChangedFor(3)) + "\n\n"))
		server.Close()
	}()
	rd := &replicaReader{s: &listenStream{id: 3, conn: client, events: bufio.NewReader(client)}, at: make([]time.Time, 2), want: listChangedFor(3)}
	var received, target atomic.Int64
	target.Store(1)
	complete := make(chan struct{}, 1)
	errc := make(chan error, 1)
	rd.read(&received, &target, complete, errc)
	if n := rd.seen.Load(); n != 1 || received.Load() != 1 || rd.at[0].IsZero() {
		t.Errorf("seen %d, received %d, stamped %v: want 1, 1 and a time", n, received.Load(), rd.at[0])
	}
	select {
	case <-complete:
	default:
		t.Error("no completion signalled at the target")
	}
	if err := <-errc; !strings.Contains(err.Error(), "EOF") { // the stream's end
		t.Errorf("error %q at the end of the stream, want EOF", err)
	}
}
