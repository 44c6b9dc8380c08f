package schema

import (
	"testing"
)

// flatSchemas are schemas the flat check handles, or refuses to handle.
var flatSchemas = []struct {
	name   string
	schema string
	flat   bool // whether compileFlat accepts it
}{
	{"inferred", `{"type":"object","properties":{"text":{"type":"string","description":"d"},"n":{"type":"integer"},"f":{"type":"number"},"b":{"type":"boolean"}},"required":["text","b"],"additionalProperties":false}`, true},
	{"open", `{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"},"level":{"type":"integer"}}}`, true},
	{"empty", `{"type":"object"}`, true},
	{"nullable", `{"type":"object","properties":{"a":{"type":["string","null"]}},"required":["a"]}`, true},
	{"2020-12 $schema", `{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","properties":{"a":{"type":"string"}}}`, true},
	{"required not declared", `{"type":"object","required":["ghost"]}`, true},
	{"other draft", `{"$schema":"http://json-schema.org/draft-07/schema#","type":"object"}`, false},
	{"enum", `{"type":"object","properties":{"a":{"type":"string","enum":["x"]}}}`, false},
	{"array", `{"type":"object","properties":{"a":{"type":"array","items":{"type":"string"}}}}`, false},
	{"minLength", `{"type":"object","properties":{"a":{"type":"string","minLength":2}}}`, false},
	{"no type", `{"properties":{"a":{"type":"string"}}}`, false},
	{"schema additionalProperties", `{"type":"object","additionalProperties":{"type":"string"}}`, false},
	{"allOf", `{"type":"object","allOf":[{"required":["a"]}]}`, false},
}

var flatInstances = []string{
	`{}`, `{"text":"hi","b":true}`, `{"text":"hi","b":false,"n":3,"f":1.5}`, `{"text":"hi","b":true,"n":1.0}`,
	`{"text":"hi","b":true,"n":1.5}`, `{"text":"hi","b":true,"n":1e2}`, `{"text":1,"b":true}`, `{"text":"hi"}`,
	`{"text":"hi","b":true,"extra":1}`, `{"text":"hi","text":"again","b":true}`, `{"te\u0078t":"hi","b":true}`,
	`{"region":"eu","level":2}`, `{"region":null}`, `{"a":null}`, `{"a":"x"}`, `{"a":1}`, `{"a":["x"]}`,
	`[]`, `"text"`, `null`, `{"ghost":1}`, `{"text":"hi","b":true,"n":-0}`, `{"text":{"nested":1},"b":true}`,
}

// TestFlatAgreesWithFullValidator checks that the flat check never calls
// an instance valid that the full validator rejects, and that it handles
// the common cases itself.
func TestFlatAgreesWithFullValidator(t *testing.T) {
	for _, s := range flatSchemas {
		v, err := Compile(s.name, []byte(s.schema))
		if err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		if got := v.flat != nil; got != s.flat {
			t.Errorf("%s: flat = %v, want %v", s.name, got, s.flat)
		}
		for _, in := range flatInstances {
			fullErr := v.full(mustDecode(t, in))
			if v.flat != nil && v.flat.valid([]byte(in)) && fullErr != nil {
				t.Errorf("%s: flat accepts %s, full validator says %v", s.name, in, fullErr)
			}
			if err := v.Validate([]byte(in)); (err == nil) != (fullErr == nil) {
				t.Errorf("%s: Validate(%s) = %v, full validator says %v", s.name, in, err, fullErr)
			}
		}
	}
}

func TestFlatHandlesCommonCases(t *testing.T) {
	v, err := Compile("inferred", []byte(flatSchemas[0].schema))
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range []string{`{"text":"hi","b":true}`, `{"text":"hi","b":false,"n":3,"f":1.5}`, `{"b":true,"text":"\u00e9"}`} {
		if !v.flat.valid([]byte(in)) {
			t.Errorf("flat check does not accept %s", in)
		}
		b := []byte(in)
		if n := testing.AllocsPerRun(100, func() { v.Validate(b) }); n != 0 {
			t.Errorf("Validate(%s) allocates %v times, want 0", in, n)
		}
	}
}

func mustDecode(t *testing.T, s string) any {
	t.Helper()
	doc, err := decode([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

// FuzzFlat checks, on arbitrary instances, that the flat check and the
// full validator agree whenever the flat check says valid.
func FuzzFlat(f *testing.F) {
	for _, in := range flatInstances {
		f.Add(in)
	}
	var vs []*Validator
	for _, s := range flatSchemas {
		v, err := Compile(s.name, []byte(s.schema))
		if err != nil {
			f.Fatal(err)
		}
		if v.flat != nil {
			vs = append(vs, v)
		}
	}
	f.Fuzz(func(t *testing.T, in string) {
		doc, err := decode([]byte(in))
		if err != nil || !wellFormed([]byte(in)) {
			for _, v := range vs {
				if v.Validate([]byte(in)) == nil {
					t.Fatalf("Validate accepts malformed %q", in)
				}
			}
			return
		}
		for _, v := range vs {
			if v.flat.valid([]byte(in)) {
				if err := v.full(doc); err != nil {
					t.Fatalf("flat accepts %q; full validator: %v", in, err)
				}
			}
		}
	})
}
