package mcp

import (
	"encoding/json"
	"net/http"

	"github.com/mcpkit/mcpkit/internal/jsonscan"
)

// RequestInfo is what a request said about itself in its _meta, plus what
// the transport saw. Handlers receive it with every request; it is read-only.
type RequestInfo struct {
	// ProtocolVersion is the revision the request speaks.
	ProtocolVersion string
	// ClientInfo is the client's self-reported identity; zero when the
	// request did not carry one.
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

	// caps holds what ClientCapabilities points to when fastCaps decoded
	// it, so that the common capabilities cost no allocation of their own.
	caps capStore
}

// reqMeta holds the spans of the reserved _meta members of one request. The
// spans point into the request buffer.
type reqMeta struct {
	present       bool
	version       []byte // raw JSON string span
	caps          []byte // raw JSON object span
	clientInfo    []byte
	logLevel      []byte
	progressToken []byte
}

// scanMeta reads params._meta. It reports a protocol error for a _meta that
// is present but malformed; absence of required members is reported by the
// validator so that the validation order stays in one place.
func scanMeta(params []byte) (reqMeta, *Error) {
	var rm reqMeta
	if params == nil {
		return rm, nil
	}
	// One walk of params: the _meta object is read in place. When _meta
	// repeats, the last one wins, as with encoding/json.
	it, ok := jsonscan.Object(params)
	if !ok {
		return rm, nil
	}
	var perr *Error
	var k, m jsonscan.Member
	for it.NextKey(&k) {
		if !k.KeyIs("_meta") {
			continue
		}
		inner, isObject := it.Enter()
		if !isObject {
			it.Value()
			rm, perr = reqMeta{}, InvalidParams("Invalid params: _meta must be an object")
			continue
		}
		rm, perr = reqMeta{present: true}, nil
		for inner.Next(&m) {
			switch {
			case m.KeyIs(metaProtocolVersion):
				rm.version = m.Value
			case m.KeyIs(metaClientCapabilities):
				rm.caps = m.Value
			case m.KeyIs(metaClientInfo):
				rm.clientInfo = m.Value
			case m.KeyIs(metaLogLevel):
				rm.logLevel = m.Value
			case m.KeyIs("progressToken"):
				rm.progressToken = m.Value
			}
		}
		it.Leave(&inner)
	}
	if perr != nil {
		return rm, perr
	}
	return rm, nil
}

// decodeInfo fills a RequestInfo from the scanned _meta. version is the
// already-validated protocol version.
func (rm *reqMeta) decodeInfo(info *RequestInfo, version string) *Error {
	info.ProtocolVersion = version
	if len(rm.caps) > 0 && !jsonscan.IsEmptyObject(rm.caps) && !fastCaps(rm.caps, &info.ClientCapabilities, &info.caps) {
		// Not the common shape: encoding/json decides, from scratch.
		info.ClientCapabilities = ClientCapabilities{}
		info.caps = capStore{}
		if err := json.Unmarshal(rm.caps, &info.ClientCapabilities); err != nil {
			return InvalidParams("Invalid params: malformed " + metaClientCapabilities)
		}
	}
	if len(rm.clientInfo) > 0 {
		// clientInfo is optional and informational: a malformed one is
		// ignored. Read its three strings without encoding/json.
		if it, ok := jsonscan.Object(rm.clientInfo); ok {
			var m jsonscan.Member
			for it.Next(&m) {
				switch {
				case m.KeyIs("name"):
					info.ClientInfo.Name, _ = jsonscan.String(m.Value)
				case m.KeyIs("version"):
					info.ClientInfo.Version, _ = jsonscan.String(m.Value)
				case m.KeyIs("title"):
					info.ClientInfo.Title, _ = jsonscan.String(m.Value)
				}
			}
		}
	}
	if len(rm.logLevel) > 0 {
		s, ok := jsonscan.String(rm.logLevel)
		if !ok || LogLevel(s).severity() < 0 {
			return InvalidParams("Invalid params: " + metaLogLevel + " must be one of debug, info, notice, warning, error, critical, alert, emergency")
		}
		info.LogLevel = LogLevel(s)
	}
	return nil
}

// capStore holds the capability values of one request.
type capStore struct {
	sampling    SamplingCapability
	elicitation ElicitationCapability
	roots       RootsCapability
}

// fastCaps decodes the common shape of clientCapabilities without
// reflection: sampling and elicitation as {} and roots as {} or
// {"listChanged": true|false}, each key spelled exactly. It reports false
// for anything else (other members, other spellings, escapes, null, nested
// values), leaving c and st partly filled, and the caller then decodes with
// encoding/json. Where it reports true, the result equals encoding/json's,
// duplicate keys included; FuzzFastCaps checks that.
// raw must be valid JSON, as it is inside a decoded request.
func fastCaps(raw []byte, c *ClientCapabilities, st *capStore) bool {
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
					st.roots.ListChanged = true
				case "false":
					st.roots.ListChanged = false
				default:
					return false
				}
			}
			c.Roots = &st.roots
		default:
			return false
		}
	}
	return true
}
