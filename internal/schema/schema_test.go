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
