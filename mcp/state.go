package mcp

import (
	"bytes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/crypto/chacha20poly1305"

	"github.com/mcpkit/mcpkit/internal/jsonscan"
	"github.com/mcpkit/mcpkit/internal/testkey"
)

// StateKeysEnv is the environment variable that NewServer reads the
// requestState keys from when ServerOptions.State.Keys is empty. Its value is
// parsed by ParseStateKeys.
const StateKeysEnv = "MCPKIT_STATE_KEYS"

// MinStateKeyLen is the minimum length in bytes of a requestState key.
const MinStateKeyLen = 32

// defaultStateTTL is how long a sealed requestState stays valid unless
// ServerOptions.State.TTL says otherwise.
const defaultStateTTL = 10 * time.Minute

// ParseStateKeys parses requestState keys in the text form used by the
// MCPKIT_STATE_KEYS environment variable and by the file given to
// `mcpkit serve --state-key-file`: keys in base64 (standard or URL
// alphabet, padding optional), separated by commas, spaces or newlines;
// a line whose first non-space character is '#' is a comment. Each key must
// decode to at least MinStateKeyLen bytes. The first key seals new state;
// every key opens state, so that keys can be rotated: put the new key first
// and keep the old one after it until the state it sealed has expired.
func ParseStateKeys(text string) ([][]byte, error) {
	var keys [][]byte
	for line := range strings.Lines(text) {
		if strings.HasPrefix(strings.TrimSpace(line), "#") {
			continue
		}
		for field := range strings.FieldsFuncSeq(line, func(r rune) bool {
			return r == ',' || r == ' ' || r == '\t' || r == '\n' || r == '\r'
		}) {
			k, err := decodeKeyText(field)
			if err != nil {
				return nil, fmt.Errorf("state key %d: %w", len(keys)+1, err)
			}
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return nil, errors.New("no state keys found")
	}
	return keys, nil
}

func decodeKeyText(s string) ([]byte, error) {
	raw := strings.TrimRight(s, "=")
	var k []byte
	var err error
	if strings.ContainsAny(raw, "-_") {
		k, err = base64.RawURLEncoding.DecodeString(raw)
	} else {
		k, err = base64.RawStdEncoding.DecodeString(raw)
	}
	if err != nil {
		return nil, fmt.Errorf("not valid base64 (generate one with `head -c 32 /dev/urandom | base64`)")
	}
	if len(k) < MinStateKeyLen {
		return nil, fmt.Errorf("%d bytes; a state key needs at least %d", len(k), MinStateKeyLen)
	}
	return k, nil
}

// stateKey is one derived requestState key.
type stateKey struct {
	id   [4]byte
	aead cipher.AEAD
}

// keyring holds the accepted requestState keys; keys[0] seals.
type keyring struct {
	keys []stateKey
}

func newKeyring(secrets [][]byte) (*keyring, error) {
	if len(secrets) == 0 {
		return nil, errors.New("no keys")
	}
	kr := &keyring{}
	for i, sec := range secrets {
		if len(sec) < MinStateKeyLen {
			return nil, fmt.Errorf("key %d is %d bytes; a state key needs at least %d", i+1, len(sec), MinStateKeyLen)
		}
		ak, err := hkdf.Key(sha256.New, sec, nil, "mcpkit requestState XChaCha20-Poly1305 v1", chacha20poly1305.KeySize)
		if err != nil {
			return nil, err
		}
		aead, err := chacha20poly1305.NewX(ak)
		if err != nil {
			return nil, err
		}
		idb, err := hkdf.Key(sha256.New, sec, nil, "mcpkit requestState key id v1", 4)
		if err != nil {
			return nil, err
		}
		var k stateKey
		copy(k.id[:], idb)
		k.aead = aead
		kr.keys = append(kr.keys, k)
	}
	return kr, nil
}

// docsURL is where the guides live; log messages point there.
const docsURL = "https://github.com/mcpkit/mcpkit/blob/main/docs/"

// sealer seals and opens requestState for one Server.
type sealer struct {
	once sync.Once
	ring *keyring
	ttl  time.Duration
	now  func() time.Time
	log  *slog.Logger
}

// initState configures requestState sealing from the options or the
// environment. It panics on a configuration that would make replicas
// disagree silently (a malformed key), naming what is wrong.
func (s *Server) initState() {
	st := &s.state
	st.log = s.log
	st.now = time.Now
	st.ttl = setting("State.TTL", s.opts.State.TTL, defaultStateTTL)
	secrets := s.opts.State.Keys
	source := "ServerOptions.State.Keys"
	if len(secrets) == 0 {
		if v := os.Getenv(StateKeysEnv); strings.TrimSpace(v) != "" {
			var err error
			if secrets, err = ParseStateKeys(v); err != nil {
				panic("mcp.NewServer: " + StateKeysEnv + ": " + err.Error())
			}
			source = StateKeysEnv
		}
	}
	if len(secrets) > 0 {
		kr, err := newKeyring(secrets)
		if err != nil {
			panic("mcp.NewServer: " + source + ": " + err.Error())
		}
		st.ring = kr
		return
	}
	if reason := sharedBy(&s.opts); reason != "" {
		st.warnShared(reason)
	}
}

// keys returns the keyring, making a random per-process key on first use
// when none was configured, with a line at Info level: a process on its
// own needs no shared key, so the first seal only mentions it. Where a
// missing shared key is a real risk, warnShared has said so at start-up.
func (st *sealer) keys() *keyring {
	st.once.Do(func() {
		if st.ring != nil {
			return
		}
		st.ring = randomKeyring()
		st.log.Info("mcp: sealing requestState with a random per-process key (none configured); "+
			"replicas behind a load balancer need a shared key: set ServerOptions.State.Keys or "+StateKeysEnv,
			"docs", docsURL+"mrtr.md#keys-and-running-several-replicas")
	})
	return st.ring
}

// warnShared makes the random per-process key at once, when none was
// configured, and warns that replicas will not share it, for reason:
// the server is reachable from other hosts, or shares its Bus, sessions
// or tasks with other processes.
func (st *sealer) warnShared(reason string) {
	st.once.Do(func() {
		if st.ring != nil {
			return
		}
		st.ring = randomKeyring()
		st.log.Warn("mcp: no requestState key configured; using a random per-process key. "+
			"Every replica behind a load balancer needs the same key, or a retry that lands on another replica fails; "+
			"set ServerOptions.State.Keys or "+StateKeysEnv, "reason", reason, "docs", docsURL+"mrtr.md#keys-and-running-several-replicas")
	})
}

// useTestKey seals with the fixed key of mcptest, when none was
// configured and nothing was sealed yet, and says nothing.
func (st *sealer) useTestKey() {
	st.once.Do(func() {
		if st.ring != nil {
			return
		}
		sum := sha256.Sum256([]byte("mcptest: the fixed requestState key of test servers"))
		kr, err := newKeyring([][]byte{sum[:]})
		if err != nil {
			panic("mcp: making the test requestState key: " + err.Error())
		}
		st.ring = kr
	})
}

func init() {
	testkey.Use = func(s any) { s.(*Server).state.useTestKey() }
}

// randomKeyring is a keyring of one fresh random key.
func randomKeyring() *keyring {
	sec := make([]byte, 32)
	rand.Read(sec)
	kr, err := newKeyring([][]byte{sec})
	if err != nil {
		panic("mcp: making a requestState key: " + err.Error())
	}
	return kr
}

// sharedBy names what this server shares with other processes (a Bus, a
// SessionStore or a TaskStore other than the in-process ones), or "".
func sharedBy(o *ServerOptions) string {
	var what []string
	if _, local := o.Bus.(*LocalBus); o.Bus != nil && !local {
		what = append(what, "Bus")
	}
	if _, local := o.Legacy.SessionStore.(*MemorySessionStore); o.Legacy.SessionStore != nil && !local && !o.Legacy.Disable {
		what = append(what, "Legacy.SessionStore")
	}
	if _, local := o.Tasks.Store.(*MemoryTaskStore); o.Tasks.Store != nil && !local {
		what = append(what, "Tasks.Store")
	}
	if len(what) == 0 {
		return ""
	}
	return "the server shares its " + strings.Join(what, ", ") + " with other processes"
}

// Method codes of carried answers.
const (
	inputElicit byte = 1
	inputSample byte = 2
	inputRoots  byte = 3
)

func inputMethodName(m byte) string {
	switch m {
	case inputElicit:
		return "elicitation/create"
	case inputSample:
		return "sampling/createMessage"
	case inputRoots:
		return "roots/list"
	}
	return ""
}

// answer is one input response the handler used, carried to later rounds
// inside the sealed state.
type answer struct {
	key    string
	method byte
	value  []byte
}

// statePayload is the plaintext of a sealed requestState.
type statePayload struct {
	expires int64    // unix milliseconds
	binding [32]byte // stateBinding of the request it belongs to
	user    []byte   // the handler's own state (JSON), or nil
	answers []answer
}

const (
	stateVersion  = 1
	stateHeader   = 1 + 4 // version, key id
	stateNonceLen = chacha20poly1305.NonceSizeX
	stateMinLen   = stateHeader + stateNonceLen + chacha20poly1305.Overhead + 8 + 32 + 2
)

// appendPayload encodes p.
func appendPayload(dst []byte, p *statePayload) []byte {
	dst = binary.BigEndian.AppendUint64(dst, uint64(p.expires))
	dst = append(dst, p.binding[:]...)
	dst = binary.AppendUvarint(dst, uint64(len(p.user)))
	dst = append(dst, p.user...)
	dst = binary.AppendUvarint(dst, uint64(len(p.answers)))
	for _, a := range p.answers {
		dst = binary.AppendUvarint(dst, uint64(len(a.key)))
		dst = append(dst, a.key...)
		dst = append(dst, a.method)
		dst = binary.AppendUvarint(dst, uint64(len(a.value)))
		dst = append(dst, a.value...)
	}
	return dst
}

var errPayload = errors.New("malformed state payload")

// decodePayload decodes a payload encoded by appendPayload. It never
// panics and never allocates more than len(b) for the decoded fields.
func decodePayload(b []byte) (*statePayload, error) {
	if len(b) < 8+32 {
		return nil, errPayload
	}
	p := &statePayload{expires: int64(binary.BigEndian.Uint64(b))}
	copy(p.binding[:], b[8:40])
	b = b[40:]
	next := func() ([]byte, bool) {
		n, k := binary.Uvarint(b)
		if k <= 0 || n > uint64(len(b)-k) {
			return nil, false
		}
		v := b[k : k+int(n)]
		b = b[k+int(n):]
		return v, true
	}
	user, ok := next()
	if !ok {
		return nil, errPayload
	}
	if len(user) > 0 {
		p.user = user
	}
	n, k := binary.Uvarint(b)
	if k <= 0 || n > uint64(len(b)) {
		return nil, errPayload
	}
	b = b[k:]
	for range n {
		key, ok := next()
		if !ok || len(b) == 0 {
			return nil, errPayload
		}
		m := b[0]
		b = b[1:]
		if inputMethodName(m) == "" {
			return nil, errPayload
		}
		val, ok := next()
		if !ok {
			return nil, errPayload
		}
		p.answers = append(p.answers, answer{key: string(key), method: m, value: val})
	}
	if len(b) != 0 {
		return nil, errPayload
	}
	return p, nil
}

// seal encrypts and authenticates p with the active key and returns the
// requestState string.
func (kr *keyring) seal(p *statePayload) string {
	k := &kr.keys[0]
	buf := make([]byte, stateHeader+stateNonceLen, stateMinLen+len(p.user)+64)
	buf[0] = stateVersion
	copy(buf[1:5], k.id[:])
	rand.Read(buf[stateHeader:])
	plain := appendPayload(nil, p)
	buf = k.aead.Seal(buf, buf[stateHeader:stateHeader+stateNonceLen], plain, buf[:stateHeader])
	return b64.EncodeToString(buf)
}

// open verifies and decrypts a requestState. It reports only whether the
// state is authentic; binding and expiry are checked by the caller.
func (kr *keyring) open(token string) (*statePayload, bool) {
	if len(token) > b64.EncodedLen(int(maxStateLen)) {
		return nil, false
	}
	// Only the canonical encoding: the decoder skips CR and LF, and a
	// lenient one ignores nonzero trailing bits.
	if strings.ContainsAny(token, "\r\n") {
		return nil, false
	}
	raw, err := b64.Strict().DecodeString(token)
	if err != nil || len(raw) < stateMinLen || raw[0] != stateVersion {
		return nil, false
	}
	nonce := raw[stateHeader : stateHeader+stateNonceLen]
	for i := range kr.keys {
		k := &kr.keys[i]
		if !bytes.Equal(k.id[:], raw[1:5]) {
			continue
		}
		plain, err := k.aead.Open(nil, nonce, raw[stateHeader+stateNonceLen:], raw[:stateHeader])
		if err != nil {
			continue // an id collision between two keys: try the next
		}
		p, err := decodePayload(plain)
		if err != nil {
			return nil, false
		}
		return p, true
	}
	return nil, false
}

// maxStateLen bounds the decoded size of a requestState this server seals
// or accepts. Transports bound request bodies more tightly by default
// (ServerOptions.MaxMessageBytes); this bound holds for any caller of Handle.
const maxStateLen = 16 << 20

// The errors of a requestState that fails verification. All are -32602;
// the handler never runs.
func errStateInvalid() *Error {
	return InvalidParams("Invalid params: requestState failed verification: it was modified or truncated, or it was sealed with a key this server does not accept; send the request again without requestState and inputResponses")
}

func errStateExpired() *Error {
	return InvalidParams("Invalid params: requestState has expired; send the request again without requestState and inputResponses")
}

func errStateMismatch() *Error {
	return InvalidParams("Invalid params: requestState belongs to a different request (its method, parameters or caller differ); send the request again without requestState and inputResponses")
}

// sealState seals the state of one round of the request (method, params)
// made by principal.
func (st *sealer) sealState(method string, params []byte, principal string, user []byte, answers []answer) (string, error) {
	bind, err := stateBinding(method, params, principal)
	if err != nil {
		return "", err
	}
	p := &statePayload{
		expires: st.now().Add(st.ttl).UnixMilli(),
		binding: bind,
		user:    user,
		answers: answers,
	}
	size := len(user)
	for _, a := range answers {
		size += len(a.key) + len(a.value)
	}
	if size > maxStateLen-1024 {
		return "", fmt.Errorf("the request state and carried answers take %d bytes, more than a requestState may hold", size)
	}
	return st.keys().seal(p), nil
}

// openState verifies a requestState presented with the request (method,
// params) by principal: authentic, for this very request, not expired.
func (st *sealer) openState(token, method string, params []byte, principal string) (*statePayload, *Error) {
	p, ok := st.keys().open(token)
	if !ok {
		return nil, errStateInvalid()
	}
	bind, err := stateBinding(method, params, principal)
	if err != nil || bind != p.binding {
		return nil, errStateMismatch()
	}
	if st.now().UnixMilli() >= p.expires {
		return nil, errStateExpired()
	}
	return p, nil
}

// stateBinding digests what identifies a request across its rounds: the
// method, the params other than _meta, inputResponses and requestState (in
// a canonical form: members sorted, values re-encoded, null and {} members
// dropped so that an absent "arguments" equals an empty one), and the
// principal.
func stateBinding(method string, params []byte, principal string) ([32]byte, error) {
	type member struct {
		key string
		val []byte
	}
	var ms []member
	if it, ok := jsonscan.Object(params); ok {
		var m jsonscan.Member
		for it.Next(&m) {
			if m.KeyIs("_meta") || m.KeyIs("inputResponses") || m.KeyIs("requestState") {
				continue
			}
			if k := jsonscan.Kind(m.Value); k == 'n' || (k == '{' && jsonscan.IsEmptyObject(m.Value)) {
				continue
			}
			var key string
			if m.Escaped {
				q := append(append([]byte{'"'}, m.Key...), '"')
				if err := json.Unmarshal(q, &key); err != nil {
					return [32]byte{}, err
				}
			} else {
				key = string(m.Key)
			}
			v, err := canonicalJSON(m.Value)
			if err != nil {
				return [32]byte{}, err
			}
			ms = append(ms, member{key, v})
		}
	}
	slices.SortFunc(ms, func(a, b member) int { return strings.Compare(a.key, b.key) })
	h := sha256.New()
	h.Write([]byte("mcpkit requestState binding v1\x00"))
	writeField := func(b []byte) {
		h.Write(binary.AppendUvarint(nil, uint64(len(b))))
		h.Write(b)
	}
	writeField([]byte(method))
	writeField([]byte(principal))
	for _, m := range ms {
		writeField([]byte(m.key))
		writeField(m.val)
	}
	var sum [32]byte
	h.Sum(sum[:0])
	return sum, nil
}

// canonicalJSON re-encodes a JSON value with sorted object members and no
// insignificant space; numbers keep their text.
func canonicalJSON(v []byte) ([]byte, error) {
	d := json.NewDecoder(bytes.NewReader(v))
	d.UseNumber()
	var x any
	if err := d.Decode(&x); err != nil {
		return nil, err
	}
	return json.Marshal(x)
}

// statePrincipal returns the identity that sealed requestState is bound
// to: the ID of the request's authenticated principal, or "" when the
// request is not authenticated (stdio, or a server without AuthOptions).
func (x *exchange) statePrincipal() string {
	if p := x.info.Principal; p != nil {
		return p.ID()
	}
	return ""
}
