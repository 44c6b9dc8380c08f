// Package schema is the glue between mcpkit and its JSON Schema library,
// github.com/google/jsonschema-go: it infers schemas from Go types, and
// resolves and applies them (JSON Schema 2020-12, the default dialect, and
// draft-07). Schemas are resolved once, at registration; $refs are resolved
// only inside the schema itself, never over the network or from files.
//
// As in most implementations, "format" is an annotation and is not
// asserted, and "pattern" uses Go's regexp syntax (RE2: no
// back-references). A validation error names the first violation found.
package schema

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"reflect"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
)

// Bounds on schemas accepted at registration, against schemas that would
// make validation expensive.
const (
	MaxDepth      = 32
	MaxSubschemas = 2000
)

// Validator validates JSON instances against one resolved schema. It is
// safe for concurrent use.
type Validator struct {
	rs   *jsonschema.Resolved
	flat *flat // an allocation-free check for simple schemas, or nil
}

// Dialects are the values of "$schema" that Compile accepts; a schema
// without "$schema" is JSON Schema 2020-12.
var Dialects = []string{
	"https://json-schema.org/draft/2020-12/schema",
	"http://json-schema.org/draft-07/schema#",
	"https://json-schema.org/draft-07/schema#",
}

// refuseRemote is the loader for references outside the schema: it
// refuses every one.
func refuseRemote(u *url.URL) (*jsonschema.Schema, error) {
	return nil, fmt.Errorf("external $ref %q is not resolved (only references inside the schema are)", u)
}

// Compile resolves a schema (JSON text) for validation. name identifies it
// in errors. A schema without $schema is JSON Schema 2020-12; a dialect
// other than those in Dialects is refused.
func Compile(name string, schemaJSON []byte) (*Validator, error) {
	return compile(name, schemaJSON, nil)
}

// compile is Compile; s, when not nil, is schemaJSON already decoded (by
// Infer), which spares decoding it again.
func compile(name string, schemaJSON []byte, s *jsonschema.Schema) (*Validator, error) {
	doc, err := decode(schemaJSON)
	if err != nil {
		return nil, fmt.Errorf("schema is not valid JSON: %w", err)
	}
	if err := checkBounds(doc); err != nil {
		return nil, err
	}
	if err := checkKeywords(doc, ""); err != nil {
		return nil, err
	}
	if obj, ok := doc.(map[string]any); ok {
		if d, ok := obj["$schema"]; ok {
			ds, _ := d.(string)
			if !supportedDialect(ds) {
				return nil, fmt.Errorf("schema dialect %v is not supported; supported: 2020-12 (the default) and draft-07", d)
			}
		}
	}
	if s == nil {
		s = new(jsonschema.Schema)
		if err := json.Unmarshal(schemaJSON, s); err != nil {
			return nil, fmt.Errorf("schema %s is not a valid JSON Schema: %w", name, err)
		}
	}
	rs, err := s.Resolve(&jsonschema.ResolveOptions{Loader: refuseRemote})
	if err != nil {
		return nil, err
	}
	return &Validator{rs: rs, flat: compileFlat(doc)}, nil
}

func supportedDialect(d string) bool {
	for _, x := range Dialects {
		if d == x || d+"#" == x || d == x+"#" {
			return true
		}
	}
	return false
}

// decode decodes JSON text with numbers as json.Number, so that large
// integers keep their exact value. Trailing data is an error.
func decode(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("trailing data after the JSON value")
	}
	return v, nil
}

// checkBounds enforces MaxDepth and MaxSubschemas on a decoded schema.
func checkBounds(doc any) error {
	count := 0
	var walk func(v any, depth int) error
	walk = func(v any, depth int) error {
		if depth > MaxDepth {
			return fmt.Errorf("schema nests deeper than %d levels", MaxDepth)
		}
		switch v := v.(type) {
		case map[string]any:
			count++
			if count > MaxSubschemas {
				return fmt.Errorf("schema has more than %d subschemas", MaxSubschemas)
			}
			for _, e := range v {
				if err := walk(e, depth+1); err != nil {
					return err
				}
			}
		case []any:
			for _, e := range v {
				if err := walk(e, depth+1); err != nil {
					return err
				}
			}
		}
		return nil
	}
	return walk(doc, 0)
}

// Validate validates the JSON instance. The error, if any, explains the
// violation in a message a model can act on.
func (v *Validator) Validate(instance []byte) error {
	if v.flat != nil && wellFormed(instance) && v.flat.valid(instance) {
		return nil
	}
	doc, err := decode(instance)
	if err != nil {
		return fmt.Errorf("not valid JSON: %w", err)
	}
	return v.full(doc)
}

// ValidateJSON is Validate for an instance known to be one valid JSON value
// (a span of a request that was validated when it was decoded): the flat
// fast path skips checking that again.
func (v *Validator) ValidateJSON(instance []byte) error {
	if v.flat != nil && v.flat.valid(instance) {
		return nil
	}
	return v.Validate(instance)
}

// full validates a decoded instance (numbers as json.Number) with the full
// validator, bypassing the flat fast path.
func (v *Validator) full(doc any) error {
	err := v.rs.Validate(numbers(doc))
	if err == nil {
		return nil
	}
	// "validating root: " adds nothing a model can act on; the rest names
	// the schema location and the violated keyword.
	return errors.New(strings.TrimPrefix(err.Error(), "validating root: "))
}

// numbers replaces the json.Number values in a decoded instance with what
// the validator compares: int64 for integers that fit, float64 otherwise.
func numbers(v any) any {
	switch v := v.(type) {
	case json.Number:
		if i, err := strconv.ParseInt(string(v), 10, 64); err == nil {
			return i
		}
		f, _ := strconv.ParseFloat(string(v), 64) // ±Inf beyond float64's range
		return f
	case map[string]any:
		for k, e := range v {
			v[k] = numbers(e)
		}
	case []any:
		for i, e := range v {
			v[i] = numbers(e)
		}
	}
	return v
}

// Infer returns the JSON Schema for a Go type as JSON text. Struct fields
// follow encoding/json names; a field is required unless its tag says
// omitempty or omitzero. The `jsonschema` struct tag sets a description.
func Infer(t reflect.Type) ([]byte, error) {
	b, _, err := infer(t)
	return b, err
}

func infer(t reflect.Type) ([]byte, *jsonschema.Schema, error) {
	s, err := jsonschema.ForType(t, &jsonschema.ForOptions{})
	if err != nil {
		return nil, nil, err
	}
	b, err := s.MarshalJSON()
	return b, s, err
}

// InferCompile is Infer and Compile of its result in one, without decoding
// the inferred schema from its JSON text again: a server starts sooner.
func InferCompile(name string, t reflect.Type) ([]byte, *Validator, error) {
	b, s, err := infer(t)
	if err != nil {
		return nil, nil, err
	}
	v, err := compile(name, b, s)
	return b, v, err
}

// Keywords whose values are schemas, maps of schemas and arrays of
// schemas, for checkKeywords' walk.
var (
	schemaKeywords      = []string{"not", "if", "then", "else", "items", "contains", "additionalProperties", "propertyNames", "unevaluatedItems", "unevaluatedProperties", "additionalItems", "contentSchema"}
	schemaMapKeywords   = []string{"properties", "patternProperties", "$defs", "definitions", "dependentSchemas", "dependencies"}
	schemaArrayKeywords = []string{"allOf", "anyOf", "oneOf", "prefixItems", "items"}
	countKeywords       = []string{"minLength", "maxLength", "minItems", "maxItems", "minProperties", "maxProperties", "minContains", "maxContains"}
	jsonTypes           = map[string]bool{"null": true, "boolean": true, "object": true, "array": true, "number": true, "string": true, "integer": true}
)

// checkKeywords refuses a schema whose validation keywords hold values the
// meta-schema forbids (a misspelt type, a negative length, a zero
// multipleOf), which would otherwise be ignored or fail at the first call.
// loc is the JSON Pointer of doc in the whole schema.
func checkKeywords(doc any, loc string) error {
	obj, ok := doc.(map[string]any)
	if !ok {
		return nil // true, false, or a value the decoder refuses
	}
	bad := func(kw, why string) error {
		at := loc
		if at == "" {
			at = "/"
		}
		return fmt.Errorf("schema at %s: %q %s", at, kw, why)
	}
	if t, ok := obj["type"]; ok {
		ts, isList := t.([]any)
		if !isList {
			ts = []any{t}
		}
		seen := map[string]bool{}
		for _, e := range ts {
			name, _ := e.(string)
			if !jsonTypes[name] || seen[name] {
				return bad("type", fmt.Sprintf("must name JSON types (null, boolean, object, array, number, string, integer) once each, not %v", e))
			}
			seen[name] = true
		}
	}
	for _, kw := range countKeywords {
		if v, ok := obj[kw]; ok {
			n, isNum := v.(json.Number)
			if i, err := strconv.ParseInt(string(n), 10, 64); !isNum || err != nil || i < 0 {
				return bad(kw, fmt.Sprintf("must be a non-negative integer, not %v", v))
			}
		}
	}
	if v, ok := obj["multipleOf"]; ok {
		n, isNum := v.(json.Number)
		if f, err := strconv.ParseFloat(string(n), 64); !isNum || err != nil || f <= 0 {
			return bad("multipleOf", fmt.Sprintf("must be a number greater than 0, not %v", v))
		}
	}
	for _, kw := range []string{"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"} {
		if v, ok := obj[kw]; ok {
			if _, isNum := v.(json.Number); !isNum {
				if _, isBool := v.(bool); !(isBool && strings.HasPrefix(kw, "exclusive")) {
					return bad(kw, fmt.Sprintf("must be a number, not %v", v))
				}
			}
		}
	}
	if v, ok := obj["enum"]; ok {
		if _, isList := v.([]any); !isList {
			return bad("enum", "must be an array")
		}
	}
	for _, kw := range schemaKeywords {
		if v, ok := obj[kw]; ok {
			if err := checkKeywords(v, loc+"/"+kw); err != nil {
				return err
			}
		}
	}
	for _, kw := range schemaMapKeywords {
		if m, ok := obj[kw].(map[string]any); ok {
			for name, v := range m {
				if err := checkKeywords(v, loc+"/"+kw+"/"+pointerEscape(name)); err != nil {
					return err
				}
			}
		}
	}
	for _, kw := range schemaArrayKeywords {
		if list, ok := obj[kw].([]any); ok {
			for i, v := range list {
				if err := checkKeywords(v, loc+"/"+kw+"/"+strconv.Itoa(i)); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// pointerEscape escapes a key for a JSON Pointer.
func pointerEscape(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}
