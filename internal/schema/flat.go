package schema

import (
	"bytes"

	"github.com/mcpkit/mcpkit/internal/jsonscan"
)

// flat is a fast, allocation-free check for the schemas most tools have: an
// object whose properties are all of primitive types, with required
// properties and optionally no additional ones (what Infer produces for a
// struct of strings, numbers and booleans). It only ever answers "valid"
// when the full validator would; anything it is unsure about goes to the
// full validator, which also words the errors.
type flat struct {
	props       []flatProp
	required    uint64 // bit i: props[i] is required
	closed      bool   // additionalProperties: false
	unreachable bool   // a required name is not among the properties
}

type flatProp struct {
	name  string
	types uint8 // bit set of flatString, flatInteger, ...
}

const (
	flatString uint8 = 1 << iota
	flatInteger
	flatNumber
	flatBoolean
	flatNull
)

// annotations are keywords that do not affect validation.
var annotations = map[string]bool{
	"description": true, "title": true, "examples": true, "default": true,
	"deprecated": true, "readOnly": true, "writeOnly": true, "$comment": true,
	"x-mcp-header": true,
}

// compileFlat returns the flat form of a schema, or nil when the schema is
// not that simple.
func compileFlat(doc any) *flat {
	root, ok := doc.(map[string]any)
	if !ok {
		return nil
	}
	f := &flat{}
	var required []any
	for k, v := range root {
		switch k {
		case "type":
			if v != "object" {
				return nil
			}
		case "$schema":
			if v != "https://json-schema.org/draft/2020-12/schema" {
				return nil
			}
		case "properties":
			props, ok := v.(map[string]any)
			if !ok || len(props) > 64 {
				return nil
			}
			for name, ps := range props {
				types, ok := flatTypes(ps)
				if !ok {
					return nil
				}
				f.props = append(f.props, flatProp{name: name, types: types})
			}
		case "required":
			if required, ok = v.([]any); !ok {
				return nil
			}
		case "additionalProperties":
			b, ok := v.(bool)
			if !ok {
				return nil
			}
			f.closed = !b
		default:
			if !annotations[k] {
				return nil
			}
		}
	}
	if root["type"] != "object" {
		return nil
	}
	for _, r := range required {
		name, ok := r.(string)
		if !ok {
			return nil
		}
		i := f.index(name)
		if i < 0 {
			f.unreachable = true
			continue
		}
		f.required |= 1 << i
	}
	return f
}

// flatTypes returns the types a property schema allows, and false if the
// schema does more than restrict the type.
func flatTypes(ps any) (uint8, bool) {
	m, ok := ps.(map[string]any)
	if !ok {
		return 0, false
	}
	var types uint8
	for k, v := range m {
		switch {
		case k == "type":
			switch v := v.(type) {
			case string:
				t := typeBit(v)
				if t == 0 {
					return 0, false
				}
				types |= t
			case []any:
				for _, e := range v {
					s, _ := e.(string)
					t := typeBit(s)
					if t == 0 {
						return 0, false
					}
					types |= t
				}
			default:
				return 0, false
			}
		case annotations[k]:
		default:
			return 0, false
		}
	}
	if types == 0 {
		return 0, false
	}
	return types, true
}

func typeBit(t string) uint8 {
	switch t {
	case "string":
		return flatString
	case "integer":
		return flatInteger
	case "number":
		return flatNumber | flatInteger
	case "boolean":
		return flatBoolean
	case "null":
		return flatNull
	}
	return 0
}

func (f *flat) index(name string) int {
	for i := range f.props {
		if f.props[i].name == name {
			return i
		}
	}
	return -1
}

// valid reports whether instance (well-formed JSON) certainly satisfies
// the schema. False means "not known": the full validator decides.
func (f *flat) valid(instance []byte) bool {
	if f.unreachable {
		return false
	}
	it, ok := jsonscan.Object(instance)
	if !ok {
		return false
	}
	var seen uint64
	var m jsonscan.Member
	for it.Next(&m) {
		if m.Escaped {
			return false
		}
		i := -1
		for j := range f.props {
			if f.props[j].name == string(m.Key) {
				i = j
				break
			}
		}
		if i < 0 {
			if f.closed {
				return false
			}
			continue
		}
		if seen&(1<<i) != 0 {
			return false // a repeated key: let the full validator decide
		}
		seen |= 1 << i
		if !kindAllowed(f.props[i].types, m.Value) {
			return false
		}
	}
	return seen&f.required == f.required
}

func kindAllowed(types uint8, v []byte) bool {
	switch jsonscan.Kind(v) {
	case '"':
		return types&flatString != 0
	case 't', 'f':
		return types&flatBoolean != 0
	case 'n':
		return types&flatNull != 0
	case '{', '[', 0:
		return false
	}
	// A number: an integer unless it has a fraction or exponent (then the
	// full validator decides whether, say, 1.0 is an integer).
	if types&flatNumber != 0 {
		return true
	}
	return types&flatInteger != 0 && !bytes.ContainsAny(v, ".eE")
}

// wellFormed reports whether b is one JSON value. jsonscan.Valid is
// several times faster than json.Valid; it also rejects input nested deeper
// than jsonscan.MaxDepth, which then goes to the full validator.
func wellFormed(b []byte) bool { return jsonscan.Valid(b) }
