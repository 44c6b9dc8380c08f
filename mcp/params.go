package mcp

import "github.com/mcpkit/mcpkit/internal/jsonscan"

// paramDecoder is the params of one method as a typed value. decodeParams
// is the one path by which a handler reads its params: the handler works
// on the typed fields, and what a malformed member gets on the wire is
// decided here, in the order the checks are listed, one error per request.
type paramDecoder interface {
	decode(p *paramReader) *Error
}

// decodeParams decodes the params of the exchange into dst.
func decodeParams(x *exchange, dst paramDecoder) *Error {
	return dst.decode(&paramReader{x: x, raw: x.params})
}

// paramReader reads the members of one JSON object of params: the top
// level (x set: its members are looked up through the _meta visitor's
// index) or an object nested in it.
type paramReader struct {
	x   *exchange
	raw []byte
}

// member returns the value of member key, empty when it is absent.
func (p *paramReader) member(key string) []byte {
	if p.x != nil {
		v, _ := p.x.param(key)
		return v
	}
	v, _ := jsonscan.Lookup(p.raw, key)
	return v
}

// object returns the object member key, or the error msg when it is absent
// or not an object.
func (p *paramReader) object(key, msg string) (*paramReader, *Error) {
	v := p.member(key)
	if !jsonscan.IsObject(v) {
		return nil, InvalidParams(msg)
	}
	return &paramReader{raw: v}, nil
}

// optionalObject returns the member key when it is an object, an empty
// reader when it is absent or null, and the error msg otherwise.
func (p *paramReader) optionalObject(key, msg string) (*paramReader, *Error) {
	v := p.member(key)
	if k := jsonscan.Kind(v); k != 0 && k != 'n' && k != '{' {
		return nil, InvalidParams(msg)
	}
	return &paramReader{raw: v}, nil
}

// str returns the string member key and whether it is one.
func (p *paramReader) str(key string) (string, bool) {
	return jsonscan.String(p.member(key))
}

// stringMap returns the optional object of strings key (see stringMap);
// what names it in errors.
func (p *paramReader) stringMap(key, what string) (map[string]string, *Error) {
	m, err := stringMap(p.member(key), what)
	if err != nil {
		return nil, err.(*Error)
	}
	return m, nil
}

// completeParams is the params of completion/complete.
type completeParams struct {
	refType  string // "ref/prompt" or "ref/resource"
	refName  string // of a ref/prompt
	refURI   string // of a ref/resource: a URI template
	argument string
	value    string
	context  map[string]string // context.arguments, never nil
}

func (c *completeParams) decode(p *paramReader) *Error {
	ref, e := p.object("ref", "Invalid params: completion/complete needs a ref object")
	if e != nil {
		return e
	}
	arg, e := p.object("argument", "Invalid params: completion/complete needs an argument object with name and value")
	if e != nil {
		return e
	}
	var ok1, ok2 bool
	c.argument, ok1 = arg.str("name")
	c.value, ok2 = arg.str("value")
	if !ok1 || !ok2 {
		return InvalidParams("Invalid params: argument.name and argument.value must be strings")
	}
	cx, e := p.optionalObject("context", "Invalid params: context must be an object")
	if e != nil {
		return e
	}
	if c.context, e = cx.stringMap("arguments", "context.arguments"); e != nil {
		return e
	}
	typ := ref.member("type")
	var ok bool
	switch {
	case jsonscan.StringEqual(typ, "ref/prompt"):
		c.refType = "ref/prompt"
		if c.refName, ok = ref.str("name"); !ok {
			return InvalidParams("Invalid params: ref.name must be a string")
		}
	case jsonscan.StringEqual(typ, "ref/resource"):
		c.refType = "ref/resource"
		if c.refURI, ok = ref.str("uri"); !ok {
			return InvalidParams("Invalid params: ref.uri must be a string")
		}
	default:
		return InvalidParams(`Invalid params: ref.type must be "ref/prompt" or "ref/resource"`)
	}
	return nil
}

// readParams is the params of resources/read.
type readParams struct {
	uri string
}

func (r *readParams) decode(p *paramReader) *Error {
	var ok bool
	if r.uri, ok = p.str("uri"); !ok {
		return InvalidParams("Invalid params: resources/read needs a string uri")
	}
	return nil
}
