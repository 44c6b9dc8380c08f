package load

import (
	"bufio"
	"net"
	"strings"
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
		{"a line without end", "data: " + strings.Repeat("x", maxReplicaLine), "an event line longer than"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			client, server := net.Pipe()
			defer client.Close()
			go func() {
				server.Write([]byte(tc.stream))
				server.Close()
			}()
			rd := &replicaReader{s: &listenStream{id: 7, conn: client, events: bufio.NewReader(client)}, at: make([]time.Time, 1), want: listChangedFor(7)}
			tally := newReplicaTally()
			tally.target.Store(1)
			rd.read(tally)
			select {
			case err := <-tally.errc:
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
	tally := newReplicaTally()
	tally.target.Store(1)
	rd.read(tally)
	if n := rd.seen.Load(); n != 1 || tally.received.Load() != 1 || rd.at[0].IsZero() {
		t.Errorf("seen %d, received %d, stamped %v: want 1, 1 and a time", n, tally.received.Load(), rd.at[0])
	}
	select {
	case <-tally.complete:
	default:
		t.Error("no completion signalled at the target")
	}
	if err := <-tally.errc; !strings.Contains(err.Error(), "EOF") { // the stream's end
		t.Errorf("error %q at the end of the stream, want EOF", err)
	}
}

// TestReplicaReaderSplitReads feeds a notification one byte at a time, as
// a socket may deliver it, and in one piece with a keep-alive around it.
func TestReplicaReaderSplitReads(t *testing.T) {
	ev := ": keep-alive\n\nevent: message\r\ndata: " + string(listChangedFor(5)) + "\r\n\r\n: keep-alive\n\n"
	for _, step := range []int{1, 7, len(ev)} {
		rd := &replicaReader{s: &listenStream{id: 5}, at: make([]time.Time, 1), want: listChangedFor(5)}
		total := 0
		for i := 0; i < len(ev); i += step {
			n, err := rd.feed([]byte(ev[i:min(i+step, len(ev))]), time.Now())
			if err != nil {
				t.Fatalf("step %d: %v", step, err)
			}
			total += n
		}
		if total != 1 || rd.seen.Load() != 1 {
			t.Errorf("step %d: %d notifications counted, seen %d: want 1", step, total, rd.seen.Load())
		}
	}
}
