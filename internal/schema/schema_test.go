package schema

import (
	"reflect"
	"strings"
	"testing"
)

func TestCompileAndValidate(t *testing.T) {
	const contact = `{
		"$schema": "https://json-schema.org/draft/2020-12/schema",
		"type": "object",
		"$defs": {"address": {"$anchor": "addressDef", "type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}},
		"properties": {"address": {"$ref": "#addressDef"}, "contactMethod": {"enum": ["phone", "email"]}, "phone": {"type": "string"}, "email": {"type": "string"}},
		"if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
		"then": {"required": ["phone"]},
		"else": {"required": ["email"]},
		"additionalProperties": false
	}`
	v, err := Compile("contact", []byte(contact))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		in      string
		wantErr string // substring; "" means valid
	}{
		{`{"contactMethod":"phone","phone":"1"}`, ""},
		{`{"contactMethod":"phone"}`, "phone"},
		{`{"email":"a@b"}`, ""},
		{`{}`, "email"},
		{`{"email":"a@b","address":{}}`, "/address"},
		{`{"email":"a@b","extra":1}`, "extra"},
		{`{"email":"a@b","address":{"city":"Oslo"}}`, ""},
	}
	for _, tt := range tests {
		err := v.Validate([]byte(tt.in))
		switch {
		case tt.wantErr == "" && err != nil:
			t.Errorf("Validate(%s) = %v, want valid", tt.in, err)
		case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
			t.Errorf("Validate(%s) = %v, want an error mentioning %q", tt.in, err, tt.wantErr)
		}
	}
}

func TestCompileRefusesExternalRefs(t *testing.T) {
	for _, ref := range []string{"https://example.com/schema.json", "file:///etc/passwd", "http://127.0.0.1:1/x"} {
		_, err := Compile("ext", []byte(`{"type":"object","properties":{"a":{"$ref":"`+ref+`"}}}`))
		if err == nil || !strings.Contains(err.Error(), "not resolved") {
			t.Errorf("$ref %s: err = %v, want a refusal", ref, err)
		}
	}
}

func TestCompileBounds(t *testing.T) {
	deep := strings.Repeat(`{"type":"object","properties":{"a":`, MaxDepth) + `{}` + strings.Repeat(`}}`, MaxDepth)
	if _, err := Compile("deep", []byte(deep)); err == nil || !strings.Contains(err.Error(), "deeper") {
		t.Errorf("deep schema: err = %v", err)
	}
	var b strings.Builder
	b.WriteString(`{"anyOf":[`)
	for i := range MaxSubschemas + 1 {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`{"type":"string"}`)
	}
	b.WriteString(`]}`)
	if _, err := Compile("wide", []byte(b.String())); err == nil || !strings.Contains(err.Error(), "subschemas") {
		t.Errorf("wide schema: err = %v", err)
	}
}

func TestInfer(t *testing.T) {
	type in struct {
		Name  string `json:"name" jsonschema:"the name"`
		Count int    `json:"count,omitempty"`
	}
	b, err := Infer(reflect.TypeFor[in]())
	if err != nil {
		t.Fatal(err)
	}
	v, err := Compile("in", b)
	if err != nil {
		t.Fatal(err)
	}
	if err := v.Validate([]byte(`{"name":"x"}`)); err != nil {
		t.Errorf("count should be optional: %v", err)
	}
	if err := v.Validate([]byte(`{"count":1}`)); err == nil {
		t.Error("name should be required")
	}
	if !strings.Contains(string(b), `"description":"the name"`) {
		t.Errorf("description missing from %s", b)
	}
}

func TestValidateKeywords(t *testing.T) {
	tests := []struct {
		name, schema string
		valid        []string
		invalid      []string
	}{
		{"unevaluatedProperties", `{"type":"object","properties":{"a":{}},"allOf":[{"properties":{"b":{}}}],"unevaluatedProperties":false}`,
			[]string{`{"a":1,"b":2}`}, []string{`{"a":1,"c":3}`}},
		{"prefixItems and items", `{"type":"array","prefixItems":[{"type":"string"}],"items":{"type":"integer"}}`,
			[]string{`["a",1,2]`, `[]`}, []string{`[1]`, `["a","b"]`}},
		{"dependentRequired", `{"dependentRequired":{"card":["cvv"]}}`,
			[]string{`{"card":1,"cvv":2}`, `{}`}, []string{`{"card":1}`}},
		{"$defs and $ref", `{"$defs":{"pos":{"type":"integer","minimum":1}},"type":"object","properties":{"n":{"$ref":"#/$defs/pos"}}}`,
			[]string{`{"n":3}`}, []string{`{"n":0}`, `{"n":"3"}`}},
		{"$dynamicRef", `{"$id":"https://example.com/tree","$dynamicAnchor":"node","type":"object","properties":{"kids":{"type":"array","items":{"$dynamicRef":"#node"}}}}`,
			[]string{`{"kids":[{"kids":[]}]}`}, []string{`{"kids":[1]}`}},
		{"oneOf", `{"oneOf":[{"type":"integer"},{"minimum":2}]}`,
			[]string{`1`, `2.5`}, []string{`3`}},
		{"large integers", `{"type":"integer","maximum":100}`,
			[]string{`-9007199254740993`, `100`, `1e2`}, []string{`9007199254740993`, `1.5`, `"1"`, `1e400`}},
		{"draft-07 items array", `{"$schema":"http://json-schema.org/draft-07/schema#","items":[{"type":"string"}],"additionalItems":false}`,
			[]string{`["a"]`}, []string{`["a","b"]`, `[1]`}},
		{"const and enum", `{"properties":{"k":{"const":"x"},"e":{"enum":[1,"two",null]}}}`,
			[]string{`{"k":"x","e":null}`, `{"e":1.0}`}, []string{`{"k":"y"}`, `{"e":2}`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := Compile(tt.name, []byte(tt.schema))
			if err != nil {
				t.Fatal(err)
			}
			for _, in := range tt.valid {
				if err := v.Validate([]byte(in)); err != nil {
					t.Errorf("Validate(%s) = %v, want valid", in, err)
				}
			}
			for _, in := range tt.invalid {
				if err := v.Validate([]byte(in)); err == nil {
					t.Errorf("Validate(%s) = nil, want an error", in)
				}
			}
		})
	}
}

func TestCompileRefusesInvalidSchemas(t *testing.T) {
	tests := []struct{ schema, want string }{
		{`{"type":"strin"}`, `"type" must name JSON types`},
		{`{"type":["string","string"]}`, `"type" must name JSON types`},
		{`{"properties":{"a":{"type":"int"}}}`, `schema at /properties/a: "type"`},
		{`{"minLength":-1}`, `"minLength" must be a non-negative integer`},
		{`{"items":{"maxItems":1.5}}`, `schema at /items: "maxItems"`},
		{`{"multipleOf":0}`, `"multipleOf" must be a number greater than 0`},
		{`{"minimum":"3"}`, `"minimum" must be a number`},
		{`{"enum":"a"}`, `"enum" must be an array`},
		{`{"required":"a"}`, `not a valid JSON Schema`},
		{`{"pattern":"(a"}`, `pattern`},
		{`{"$ref":"#/$defs/missing"}`, `missing`},
		{`{"$schema":"http://json-schema.org/draft-04/schema#"}`, `dialect http://json-schema.org/draft-04/schema# is not supported`},
		{`{"$schema":"https://json-schema.org/draft/2019-09/schema"}`, `is not supported`},
		{`{"type":"object"} {}`, `not valid JSON`},
	}
	for _, tt := range tests {
		_, err := Compile("bad", []byte(tt.schema))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Compile(%s) = %v, want an error mentioning %q", tt.schema, err, tt.want)
		}
	}
	// Keywords inside a map of property names are names, not keywords.
	if _, err := Compile("names", []byte(`{"properties":{"type":{"type":"string"},"minLength":{"type":"integer"}}}`)); err != nil {
		t.Errorf("properties named like keywords: %v", err)
	}
}
