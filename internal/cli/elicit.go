package cli

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Interactive elicitation: on a terminal, the client commands answer an
// elicitation request by asking the user, one question per property of the
// requested schema. Off a terminal they declare no elicitation capability,
// so a server does not ask.

// Elicitation actions (ElicitResult.action).
const (
	actionAccept  = "accept"
	actionDecline = "decline"
	actionCancel  = "cancel"
)

// maxAttempts bounds how often one field is asked again after an answer
// that does not fit; after that the request is cancelled.
const maxAttempts = 5

// isTerminal reports whether both r and w are terminals.
func isTerminal(r io.Reader, w io.Writer) bool {
	tty := func(v any) bool {
		f, ok := v.(*os.File)
		if !ok {
			return false
		}
		fi, err := f.Stat()
		return err == nil && fi.Mode()&os.ModeCharDevice != 0
	}
	return tty(r) && tty(w)
}

// formField is one property of an elicitation's requestedSchema (the
// restricted schema of the spec: flat, primitive properties).
type formField struct {
	name     string
	required bool
	Type     string          `json:"type"`
	Title    string          `json:"title"`
	Desc     string          `json:"description"`
	Format   string          `json:"format"`
	Enum     []string        `json:"enum"`
	EnumName []string        `json:"enumNames"`
	OneOf    []enumOption    `json:"oneOf"`
	Items    *formItems      `json:"items"`
	Min      *float64        `json:"minimum"`
	Max      *float64        `json:"maximum"`
	MinLen   *int            `json:"minLength"`
	MaxLen   *int            `json:"maxLength"`
	Default  json.RawMessage `json:"default"`
}

type enumOption struct {
	Const string `json:"const"`
	Title string `json:"title"`
}

type formItems struct {
	Enum  []string     `json:"enum"`
	AnyOf []enumOption `json:"anyOf"`
}

// choices returns the allowed values of a single-select field, or of the
// items of a multi-select one, with their titles.
func (f *formField) choices() (values, titles []string) {
	src := f.Enum
	opts := f.OneOf
	if f.Type == "array" && f.Items != nil {
		src, opts = f.Items.Enum, f.Items.AnyOf
	}
	for _, o := range opts {
		values, titles = append(values, o.Const), append(titles, o.Title)
	}
	for i, v := range src {
		t := ""
		if i < len(f.EnumName) {
			t = f.EnumName[i]
		}
		values, titles = append(values, v), append(titles, t)
	}
	return values, titles
}

// parseForm reads the properties of a requestedSchema, in the order the
// schema lists them.
func parseForm(schema json.RawMessage) ([]*formField, error) {
	var s struct {
		Type       string          `json:"type"`
		Properties json.RawMessage `json:"properties"`
		Required   []string        `json:"required"`
	}
	if err := json.Unmarshal(schema, &s); err != nil {
		return nil, fmt.Errorf("requestedSchema is not an object schema: %v", err)
	}
	names, err := objectKeys(s.Properties)
	if err != nil {
		return nil, fmt.Errorf("requestedSchema.properties: %v", err)
	}
	var props map[string]json.RawMessage
	json.Unmarshal(s.Properties, &props)
	var fields []*formField
	for _, name := range names {
		f := &formField{name: name, required: slices.Contains(s.Required, name)}
		if err := json.Unmarshal(props[name], f); err != nil {
			return nil, fmt.Errorf("requestedSchema property %q: %v", name, err)
		}
		switch f.Type {
		case "string", "number", "integer", "boolean":
		case "array":
			if v, _ := f.choices(); len(v) == 0 {
				return nil, fmt.Errorf("requestedSchema property %q: an array needs items with enum or anyOf", name)
			}
		default:
			return nil, fmt.Errorf("requestedSchema property %q has type %q; a form takes string, number, integer, boolean or an array of choices", name, f.Type)
		}
		fields = append(fields, f)
	}
	return fields, nil
}

// objectKeys returns the member names of a JSON object in document order.
func objectKeys(raw json.RawMessage) ([]string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, errors.New("not an object")
	}
	var keys []string
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, err
		}
		keys = append(keys, t.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return nil, err
		}
	}
	return keys, nil
}

// formAsker asks elicitation questions on a terminal.
type formAsker struct {
	in  *bufio.Reader
	out io.Writer
}

func newFormAsker(in io.Reader, out io.Writer) *formAsker {
	return &formAsker{in: bufio.NewReader(in), out: out}
}

// errEOF means the user closed the input: the request is cancelled.
var errEOF = errors.New("input closed")

func (a *formAsker) line() (string, error) {
	s, err := a.in.ReadString('\n')
	if err != nil && (s == "" || !errors.Is(err, io.EOF)) {
		return "", errEOF
	}
	return strings.TrimRight(s, "\r\n"), nil
}

// askForm asks for each field of schema and returns the action and, when
// accepted, the content. Closing the input cancels.
func (a *formAsker) askForm(message string, schema json.RawMessage) (string, map[string]any, error) {
	fields, err := parseForm(schema)
	if err != nil {
		return "", nil, err
	}
	fmt.Fprintf(a.out, "\nThe server asks: %s\n", termSafe(message, true))
	if len(fields) > 0 {
		fmt.Fprintf(a.out, "(Enter keeps the [default]; an optional field left empty is left out.)\n")
	}
	content := map[string]any{}
	for _, f := range fields {
		v, ok, err := a.askField(f)
		if err != nil {
			return actionCancel, nil, nil
		}
		if ok {
			content[f.name] = v
		}
	}
	for range maxAttempts {
		fmt.Fprintf(a.out, "Send this answer? [Y]es, [n]o (decline), [c]ancel: ")
		ans, err := a.line()
		if err != nil {
			return actionCancel, nil, nil
		}
		switch strings.ToLower(strings.TrimSpace(ans)) {
		case "", "y", "yes":
			return actionAccept, content, nil
		case "n", "no":
			return actionDecline, nil, nil
		case "c", "cancel":
			return actionCancel, nil, nil
		}
	}
	return actionCancel, nil, nil
}

// askURL shows a URL-mode elicitation and waits for the user.
func (a *formAsker) askURL(message, url string) string {
	fmt.Fprintf(a.out, "\nThe server asks you to open this URL:\n%s%s\n", describeURL(url), termSafe(message, true))
	for range maxAttempts {
		fmt.Fprintf(a.out, "Press Enter once done, or type n to decline, c to cancel: ")
		ans, err := a.line()
		if err != nil {
			return actionCancel
		}
		switch strings.ToLower(strings.TrimSpace(ans)) {
		case "", "y", "yes":
			return actionAccept
		case "n", "no":
			return actionDecline
		case "c", "cancel":
			return actionCancel
		}
	}
	return actionCancel
}

// askField asks for one field until the answer fits (at most maxAttempts
// times). It returns the value and whether there is one.
func (a *formAsker) askField(f *formField) (any, bool, error) {
	name := termSafe(f.name, false)
	label := name
	if f.Title != "" {
		label = termSafe(f.Title, false) + " (" + name + ")"
	}
	var hints []string
	hints = append(hints, f.Type)
	if f.Format != "" {
		hints[0] += ", " + termSafe(f.Format, false)
	}
	if f.required {
		hints = append(hints, "required")
	}
	values, titles := f.choices()
	if len(values) > 0 {
		fmt.Fprintf(a.out, "%s:\n", label)
		for i, v := range values {
			t := v
			if titles[i] != "" && titles[i] != v {
				t = titles[i] + " (" + v + ")"
			}
			fmt.Fprintf(a.out, "  %d) %s\n", i+1, termSafe(t, false))
		}
		if f.Type == "array" {
			hints = append(hints, "numbers or values, comma-separated")
		} else {
			hints = append(hints, "a number or a value")
		}
	}
	if f.Desc != "" {
		fmt.Fprintf(a.out, "  %s\n", termSafe(oneLine(f.Desc, 200), false))
	}
	def := ""
	if len(f.Default) > 0 {
		var s string
		if json.Unmarshal(f.Default, &s) == nil {
			def = s
		} else {
			def = string(f.Default)
		}
	}
	for range maxAttempts {
		fmt.Fprintf(a.out, "%s (%s)", label, strings.Join(hints, ", "))
		if def != "" {
			fmt.Fprintf(a.out, " [%s]", termSafe(def, false))
		}
		fmt.Fprint(a.out, ": ")
		ans, err := a.line()
		if err != nil {
			return nil, false, err
		}
		ans = strings.TrimSpace(ans)
		if ans == "" {
			switch {
			case len(f.Default) > 0:
				var v any
				json.Unmarshal(f.Default, &v)
				return v, true, nil
			case !f.required:
				return nil, false, nil
			}
			fmt.Fprintf(a.out, "  %s is required.\n", name)
			continue
		}
		v, err := f.parse(ans, values)
		if err != nil {
			fmt.Fprintf(a.out, "  %v\n", err)
			continue
		}
		return v, true, nil
	}
	return nil, false, errEOF
}

// parse turns the user's answer into the field's JSON value.
func (f *formField) parse(ans string, values []string) (any, error) {
	pick := func(s string) (string, error) {
		s = strings.TrimSpace(s)
		if n, err := strconv.Atoi(s); err == nil && n >= 1 && n <= len(values) && !slices.Contains(values, s) {
			return values[n-1], nil
		}
		if slices.Contains(values, s) {
			return s, nil
		}
		return "", fmt.Errorf("%q is not one of the choices", s)
	}
	switch f.Type {
	case "array":
		var out []string
		for part := range strings.SplitSeq(ans, ",") {
			v, err := pick(part)
			if err != nil {
				return nil, err
			}
			if !slices.Contains(out, v) {
				out = append(out, v)
			}
		}
		sort.SliceStable(out, func(i, j int) bool { return slices.Index(values, out[i]) < slices.Index(values, out[j]) })
		return out, nil
	case "boolean":
		switch strings.ToLower(ans) {
		case "y", "yes", "true", "1":
			return true, nil
		case "n", "no", "false", "0":
			return false, nil
		}
		return nil, fmt.Errorf("answer yes or no")
	case "number", "integer":
		n, err := strconv.ParseFloat(ans, 64)
		if err != nil {
			return nil, fmt.Errorf("%q is not a number", ans)
		}
		if f.Type == "integer" && n != float64(int64(n)) {
			return nil, fmt.Errorf("%q is not a whole number", ans)
		}
		if f.Min != nil && n < *f.Min {
			return nil, fmt.Errorf("the smallest allowed is %v", *f.Min)
		}
		if f.Max != nil && n > *f.Max {
			return nil, fmt.Errorf("the largest allowed is %v", *f.Max)
		}
		if f.Type == "integer" {
			return int64(n), nil
		}
		return n, nil
	}
	if len(values) > 0 {
		return pick(ans)
	}
	if n := len([]rune(ans)); (f.MinLen != nil && n < *f.MinLen) || (f.MaxLen != nil && n > *f.MaxLen) {
		return nil, fmt.Errorf("the length must be between %d and %d characters", deref(f.MinLen, 0), deref(f.MaxLen, n))
	}
	return ans, nil
}

func deref(p *int, d int) int {
	if p == nil {
		return d
	}
	return *p
}
