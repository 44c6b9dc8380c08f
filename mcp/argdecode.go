package mcp

import (
	"encoding"
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/mcpkit/mcpkit/internal/jsonscan"
)

// argDecoder decodes the arguments of a typed tool (AddTool) into its input
// struct without encoding/json, for the common shape: a struct of exported
// string, bool, integer and float fields with plain names, and arguments
// whose keys name those fields exactly and whose values are of the field's
// type, written without escapes. Anything else is left to encoding/json,
// after checkArgKeys has refused repeated keys and case variants of the
// field names, so that both ways decode keys exactly; FuzzArgDecoder checks
// that.
type argDecoder struct {
	fields []argField
}

type argField struct {
	name  string
	index int
	kind  reflect.Kind
	bits  int
}

var (
	jsonUnmarshalerType = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// newArgDecoder returns a decoder for values of type t, or nil when t is
// not of the shape argDecoder handles.
func newArgDecoder(t reflect.Type) *argDecoder {
	if t.Kind() != reflect.Struct || customDecoding(t) {
		return nil
	}
	d := &argDecoder{}
	seen := map[string]bool{}
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Anonymous {
			return nil // embedded fields follow encoding/json's promotion rules
		}
		if !f.IsExported() {
			continue // encoding/json ignores them too
		}
		name := f.Name
		if tag, ok := f.Tag.Lookup("json"); ok {
			if tag == "-" {
				continue
			}
			tagName, opts, _ := strings.Cut(tag, ",")
			if strings.Contains(","+opts+",", ",string,") {
				return nil
			}
			if tagName != "" {
				name = tagName
			}
		}
		if !plainName(name) || seen[strings.ToLower(name)] || customDecoding(f.Type) {
			return nil
		}
		seen[strings.ToLower(name)] = true
		af := argField{name: name, index: i, kind: f.Type.Kind()}
		switch af.kind {
		case reflect.String, reflect.Bool:
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
			reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
			reflect.Float32, reflect.Float64:
			af.bits = f.Type.Bits()
		default:
			return nil
		}
		d.fields = append(d.fields, af)
	}
	return d
}

// customDecoding reports whether encoding/json decodes t (or *t) with its
// own method.
func customDecoding(t reflect.Type) bool {
	pt := reflect.PointerTo(t)
	return t.Implements(jsonUnmarshalerType) || pt.Implements(jsonUnmarshalerType) ||
		t.Implements(textUnmarshalerType) || pt.Implements(textUnmarshalerType)
}

// plainName reports whether a JSON name is made of ASCII letters, digits
// and underscores only, so that encoding/json takes the tag as it is.
func plainName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// decode sets the fields of v, a struct value of the decoder's type, from
// args, a valid JSON object, and reports true; or it reports false, leaving
// v partly set, when args need encoding/json.
func (d *argDecoder) decode(args []byte, v reflect.Value) bool {
	it, ok := jsonscan.Object(args)
	if !ok {
		return false
	}
	var m jsonscan.Member
	for it.Next(&m) {
		if m.Escaped {
			return false
		}
		var f *argField
		for i := range d.fields {
			if d.fields[i].name == string(m.Key) {
				f = &d.fields[i]
				break
			}
		}
		if f == nil {
			return false // an unknown name may still match a field case-insensitively
		}
		fv := v.Field(f.index)
		switch f.kind {
		case reflect.String:
			raw, ok := jsonscan.StringBytes(m.Value)
			if !ok || strings.IndexByte(string(raw), '\\') >= 0 || !utf8.Valid(raw) {
				return false
			}
			fv.SetString(string(raw))
		case reflect.Bool:
			switch string(m.Value) {
			case "true":
				fv.SetBool(true)
			case "false":
				fv.SetBool(false)
			default:
				return false
			}
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
			n, err := strconv.ParseInt(string(m.Value), 10, 64)
			if err != nil || fv.OverflowInt(n) {
				return false
			}
			fv.SetInt(n)
		case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
			n, err := strconv.ParseUint(string(m.Value), 10, 64)
			if err != nil || fv.OverflowUint(n) {
				return false
			}
			fv.SetUint(n)
		case reflect.Float32, reflect.Float64:
			if k := jsonscan.Kind(m.Value); k != '-' && (k < '0' || k > '9') {
				return false // ParseFloat also takes Inf and NaN
			}
			n, err := strconv.ParseFloat(string(m.Value), f.bits)
			if err != nil || fv.OverflowFloat(n) {
				return false
			}
			fv.SetFloat(n)
		}
	}
	return true
}
