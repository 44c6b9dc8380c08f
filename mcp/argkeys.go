package mcp

import (
	"encoding/json"
	"reflect"
	"strconv"
	"strings"

	"github.com/mcpkit/mcpkit/internal/jsonscan"
)

// argKeys is the tree of property names a tool declares for its arguments:
// the properties of its input schema and, for AddTool, the JSON names of
// the input type's fields. It guards the handler against arguments whose
// meaning depends on the decoder: schema validation and the x-mcp-header
// check read keys exactly, while encoding/json matches field names without
// regard to case and lets the last of repeated keys win. checkArgKeys
// refuses an object that repeats a key, at any depth, or that holds a key
// differing only in case from a declared property, so that the values a
// handler decodes are the values that were validated.
type argKeys struct {
	props  map[string]*argKeys // declared names; the value describes the property's value
	names  []string            // the keys of props, for looking a few up without hashing
	kids   []*argKeys          // the values of props, in the order of names
	items  *argKeys            // the value of each array element
	values *argKeys            // the value of every member of a map-like object
}

// maxArgKeyProblems bounds how many keys one refusal names.
const maxArgKeyProblems = 8

// smallObject is how many keys an object may have before repeated keys are
// found with a map instead of by comparing every pair.
const smallObject = 16

// check returns a description of the keys that make args ambiguous
// ("repeated key ...", "key ... differs only in case from the declared
// property ..."), or "" when there are none. args is a valid JSON value.
func (k *argKeys) check(args []byte) string {
	problems := k.walk(args, nil)
	if len(problems) == 0 {
		return ""
	}
	return strings.Join(problems, "; ")
}

// walk checks one value and returns the problems found, each naming a key
// path relative to v. It allocates only to report problems, or for escaped
// keys and large objects.
func (k *argKeys) walk(v []byte, problems []string) []string {
	switch jsonscan.Kind(v) {
	case '{':
		return k.walkObject(v, problems)
	case '[':
		var items *argKeys
		if k != nil {
			items = k.items
		}
		i := jsonscan.SkipSpace(v, 1)
		for n := 0; i < len(v) && v[i] != ']' && len(problems) < maxArgKeyProblems; n++ {
			end := jsonscan.SkipValue(v, i)
			if c := jsonscan.Kind(v[i:end]); c == '{' || c == '[' {
				if sub := items.walk(v[i:end], nil); len(sub) > 0 {
					problems = prefixProblems(problems, sub, "["+strconv.Itoa(n)+"]")
				}
			}
			i = jsonscan.SkipSpace(v, end)
			if i < len(v) && v[i] == ',' {
				i = jsonscan.SkipSpace(v, i+1)
			}
		}
	}
	return problems
}

func (k *argKeys) walkObject(v []byte, problems []string) []string {
	it, _ := jsonscan.Object(v)
	var (
		small [smallObject][]byte
		n     int
		large map[string]bool
		m     jsonscan.Member
	)
	for it.Next(&m) && len(problems) < maxArgKeyProblems {
		key := m.Key
		if m.Escaped {
			s, ok := jsonscan.String(append(append([]byte{'"'}, m.Key...), '"'))
			if !ok {
				continue // not reachable for a valid object
			}
			key = []byte(s)
		}
		repeated := false
		if large != nil {
			repeated = large[string(key)]
			large[string(key)] = true
		} else {
			for _, prev := range small[:n] {
				if string(prev) == string(key) {
					repeated = true
					break
				}
			}
			if n < smallObject {
				small[n] = key
				n++
			} else {
				large = make(map[string]bool, 2*smallObject)
				for _, prev := range small {
					large[string(prev)] = true
				}
				large[string(key)] = true
			}
		}
		if repeated {
			problems = append(problems, "repeated key "+strconv.Quote(string(key)))
			continue
		}
		var child *argKeys
		if k != nil {
			if c, ok := k.lookup(key); ok {
				child = c
			} else if decl, ok := k.foldMatch(key); ok {
				problems = append(problems, "key "+strconv.Quote(string(key))+" differs only in case from the declared property "+strconv.Quote(decl))
				continue
			} else {
				child = k.values
			}
		}
		if c := jsonscan.Kind(m.Value); c == '{' || c == '[' {
			if sub := child.walk(m.Value, nil); len(sub) > 0 {
				problems = prefixProblems(problems, sub, string(key))
			}
		}
	}
	return problems
}

// lookup returns the tree of the declared property named key.
func (k *argKeys) lookup(key []byte) (*argKeys, bool) {
	if len(k.names) <= 8 {
		for i, name := range k.names {
			if name == string(key) {
				return k.kids[i], true
			}
		}
		return nil, false
	}
	c, ok := k.props[string(key)]
	return c, ok
}

// foldMatch returns the declared property that key equals without regard
// to case (as encoding/json compares names), if there is one.
func (k *argKeys) foldMatch(key []byte) (string, bool) {
	for name := range k.props {
		if strings.EqualFold(name, string(key)) {
			return name, true
		}
	}
	return "", false
}

// prefixProblems appends the problems of a nested value, naming it.
func prefixProblems(problems, sub []string, at string) []string {
	for _, p := range sub {
		if len(problems) == maxArgKeyProblems {
			break
		}
		problems = append(problems, "in "+strconv.Quote(at)+": "+p)
	}
	return problems
}

// schemaArgKeys builds the key tree of a JSON Schema: its properties, the
// schema of array items, and additionalProperties, following allOf, anyOf
// and oneOf.
func schemaArgKeys(schemaJSON []byte) *argKeys {
	var doc any
	if json.Unmarshal(schemaJSON, &doc) != nil {
		return &argKeys{}
	}
	k := &argKeys{}
	addSchemaKeys(k, doc, 0)
	return k
}

func addSchemaKeys(k *argKeys, doc any, depth int) {
	m, ok := doc.(map[string]any)
	if !ok || depth > 32 {
		return
	}
	if props, ok := m["properties"].(map[string]any); ok {
		for name, sub := range props {
			c := k.prop(name)
			addSchemaKeys(c, sub, depth+1)
		}
	}
	if items, ok := m["items"].(map[string]any); ok {
		if k.items == nil {
			k.items = &argKeys{}
		}
		addSchemaKeys(k.items, items, depth+1)
	}
	if ap, ok := m["additionalProperties"].(map[string]any); ok {
		if k.values == nil {
			k.values = &argKeys{}
		}
		addSchemaKeys(k.values, ap, depth+1)
	}
	for _, comb := range []string{"allOf", "anyOf", "oneOf"} {
		if list, ok := m[comb].([]any); ok {
			for _, sub := range list {
				addSchemaKeys(k, sub, depth+1)
			}
		}
	}
}

// prop returns the tree of a declared property, adding it.
func (k *argKeys) prop(name string) *argKeys {
	if k.props == nil {
		k.props = map[string]*argKeys{}
	}
	c := k.props[name]
	if c == nil {
		c = &argKeys{}
		k.props[name] = c
		k.names = append(k.names, name)
		k.kids = append(k.kids, c)
	}
	return c
}

// addTypeKeys adds the JSON names of the fields encoding/json decodes into
// a value of type t, recursively, so that the typed path of AddTool decodes
// case-sensitively: a key that would reach a field only by case folding is
// refused before encoding/json sees it.
func addTypeKeys(k *argKeys, t reflect.Type, seen map[reflect.Type]bool) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if seen[t] || customDecoding(t) {
		return
	}
	switch t.Kind() {
	case reflect.Struct:
		seen[t] = true
		defer delete(seen, t)
		for i := range t.NumField() {
			f := t.Field(i)
			name, ok := jsonFieldName(f)
			if !ok {
				continue
			}
			ft := f.Type
			for ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if f.Anonymous && name == "" && ft.Kind() == reflect.Struct {
				addTypeKeys(k, ft, seen) // promoted fields
				continue
			}
			if name == "" {
				name = f.Name
			}
			addTypeKeys(k.prop(name), f.Type, seen)
		}
	case reflect.Slice, reflect.Array:
		if k.items == nil {
			k.items = &argKeys{}
		}
		addTypeKeys(k.items, t.Elem(), seen)
	case reflect.Map:
		if k.values == nil {
			k.values = &argKeys{}
		}
		addTypeKeys(k.values, t.Elem(), seen)
	}
}

// jsonFieldName returns the tag name of a field encoding/json decodes ("" for
// none), and false for a field it ignores.
func jsonFieldName(f reflect.StructField) (string, bool) {
	tag, hasTag := f.Tag.Lookup("json")
	if tag == "-" {
		return "", false
	}
	name, _, _ := strings.Cut(tag, ",")
	if !f.IsExported() && !(f.Anonymous && name == "") {
		return "", false
	}
	if !hasTag {
		return "", true
	}
	return name, true
}
