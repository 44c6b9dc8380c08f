package client

import (
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSSEReader(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []Event
	}{
		{"one event", "event: message\ndata: {}\n\n", []Event{{Name: "message", Data: []byte("{}")}}},
		{"default name", "data: x\n\n", []Event{{Name: "message", Data: []byte("x")}}},
		{"multi-line data", "data: a\ndata: b\n\n", []Event{{Name: "message", Data: []byte("a\nb")}}},
		{"CRLF and CR", "event: endpoint\r\ndata: /m?s=1\r\r\ndata: y\r\n\r\n", []Event{
			{Name: "endpoint", Data: []byte("/m?s=1")},
			{Name: "message", Data: []byte("y")},
		}},
		{"comments and keep-alives", ":\n\n: ping\ndata: z\n\n", []Event{{Name: "message", Data: []byte("z")}}},
		{"no space after colon", "data:z\n\n", []Event{{Name: "message", Data: []byte("z")}}},
		{"id kept", "id: 7\ndata: z\n\n", []Event{{Name: "message", Data: []byte("z"), ID: "7"}}},
		{"event without data is not dispatched", "event: endpoint\n\ndata: z\n\n", []Event{{Name: "message", Data: []byte("z")}}},
		{"unterminated event dropped", "data: a\n\ndata: b", []Event{{Name: "message", Data: []byte("a")}}},
		{"BOM", "\xef\xbb\xbfdata: a\n\n", []Event{{Name: "message", Data: []byte("a")}}},
		{"empty data line", "data\n\n", []Event{{Name: "message", Data: []byte("")}}},
		{"retry kept", "id: e1\nretry: 500\ndata: \n\n", []Event{{Name: "message", Data: []byte(""), ID: "e1", Retry: 500}}},
		{"bad retry ignored", "retry: 5x\ndata: a\n\n", []Event{{Name: "message", Data: []byte("a")}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newSSEReader(strings.NewReader(tt.in))
			var got []Event
			for {
				ev, err := r.Next()
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				if ev.Data == nil {
					ev.Data = []byte{}
				}
				got = append(got, ev)
			}
			for i := range tt.want {
				if tt.want[i].Data == nil {
					tt.want[i].Data = []byte{}
				}
				if tt.want[i].Retry == 0 {
					tt.want[i].Retry = -1
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSSEReaderBoundsEvents(t *testing.T) {
	big := "data: " + strings.Repeat("x", maxEventBytes+1) + "\n\n"
	_, err := newSSEReader(strings.NewReader(big)).Next()
	if !errors.Is(err, errEventTooLarge) {
		t.Fatalf("Next on an oversized event = %v, want errEventTooLarge", err)
	}
}

// FuzzSSEReader checks that any byte stream is read without panics or
// endless loops, and that every event's data came from a data field.
func FuzzSSEReader(f *testing.F) {
	f.Add("event: message\ndata: {}\n\n")
	f.Add("data: a\r\ndata: b\r\r\n:c\n\nid: 1\n")
	f.Add("\xef\xbb\xbfevent\ndata\n\n")
	f.Fuzz(func(t *testing.T, in string) {
		r := newSSEReader(strings.NewReader(in))
		for i := 0; ; i++ {
			if i > len(in)+1 {
				t.Fatalf("more events than bytes")
			}
			ev, err := r.Next()
			if err != nil {
				return
			}
			if ev.Name == "" {
				t.Fatalf("event without a name")
			}
			if len(ev.Data) > len(in) {
				t.Fatalf("data longer than the input")
			}
		}
	})
}

// FuzzDiscoverAndHeaders checks the decoders of what a server says about
// itself, and of the x-mcp-header mirroring, on any input.
func FuzzDiscoverAndHeaders(f *testing.F) {
	f.Add(`{"supportedVersions":["2026-07-28"],"capabilities":{},"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"x","version":"1"}}}`, `{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"A"}}}`, `{"a":"v"}`)
	f.Add(`{"supportedVersions":"no"}`, `{"properties":{"n":{"type":"integer","x-mcp-header":"N"}}}`, `{"n":1e3}`)
	f.Fuzz(func(t *testing.T, discover, schema, args string) {
		if d, err := ParseDiscoverResult([]byte(discover)); err == nil && d == nil {
			t.Fatal("no description and no error")
		}
		h, err := ParamHeaders([]byte(schema), []byte(args))
		if err == nil {
			for k, vs := range h {
				for _, v := range vs {
					if strings.ContainsAny(v, "\r\n\x00") {
						t.Fatalf("header %s carries a control character: %q", k, v)
					}
				}
			}
		}
	})
}
