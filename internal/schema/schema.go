// Package schema is the glue between mcpkit and its JSON Schema libraries:
// it infers schemas from Go types (github.com/google/jsonschema-go) and
// compiles and applies them (github.com/santhosh-tekuri/jsonschema/v6, a
// complete JSON Schema 2020-12 implementation). Schemas are compiled once,
// at registration; $refs are resolved only inside the schema itself, never
// over the network or from files.
package schema

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"strings"

	infer "github.com/google/jsonschema-go/jsonschema"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// Bounds on schemas accepted at registration, against schemas that would
// make validation expensive.
const (
	MaxDepth      = 32
	MaxSubschemas = 2000
)

// Validator validates JSON instances against one compiled schema. It is
// safe for concurrent use.
type Validator struct {
	s    *jsonschema.Schema
	flat *flat // an allocation-free check for simple schemas, or nil
}

// noLoader refuses every external reference.
type noLoader struct{}

func (noLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("external $ref %q is not resolved (only references inside the schema are)", url)
}

// Compile compiles a schema (JSON text). name identifies it in errors. A
// schema without $schema is JSON Schema 2020-12.
func Compile(name string, schemaJSON []byte) (*Validator, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schemaJSON))
	if err != nil {
		return nil, fmt.Errorf("schema is not valid JSON: %w", err)
	}
	if err := checkBounds(doc); err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(noLoader{})
	loc := "urn:mcpkit:schema:" + strings.NewReplacer("/", "_", " ", "_").Replace(name)
	if err := c.AddResource(loc, doc); err != nil {
		return nil, err
	}
	s, err := c.Compile(loc)
	if err != nil {
		return nil, err
	}
	return &Validator{s: s, flat: compileFlat(doc)}, nil
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

// Validate validates the JSON instance. The error, if any, explains every
// violation in one message a model can act on.
func (v *Validator) Validate(instance []byte) error {
	if v.flat != nil && wellFormed(instance) && v.flat.valid(instance) {
		return nil
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(instance))
	if err != nil {
		return fmt.Errorf("not valid JSON: %w", err)
	}
	return v.ValidateValue(doc)
}

// ValidateValue validates an instance already decoded with numbers as
// json.Number (as Decode does).
func (v *Validator) ValidateValue(doc any) error {
	err := v.s.Validate(doc)
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if errors.As(err, &ve) {
		return errors.New(describe(ve))
	}
	return err
}

var printer = message.NewPrinter(language.English)

// describe flattens a validation error tree into "at /path: reason" lines.
func describe(ve *jsonschema.ValidationError) string {
	var lines []string
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			loc := "/" + strings.Join(e.InstanceLocation, "/")
			lines = append(lines, fmt.Sprintf("at %s: %s", loc, e.ErrorKind.LocalizedString(printer)))
			return
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	return strings.Join(lines, "; ")
}

// Infer returns the JSON Schema for a Go type as JSON text. Struct fields
// follow encoding/json names; a field is required unless its tag says
// omitempty or omitzero. The `jsonschema` struct tag sets a description.
func Infer(t reflect.Type) ([]byte, error) {
	s, err := infer.ForType(t, &infer.ForOptions{})
	if err != nil {
		return nil, err
	}
	return s.MarshalJSON()
}
