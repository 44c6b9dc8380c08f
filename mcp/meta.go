package mcp

import (
	"bytes"
	"encoding/json"
	"hash/maphash"
	"math"
	"net/http"
	"strings"
	"sync/atomic"
	"unicode/utf8"

	"github.com/mcpkit/mcpkit/internal/jsonscan"

	"github.com/mcpkit/mcpkit/internal/protocol"
	"github.com/mcpkit/mcpkit/internal/wire"
)

// RequestInfo is what a request said about itself in its _meta, plus what
// the transport saw. Handlers receive it with every request; it is read-only.
type RequestInfo struct {
	// ProtocolVersion is the revision the request speaks.
	ProtocolVersion string
	// ClientInfo is the client's self-reported identity, every field it
	// sent; zero when the request did not carry one. Requests that carry
	// the same clientInfo share its Icons: treat them as read-only, like
	// the rest of RequestInfo.
	ClientInfo Implementation
	// ClientCapabilities are the capabilities declared on this request.
	// Nothing may be inferred from earlier requests.
	ClientCapabilities ClientCapabilities
	// LogLevel is the minimum level the client wants log notifications for,
	// or "" when it wants none.
	LogLevel LogLevel
	// Header holds the HTTP request headers on Streamable HTTP; nil on
	// stdio. On a server with AuthOptions the Authorization header has
	// been removed: use Principal.
	Header http.Header
	// Principal is the caller as its verified access token describes it,
	// on a server with AuthOptions; nil on stdio, on public
	// server/discover and on servers without AuthOptions.
	Principal *Principal
	// Era is the generation of the protocol the request speaks: EraModern
	// (per-request _meta) or EraLegacy (a session opened with initialize,
	// whose version, client and capabilities fill the fields above).
	Era Era
	// roots is what ClientCapabilities.Roots points to when fastCaps
	// decoded it. It is here, not in caps, because it fills the padding
	// after Era: eight bytes less keep a tools/call's exchange in its
	// size class.
	roots RootsCapability
	// Meta holds the members of the request's params._meta that are not
	// the protocol's own (those named io.modelcontextprotocol/... and
	// progressToken): the W3C trace context (traceparent, tracestate,
	// baggage) and whatever else the client sent, as raw JSON values. It
	// is nil when there are none. It is read-only.
	Meta RequestMeta

	// caps holds what ClientCapabilities points to when fastCaps decoded
	// it, so that the common capabilities cost no allocation of their own.
	caps capStore
}

// reqMeta holds the spans of the reserved _meta members of one request,
// and of the top-level params members that the methods read (see
// paramSpans). The spans point into the request buffer.
type reqMeta struct {
	version       []byte // raw JSON string span
	caps          []byte // raw JSON object span
	clientInfo    []byte
	logLevel      []byte
	progressToken []byte

	p paramSpans
}

// metaSpans are the reserved members of one _meta object, as reqMeta
// holds them; nil means absent.
type metaSpans struct {
	version, caps, clientInfo, logLevel, progressToken []byte
	extra                                              bool // other members (RequestInfo.Meta)
}

// setMeta sets the _meta members of rm.
func (rm *reqMeta) setMeta(m *metaSpans) {
	rm.version, rm.caps, rm.clientInfo, rm.logLevel, rm.progressToken = m.version, m.caps, m.clientInfo, m.logLevel, m.progressToken
}

// The top-level params members that paramSpans holds.
const (
	paramName = iota
	paramURI
	paramTaskID
	paramArguments
	paramInputResponses
	paramRequestState
	numParams
)

// paramMeta is the slot of paramValues and paramSpans that holds the
// _meta object, when it has members that are not the protocol's own
// (RequestInfo.Meta); it has no params member name.
const paramMeta = numParams

// numSpans is the number of slots of paramValues and paramSpans.
const numSpans = numParams + 1

// paramIndex returns the paramSpans slot of the params member name, or -1.
func paramIndex(name string) int {
	switch name {
	case "name":
		return paramName
	case "uri":
		return paramURI
	case "taskId":
		return paramTaskID
	case "arguments":
		return paramArguments
	case "inputResponses":
		return paramInputResponses
	case "requestState":
		return paramRequestState
	}
	return -1
}

// paramValues holds the values of the paramSpans members while params are
// scanned; nil means absent.
type paramValues [numSpans][]byte

// paramSpans holds where the values of the top-level params members that
// request handling reads lie in params, found by the one walk of params
// that also reads _meta, so that reading them does not walk params (and
// skip its _meta) again. It holds offsets rather than slices to keep the
// exchange small. When a name repeats, the last one wins, as with
// jsonscan.Lookup.
type paramSpans struct {
	src     []byte // the params scanned; lookups in other params fall back to Lookup
	packed  bool   // at is set
	present bool   // params has a _meta object (reqMeta's: here it fills padding)
	at      [numSpans]struct{ off, n int32 }
}

// pack records v, values inside src, as offsets into src. When a value is
// not inside src (or src is too large for the offsets), lookups fall back
// to jsonscan.Lookup.
func (p *paramSpans) pack(src []byte, v *paramValues) {
	*p = paramSpans{src: src, present: p.present}
	if int64(len(src)) > math.MaxInt32 {
		return
	}
	for i, b := range v {
		if b == nil {
			continue
		}
		// Subslices of src end where src's array ends, so the difference
		// of the capacities is the offset; the address check confirms it.
		off := cap(src) - cap(b)
		if off < 0 || off+len(b) > len(src) || len(b) == 0 || &src[off] != &b[0] {
			return
		}
		p.at[i].off, p.at[i].n = int32(off), int32(len(b))
	}
	p.packed = true
}

// lookup returns the value of the top-level member key of params. It
// answers from the spans when params is what they were scanned from and
// key is one of the members they hold, and with jsonscan.Lookup otherwise
// (params that were rebuilt since, say).
func (p *paramSpans) lookup(params []byte, key string) ([]byte, bool) {
	if p.packed && len(params) == len(p.src) && (len(params) == 0 || &params[0] == &p.src[0]) {
		if i := paramIndex(key); i >= 0 {
			a := p.at[i]
			if a.n == 0 {
				return nil, false
			}
			return params[a.off : a.off+a.n], true
		}
	}
	return jsonscan.Lookup(params, key)
}

// memberKey returns a member's key with escapes decoded. It allocates only
// for a key that has escapes; a key that does not decode matches nothing.
func memberKey(m *jsonscan.Member) []byte {
	if !m.Escaped {
		return m.Key
	}
	q := make([]byte, 0, len(m.Key)+2)
	q = append(append(append(q, '"'), m.Key...), '"')
	s, ok := jsonscan.String(q)
	if !ok {
		return nil
	}
	return []byte(s)
}

// scanMeta reads params._meta, and the top-level params members of
// paramSpans, in one walk of params. It reports a protocol error for a
// _meta that is present but malformed; absence of required members is
// reported by the validator so that the validation order stays in one
// place.
func scanMeta(params []byte) (reqMeta, *Error) {
	var pv paramValues
	rm, err := scanParams(params, &pv)
	rm.p.pack(params, &pv)
	return rm, err
}

// scanParams is scanMeta, leaving the paramSpans members in pv.
func scanParams(params []byte, pv *paramValues) (reqMeta, *Error) {
	var rm reqMeta
	if params == nil {
		return rm, nil
	}
	// The _meta object is read in place. When _meta repeats, the last one
	// wins, as with encoding/json.
	it, ok := jsonscan.Object(params)
	if !ok {
		return rm, nil
	}
	var perr *Error
	var k, m jsonscan.Member
	for it.NextKey(&k) {
		switch string(memberKey(&k)) {
		case "_meta":
			start := it.Offset()
			inner, isObject := it.Enter()
			rm.p.present = false
			rm.setMeta(&metaSpans{})
			pv[paramMeta] = nil
			extra := false
			if !isObject {
				it.Value()
				perr = InvalidParams("Invalid params: _meta must be an object")
				continue
			}
			rm.p.present, perr = true, nil
			for inner.Next(&m) {
				switch string(memberKey(&m)) {
				case protocol.MetaProtocolVersion:
					rm.version = m.Value
				case protocol.MetaClientCapabilities:
					rm.caps = m.Value
				case protocol.MetaClientInfo:
					rm.clientInfo = m.Value
				case protocol.MetaLogLevel:
					rm.logLevel = m.Value
				case "progressToken":
					rm.progressToken = m.Value
				default:
					extra = extra || !isProtocolMetaKey(memberKey(&m))
				}
			}
			it.Leave(&inner)
			if extra {
				pv[paramMeta] = params[start:it.Offset()]
			}
		default:
			if i := paramIndex(string(memberKey(&k))); i >= 0 {
				pv[i] = it.Value()
			}
		}
	}
	if perr != nil {
		return rm, perr
	}
	return rm, nil
}

// metaVisitor reads what scanMeta reads, from the events of
// wire.Decode (through decodeVisit), so that the transport's one validating pass over a
// request also finds its _meta and the params members of paramSpans. After
// finish, rm and err are what scanMeta(msg.Params) returns.
type metaVisitor struct {
	rm      reqMeta
	err     *Error
	pending metaSpans // the members of the _meta object being reported
	params  paramValues
	done    bool
}

func (v *metaVisitor) visit(ev wire.Event, key []byte, escaped bool, value []byte) {
	m := jsonscan.Member{Key: key, Escaped: escaped}
	switch ev {
	case wire.ParamsStart:
		*v = metaVisitor{}
	case wire.MetaMember:
		switch string(memberKey(&m)) {
		case protocol.MetaProtocolVersion:
			v.pending.version = value
		case protocol.MetaClientCapabilities:
			v.pending.caps = value
		case protocol.MetaClientInfo:
			v.pending.clientInfo = value
		case protocol.MetaLogLevel:
			v.pending.logLevel = value
		case "progressToken":
			v.pending.progressToken = value
		default:
			v.pending.extra = v.pending.extra || !isProtocolMetaKey(memberKey(&m))
		}
	case wire.ParamsMember:
		rm := &v.rm
		switch string(memberKey(&m)) {
		case "_meta":
			// As in scanMeta: the last _meta wins.
			v.params[paramMeta] = nil
			if jsonscan.Kind(value) == '{' {
				rm.p.present, v.err = true, nil
				rm.setMeta(&v.pending)
				if v.pending.extra {
					v.params[paramMeta] = value
				}
			} else {
				rm.p.present, v.err = false, InvalidParams("Invalid params: _meta must be an object")
				rm.setMeta(&metaSpans{})
			}
			v.pending = metaSpans{}
		default:
			if i := paramIndex(string(memberKey(&m))); i >= 0 {
				v.params[i] = value
			}
		}
	}
}

// finish completes the visit of a message that decoded without error.
func (v *metaVisitor) finish(params []byte) {
	if params == nil {
		*v = metaVisitor{}
	}
	v.rm.p.pack(params, &v.params)
	v.pending = metaSpans{}
	v.done = true
}

// isProtocolMetaKey reports whether a _meta key is the protocol's own:
// io.modelcontextprotocol/... and progressToken.
func isProtocolMetaKey(k []byte) bool {
	return string(k) == "progressToken" || bytes.HasPrefix(k, []byte(protocol.MetaPrefix))
}

// extraMeta returns the _meta object of params when it has members that
// are not the protocol's own (see paramMeta), and nil otherwise.
func (rm *reqMeta) extraMeta(params []byte) []byte {
	p := &rm.p
	if !p.packed || len(params) != len(p.src) || len(params) == 0 || &params[0] != &p.src[0] {
		return nil
	}
	a := p.at[paramMeta]
	if a.n == 0 {
		return nil
	}
	return params[a.off : a.off+a.n]
}

// RequestMeta holds the members of a request's _meta that are not the
// protocol's own, by key, as raw JSON values (RequestInfo.Meta).
type RequestMeta map[string]json.RawMessage

// String returns the value of the string member key, and "" when it is
// absent or not a string (the W3C trace context members are strings).
func (m RequestMeta) String(key string) string {
	s, _ := jsonscan.String(m[key])
	return s
}

// decodeMeta returns the RequestMeta of the _meta object raw (values
// copied); nil when raw is nil.
func decodeMeta(raw []byte) RequestMeta {
	it, ok := jsonscan.Object(raw)
	if !ok {
		return nil
	}
	var out RequestMeta
	var m jsonscan.Member
	for it.Next(&m) {
		k := memberKey(&m)
		if k == nil || isProtocolMetaKey(k) {
			continue
		}
		if out == nil {
			out = RequestMeta{}
		}
		out[string(k)] = json.RawMessage(bytes.Clone(m.Value))
	}
	return out
}

// decodeInfo fills a RequestInfo from the scanned _meta. version is the
// already-validated protocol version.
func (rm *reqMeta) decodeInfo(info *RequestInfo, version string) *Error {
	return rm.decodeInfoCached(info, version, nil)
}

// decodeInfoCached is decodeInfo with cache, when not nil, holding recent
// clientInfo values; it is updated.
func (rm *reqMeta) decodeInfoCached(info *RequestInfo, version string, cache *clientInfoCache) *Error {
	info.ProtocolVersion = version
	if len(rm.caps) > 0 && !jsonscan.IsEmptyObject(rm.caps) && !fastCaps(rm.caps, &info.ClientCapabilities, &info.caps, &info.roots) {
		// Not the common shape: encoding/json decides, from scratch.
		info.ClientCapabilities = ClientCapabilities{}
		info.caps, info.roots = capStore{}, RootsCapability{}
		if err := json.Unmarshal(rm.caps, &info.ClientCapabilities); err != nil {
			return InvalidParams("Invalid params: malformed " + protocol.MetaClientCapabilities)
		}
	}
	if len(rm.clientInfo) > 0 {
		if cache == nil {
			info.ClientInfo = decodeClientInfo(rm.clientInfo)
		} else {
			info.ClientInfo = cache.get(rm.clientInfo)
		}
	}
	if len(rm.logLevel) > 0 {
		s, ok := jsonscan.String(rm.logLevel)
		if !ok || LogLevel(s).severity() < 0 {
			return InvalidParams("Invalid params: " + protocol.MetaLogLevel + " must be one of debug, info, notice, warning, error, critical, alert, emergency")
		}
		info.LogLevel = LogLevel(s)
	}
	return nil
}

// decodedClientInfo is a clientInfo and its raw JSON.
type decodedClientInfo struct {
	raw  []byte
	impl Implementation
}

// clientInfoCache holds recently decoded clientInfo values, one per slot
// chosen by a hash of the raw JSON, so that a few clients taking turns do
// not evict each other. The same bytes always decode the same, and the
// strings are immutable, so a hit is shared as it is: its Icons slice
// too, which RequestInfo documents as read-only.
type clientInfoCache struct {
	seed  maphash.Seed // set by NewServer
	last  atomic.Pointer[decodedClientInfo]
	slots [16]atomic.Pointer[decodedClientInfo]
}

// get returns the clientInfo that raw decodes to.
func (c *clientInfoCache) get(raw []byte) Implementation {
	if c.seed == (maphash.Seed{}) {
		return decodeClientInfo(raw) // a Server not made by NewServer
	}
	// The value the previous request used first: no hash to compute.
	if d := c.last.Load(); d != nil && string(d.raw) == string(raw) {
		return d.impl
	}
	slot := &c.slots[maphash.Bytes(c.seed, raw)%uint64(len(c.slots))]
	d := slot.Load()
	if d == nil || string(d.raw) != string(raw) {
		if len(raw) > 1024 {
			return decodeClientInfo(raw) // not worth keeping
		}
		d = &decodedClientInfo{raw: bytes.Clone(raw), impl: decodeClientInfo(raw)}
		slot.Store(d)
	}
	c.last.Store(d)
	return d.impl
}

// decodeClientInfo decodes a clientInfo, every field of Implementation,
// mostly without encoding/json. clientInfo is optional and informational:
// a malformed one is ignored (a member of the wrong type is left zero).
// Where encoding/json decodes raw into an Implementation without error,
// the result is the same; FuzzDecodeClientInfo checks that.
// raw must be valid JSON, as it is inside a decoded request.
func decodeClientInfo(raw []byte) Implementation {
	var impl Implementation
	if !fastClientInfo(raw, &impl) {
		// Escapes, keys encoding/json would match by case folding, or
		// text that is not UTF-8: encoding/json decides, from scratch.
		impl = Implementation{}
		if json.Unmarshal(raw, &impl) != nil {
			impl = Implementation{}
		}
	}
	return impl
}

// clientInfoFields are the members of a clientInfo the fast path reads,
// spelled as Implementation's json tags spell them.
var clientInfoFields = [...]string{"name", "title", "version", "description", "icons", "websiteUrl"}

// fastClientInfo decodes raw into impl and reports true, or reports false
// when the caller must let encoding/json decide.
func fastClientInfo(raw []byte, impl *Implementation) bool {
	it, ok := jsonscan.Object(raw)
	if !ok {
		return true // not an object: ignored
	}
	var m jsonscan.Member
	for it.Next(&m) {
		if m.Escaped {
			return false
		}
		var dst *string
		switch string(m.Key) {
		case "name":
			dst = &impl.Name
		case "title":
			dst = &impl.Title
		case "version":
			dst = &impl.Version
		case "description":
			dst = &impl.Description
		case "websiteUrl":
			dst = &impl.WebsiteURL
		case "icons":
			// Rare, and a nested shape: encoding/json decodes it, with
			// its semantics (null empties the slice).
			var icons []Icon
			if json.Unmarshal(m.Value, &icons) == nil {
				impl.Icons = icons
			}
			continue
		default:
			for _, f := range clientInfoFields {
				if strings.EqualFold(string(m.Key), f) {
					return false
				}
			}
			continue
		}
		if str, ok := jsonscan.StringBytes(m.Value); ok {
			if !utf8.Valid(str) {
				return false
			}
			*dst, _ = jsonscan.String(m.Value)
		}
	}
	return true
}

// capStore holds two of the capability values of one request
// (RequestInfo.roots holds the third).
type capStore struct {
	sampling    SamplingCapability
	elicitation ElicitationCapability
}

// fastCaps decodes the common shape of clientCapabilities without
// reflection: sampling and elicitation as {} and roots as {} or
// {"listChanged": true|false}, each key spelled exactly. It reports false
// for anything else (other members, other spellings, escapes, null, nested
// values), leaving c, st and roots partly filled, and the caller then decodes with
// encoding/json. Where it reports true, the result equals encoding/json's,
// duplicate keys included; FuzzFastCaps checks that.
// raw must be valid JSON, as it is inside a decoded request.
func fastCaps(raw []byte, c *ClientCapabilities, st *capStore, roots *RootsCapability) bool {
	it, ok := jsonscan.Object(raw)
	if !ok {
		return false
	}
	var m jsonscan.Member
	for it.Next(&m) {
		if m.Escaped {
			return false
		}
		switch string(m.Key) {
		case "sampling":
			if !jsonscan.IsEmptyObject(m.Value) {
				return false
			}
			c.Sampling = &st.sampling
		case "elicitation":
			if !jsonscan.IsEmptyObject(m.Value) {
				return false
			}
			c.Elicitation = &st.elicitation
		case "roots":
			it2, ok := jsonscan.Object(m.Value)
			if !ok {
				return false
			}
			var m2 jsonscan.Member
			for it2.Next(&m2) {
				if m2.Escaped || string(m2.Key) != "listChanged" {
					return false
				}
				switch string(m2.Value) {
				case "true":
					roots.ListChanged = true
				case "false":
					roots.ListChanged = false
				default:
					return false
				}
			}
			c.Roots = roots
		default:
			return false
		}
	}
	return true
}
