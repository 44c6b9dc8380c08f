package mcp

import (
	"bytes"
	"encoding/base64"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

var (
	keyA = []byte("A123456789abcdef0123456789abcdef")
	keyB = []byte("B123456789abcdef0123456789abcdef")
)

// firstRound starts the greet conversation on s and returns its state.
func firstRound(t *testing.T, s *Server, args string) string {
	t.Helper()
	r := mrtrCall(t, s, mrtrReq{tool: "greet", args: args})
	if !r.isIRR() || r.state() == "" {
		t.Fatalf("round 1: %v, want input_required with a requestState", r)
	}
	return r.state()
}

const aliceAnswer = `{"user_name":{"action":"accept","content":{"name":"Alice"}}}`

// TestStateAcrossReplicas: a requestState sealed by one Server is accepted
// by another with the same keys (a replica behind a load balancer) and
// rejected, before the handler runs, by one with other keys, after expiry,
// and on another request.
func TestStateAcrossReplicas(t *testing.T) {
	replica1, _ := mrtrServer(&ServerOptions{State: StateOptions{Keys: [][]byte{keyA}}})
	replica2, _ := mrtrServer(&ServerOptions{State: StateOptions{Keys: [][]byte{keyA}}})
	foreign, runsForeign := mrtrServer(&ServerOptions{State: StateOptions{Keys: [][]byte{keyB}}})
	st := firstRound(t, replica1, `{"greeting":"Hi"}`)

	r := mrtrCall(t, replica2, mrtrReq{tool: "greet", args: `{"greeting":"Hi"}`, state: st, responses: aliceAnswer})
	if !r.isComplete() || r.text() != "Hi, Alice!" {
		t.Fatalf("replica with the same key: %v, want Hi, Alice!", r)
	}

	later, runsLater := mrtrServer(&ServerOptions{State: StateOptions{Keys: [][]byte{keyA}}})
	later.state.now = func() time.Time { return time.Now().Add(defaultStateTTL + time.Second) }
	nearly, _ := mrtrServer(&ServerOptions{State: StateOptions{Keys: [][]byte{keyA}}})
	nearly.state.now = func() time.Time { return time.Now().Add(defaultStateTTL - 5*time.Second) }
	shortTTL, _ := mrtrServer(&ServerOptions{State: StateOptions{Keys: [][]byte{keyA}, TTL: time.Second}})
	stShort := firstRound(t, shortTTL, `{"greeting":"Hi"}`)
	shortTTL.state.now = func() time.Time { return time.Now().Add(2 * time.Second) }

	tests := []struct {
		name    string
		s       *Server
		req     mrtrReq
		wantErr string // substring of the -32602 message, or "" for success
	}{
		{"same keys, arguments re-encoded", replica2, mrtrReq{tool: "greet", args: `{ "greeting" : "Hi" }`, state: st, responses: aliceAnswer}, ""},
		{"just before expiry", nearly, mrtrReq{tool: "greet", args: `{"greeting":"Hi"}`, state: st, responses: aliceAnswer}, ""},
		{"different keys", foreign, mrtrReq{tool: "greet", args: `{"greeting":"Hi"}`, state: st, responses: aliceAnswer}, "failed verification"},
		{"expired", later, mrtrReq{tool: "greet", args: `{"greeting":"Hi"}`, state: st, responses: aliceAnswer}, "expired"},
		{"expired with StateTTL", shortTTL, mrtrReq{tool: "greet", args: `{"greeting":"Hi"}`, state: stShort, responses: aliceAnswer}, "expired"},
		{"different arguments", replica2, mrtrReq{tool: "greet", args: `{"greeting":"Bye"}`, state: st, responses: aliceAnswer}, "different request"},
		{"no arguments", replica2, mrtrReq{tool: "greet", state: st, responses: aliceAnswer}, "different request"},
		{"different tool", replica2, mrtrReq{tool: "steps", state: st}, "different request"},
		{"suffix -TAMPERED", replica2, mrtrReq{tool: "greet", args: `{"greeting":"Hi"}`, state: st + "-TAMPERED", responses: aliceAnswer}, "failed verification"},
		{"truncated", replica2, mrtrReq{tool: "greet", args: `{"greeting":"Hi"}`, state: st[:len(st)-4], responses: aliceAnswer}, "failed verification"},
		{"not base64", replica2, mrtrReq{tool: "greet", args: `{"greeting":"Hi"}`, state: "%%%", responses: aliceAnswer}, "failed verification"},
		{"empty", replica2, mrtrReq{tool: "greet", args: `{"greeting":"Hi"}`, state: "", responses: aliceAnswer}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := mrtrCall(t, tt.s, tt.req)
			if tt.wantErr == "" {
				if !r.isComplete() {
					t.Fatalf("got %v, want a complete result", r)
				}
				return
			}
			if r.err == nil || r.err.Code != -32602 || r.status != 400 || !strings.Contains(r.err.Message, tt.wantErr) {
				t.Fatalf("got %v, want -32602 (HTTP 400) mentioning %q", r, tt.wantErr)
			}
		})
	}
	if runsForeign.Load() != 0 || runsLater.Load() != 0 {
		t.Errorf("a handler ran with a rejected state: foreign %d, expired %d runs", runsForeign.Load(), runsLater.Load())
	}
}

// TestStateTamperNeverReachesHandler flips every byte of a sealed state:
// each variant is rejected and the handler never runs.
func TestStateTamperNeverReachesHandler(t *testing.T) {
	s, runs := mrtrServer(nil)
	st := firstRound(t, s, "")
	raw, err := b64.DecodeString(st)
	if err != nil {
		t.Fatal(err)
	}
	before := runs.Load()
	for i := range raw {
		bad := bytes.Clone(raw)
		bad[i] ^= 0x40
		r := mrtrCall(t, s, mrtrReq{tool: "greet", state: b64.EncodeToString(bad), responses: aliceAnswer})
		if r.err == nil || r.err.Code != -32602 {
			t.Fatalf("byte %d flipped: %v, want -32602", i, r)
		}
	}
	if n := runs.Load() - before; n != 0 {
		t.Errorf("the handler ran %d times with a tampered state", n)
	}
}

// TestStateKeyRotation: the first key seals, every key opens.
func TestStateKeyRotation(t *testing.T) {
	old, _ := mrtrServer(&ServerOptions{State: StateOptions{Keys: [][]byte{keyA}}})
	rotated, _ := mrtrServer(&ServerOptions{State: StateOptions{Keys: [][]byte{keyB, keyA}}})
	newOnly, _ := mrtrServer(&ServerOptions{State: StateOptions{Keys: [][]byte{keyB}}})

	stOld := firstRound(t, old, "")
	if r := mrtrCall(t, rotated, mrtrReq{tool: "greet", state: stOld, responses: aliceAnswer}); !r.isComplete() {
		t.Errorf("state sealed with the old key, opened after rotation: %v", r)
	}
	stNew := firstRound(t, rotated, "")
	if r := mrtrCall(t, newOnly, mrtrReq{tool: "greet", state: stNew, responses: aliceAnswer}); !r.isComplete() {
		t.Errorf("state sealed after rotation, opened with the new key only: %v", r)
	}
	if r := mrtrCall(t, old, mrtrReq{tool: "greet", state: stNew, responses: aliceAnswer}); r.err == nil {
		t.Errorf("state sealed with the new key opened by a server that only has the old one: %v", r)
	}
}

// TestStateBinding checks the binding at the sealer: method, params and
// principal.
func TestStateBinding(t *testing.T) {
	s := NewServer(&ServerOptions{State: StateOptions{Keys: [][]byte{keyA}}})
	params := []byte(`{"name":"t","arguments":{"a":1,"b":[true,null]},"_meta":{"x":1},"inputResponses":{"k":{}},"requestState":"zz"}`)
	tok, err := s.state.sealState("tools/call", params, "alice", []byte(`{"n":1}`), []answer{{key: "k", method: inputRoots, value: []byte(`{"roots":[]}`)}})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name      string
		method    string
		params    string
		principal string
		ok        bool
	}{
		{"same", "tools/call", string(params), "alice", true},
		{"members reordered, _meta and MRTR members differ", "tools/call", `{"_meta":{"y":2},"arguments":{"b":[true,null],"a":1},"name":"t","inputResponses":null}`, "alice", true},
		{"other principal", "tools/call", string(params), "bob", false},
		{"no principal", "tools/call", string(params), "", false},
		{"other method", "prompts/get", string(params), "alice", false},
		{"other name", "tools/call", `{"name":"u","arguments":{"a":1,"b":[true,null]}}`, "alice", false},
		{"other argument value", "tools/call", `{"name":"t","arguments":{"a":2,"b":[true,null]}}`, "alice", false},
		{"extra argument", "tools/call", `{"name":"t","arguments":{"a":1,"b":[true,null],"c":0}}`, "alice", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, e := s.state.openState(tok, tt.method, []byte(tt.params), tt.principal)
			if tt.ok != (e == nil) {
				t.Fatalf("openState error = %v, want ok=%v", e, tt.ok)
			}
			if e != nil {
				if !strings.Contains(e.Message, "different request") {
					t.Errorf("message %q does not say the request differs", e.Message)
				}
				return
			}
			if string(p.user) != `{"n":1}` || len(p.answers) != 1 || p.answers[0].key != "k" {
				t.Errorf("payload did not round-trip: %+v", p)
			}
		})
	}
	// Absent arguments and empty arguments are the same request.
	a, _ := stateBinding("tools/call", []byte(`{"name":"t"}`), "")
	b, _ := stateBinding("tools/call", []byte(`{"name":"t","arguments":{}}`), "")
	c, _ := stateBinding("tools/call", []byte(`{"name":"t","arguments":null}`), "")
	if a != b || a != c {
		t.Errorf("absent, empty and null arguments bind differently")
	}
}

func TestParseStateKeys(t *testing.T) {
	k32 := bytes.Repeat([]byte{0xfb}, 32)
	std := base64.StdEncoding.EncodeToString(k32)
	url := base64.RawURLEncoding.EncodeToString(k32)
	tests := []struct {
		name    string
		text    string
		want    int
		wantErr string
	}{
		{"one", std, 1, ""},
		{"url alphabet", url, 1, ""},
		{"comma list", std + "," + url, 2, ""},
		{"file with comments", "# rotated 2026-11-01\n" + std + "\n\n  # old key\n" + url + "\n", 2, ""},
		{"too short", base64.StdEncoding.EncodeToString(k32[:16]), 0, "16 bytes"},
		{"not base64", "not*base64", 0, "not valid base64"},
		{"empty", " \n# nothing\n", 0, "no state keys"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			keys, err := ParseStateKeys(tt.text)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one mentioning %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || len(keys) != tt.want {
				t.Fatalf("got %d keys, err %v; want %d", len(keys), err, tt.want)
			}
			for _, k := range keys {
				if !bytes.Equal(k, k32) {
					t.Errorf("key %x, want %x", k, k32)
				}
			}
		})
	}
}

// TestStateKeysFromEnv: two servers configured only through the
// environment share their key.
func TestStateKeysFromEnv(t *testing.T) {
	t.Setenv(StateKeysEnv, base64.StdEncoding.EncodeToString(keyA))
	a := NewServer(nil)
	b := NewServer(nil)
	kr, err := newKeyring([][]byte{keyA})
	if err != nil {
		t.Fatal(err)
	}
	tok := kr.seal(&statePayload{expires: time.Now().Add(time.Minute).UnixMilli()})
	for _, s := range []*Server{a, b} {
		if _, ok := s.state.keys().open(tok); !ok {
			t.Errorf("a server configured by %s cannot open a state sealed with that key", StateKeysEnv)
		}
	}

	t.Setenv(StateKeysEnv, "c2hvcnQ=")
	defer func() {
		if r := recover(); r == nil || !strings.Contains(r.(string), StateKeysEnv) {
			t.Errorf("NewServer with a malformed %s: panic %v, want one naming the variable", StateKeysEnv, r)
		}
	}()
	NewServer(nil)
}

// TestRandomStateKeyWarns: without configured keys the server makes its own
// key on first use and says once, at Info level, that replicas need a
// shared one.
func TestRandomStateKeyWarns(t *testing.T) {
	t.Setenv(StateKeysEnv, "")
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	s1, _ := mrtrServer(&ServerOptions{Logger: log})
	s1.state.ring = nil // drop the test key: as if none was configured
	s2 := NewServer(&ServerOptions{Logger: log})
	if logs.Len() != 0 {
		t.Fatalf("logged before any state was sealed: %s", logs.String())
	}
	st := firstRound(t, s1, "")
	firstRound(t, s1, "")
	if n := strings.Count(logs.String(), "level=INFO"); n != 1 || !strings.Contains(logs.String(), "State.Keys") || strings.Contains(logs.String(), "level=WARN") {
		t.Errorf("want one Info line naming State.Keys, got:\n%s", logs.String())
	}
	if _, ok := s2.state.keys().open(st); ok {
		t.Errorf("two servers with random keys share them")
	}
	if r := mrtrCall(t, s1, mrtrReq{tool: "greet", state: st, responses: aliceAnswer}); !r.isComplete() {
		t.Errorf("the random key does not open its own state: %v", r)
	}
}

func TestStatePayloadRoundTrip(t *testing.T) {
	p := &statePayload{
		expires: 1234567890123,
		binding: [32]byte{1, 2, 3},
		user:    []byte(`{"x":"y"}`),
		answers: []answer{
			{key: "a", method: inputElicit, value: []byte(`{"action":"accept"}`)},
			{key: "ключ", method: inputSample, value: []byte(`{}`)},
			{key: "", method: inputRoots, value: nil},
		},
	}
	got, err := decodePayload(appendPayload(nil, p))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(p, got, cmp.AllowUnexported(statePayload{}, answer{}), cmp.Comparer(func(a, b []byte) bool { return bytes.Equal(a, b) })); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
}

// FuzzOpenState feeds arbitrary strings to the requestState decoder: it
// must never panic, and whatever it accepts must be the one payload sealed
// with its keys (fuzzing runs in several processes, so the sealed token
// itself differs from process to process).
func FuzzOpenState(f *testing.F) {
	kr, err := newKeyring([][]byte{keyA, keyB})
	if err != nil {
		f.Fatal(err)
	}
	sealed := &statePayload{expires: 1, user: []byte(`{}`), answers: []answer{{key: "k", method: inputElicit, value: []byte(`{"action":"accept"}`)}}}
	good := kr.seal(sealed)
	f.Add(good)
	f.Add(good + "-TAMPERED")
	f.Add(good[:len(good)/2])
	f.Add("")
	f.Add("AQ")
	f.Add(good + "\n")
	f.Add(good[:10] + "\r\n" + good[10:])
	f.Fuzz(func(t *testing.T, tok string) {
		p, ok := kr.open(tok)
		if !ok {
			return
		}
		if tok != good {
			t.Fatalf("opened %q, another encoding of %q: only the canonical one is accepted", tok, good)
		}
		if diff := cmp.Diff(sealed, p, cmp.AllowUnexported(statePayload{}, answer{})); diff != "" {
			t.Fatalf("opened a state it did not seal: %q:\n%s", tok, diff)
		}
	})
}

// FuzzDecodeStatePayload feeds arbitrary plaintexts to the payload decoder
// (what an attacker with a key could seal): no panic, and what decodes
// re-encodes to something that decodes the same.
func FuzzDecodeStatePayload(f *testing.F) {
	f.Add(appendPayload(nil, &statePayload{expires: 5, user: []byte(`{"a":1}`), answers: []answer{{key: "k", method: inputRoots, value: []byte(`{"roots":[]}`)}}}))
	f.Add(appendPayload(nil, &statePayload{}))
	f.Add(make([]byte, 41))
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := decodePayload(b)
		if err != nil {
			return
		}
		q, err := decodePayload(appendPayload(nil, p))
		if err != nil {
			t.Fatalf("re-encoded payload does not decode: %v", err)
		}
		if diff := cmp.Diff(p, q, cmp.AllowUnexported(statePayload{}, answer{}), cmp.Comparer(func(a, b []byte) bool { return bytes.Equal(a, b) })); diff != "" {
			t.Fatalf("re-decoded payload differs:\n%s", diff)
		}
	})
}

func BenchmarkStateSealOpen(b *testing.B) {
	s := NewServer(&ServerOptions{State: StateOptions{Keys: [][]byte{keyA}}})
	params := []byte(`{"name":"greet","arguments":{"greeting":"Hi"},"_meta":{}}`)
	answers := []answer{{key: "user_name", method: inputElicit, value: []byte(`{"action":"accept","content":{"name":"Alice"}}`)}}
	b.ReportAllocs()
	for b.Loop() {
		tok, err := s.state.sealState("tools/call", params, "", []byte(`{"step":1}`), answers)
		if err != nil {
			b.Fatal(err)
		}
		if _, e := s.state.openState(tok, "tools/call", params, ""); e != nil {
			b.Fatal(e)
		}
	}
}

// BenchmarkInputRequiredRoundTrip measures both rounds of an elicitation
// through Handle.
func BenchmarkInputRequiredRoundTrip(b *testing.B) {
	s, _ := mrtrServer(nil)
	b.ReportAllocs()
	for b.Loop() {
		r := mrtrCall(b, s, mrtrReq{tool: "greet"})
		r2 := mrtrCall(b, s, mrtrReq{tool: "greet", state: r.state(), responses: aliceAnswer})
		if !r2.isComplete() {
			b.Fatal(r2)
		}
	}
}

// TestRandomStateKeyWarnsAtStartup: NewHTTPServer on an address that is not loopback-only,
// the start of an HTTP server other hosts reach, logs the random-key warning at once, with a
// URL of the docs, and only once; a server with a key logs nothing.
func TestRandomStateKeyWarnsAtStartup(t *testing.T) {
	t.Setenv(StateKeysEnv, "")
	var logs bytes.Buffer
	s := NewServer(&ServerOptions{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	s.NewHTTPServer(":0", "/mcp")
	s.NewHTTPServer(":0", "/other")
	if n := strings.Count(logs.String(), "level=WARN"); n != 1 {
		t.Fatalf("want one warning at startup, got %d:\n%s", n, logs.String())
	}
	if !strings.Contains(logs.String(), "docs=https://") || !strings.Contains(logs.String(), "mrtr.md#keys-and-running-several-replicas") {
		t.Errorf("the warning does not point to a URL of the docs:\n%s", logs.String())
	}

	logs.Reset()
	key := bytes.Repeat([]byte{7}, 32)
	keyed := NewServer(&ServerOptions{Logger: slog.New(slog.NewTextHandler(&logs, nil)), State: StateOptions{Keys: [][]byte{key}}})
	keyed.NewHTTPServer("127.0.0.1:0", "/mcp")
	if logs.Len() != 0 {
		t.Errorf("a server with a key logged: %s", logs.String())
	}
}

// TestStateCanonicalOnly: a requestState is accepted only in the encoding
// the server wrote, not with line breaks (which the base64 decoder skips)
// or other trailing bits.
func TestStateCanonicalOnly(t *testing.T) {
	kr, err := newKeyring([][]byte{keyA})
	if err != nil {
		t.Fatal(err)
	}
	good := kr.seal(&statePayload{expires: 1})
	if _, ok := kr.open(good); !ok {
		t.Fatal("the sealed state does not open")
	}
	last := good[len(good)-1]
	alt := strings.IndexByte("AEIMQUYcgkosw048", last) // 2 spare bits when len%4 == 3, else 4
	variants := []string{good + "\n", good + "\r\n", good[:5] + "\n" + good[5:]}
	if alt >= 0 && len(good)%4 == 3 {
		variants = append(variants, good[:len(good)-1]+string(b64Alphabet[strings.IndexByte(b64Alphabet, last)+1]))
	}
	for _, v := range variants {
		if _, ok := kr.open(v); ok {
			t.Errorf("accepted %q, not the canonical encoding", v)
		}
	}
}

const b64Alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
