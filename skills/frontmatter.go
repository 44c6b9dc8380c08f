package skills

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"github.com/mcpkit/mcpkit/internal/wire"
)

// Limits of the frontmatter parser. They are far above what a real skill
// needs (the Agent Skills specification caps a description at 1,024
// characters) and bound the work a hostile SKILL.md can cause.
const (
	// MaxFrontmatterBytes bounds the YAML between the two "---" lines.
	MaxFrontmatterBytes = 64 << 10
	// maxNodes bounds the YAML nodes visited while rendering the
	// frontmatter as JSON, aliases expanded: it defeats alias bombs.
	maxNodes = 100_000
	// maxDepth bounds the nesting of mappings and sequences.
	maxDepth = 64
)

// ParseFrontmatter splits a SKILL.md into its YAML frontmatter, rendered as
// a JSON object with every key kept in the order written, and the body that
// follows. The block must open the file (after an optional UTF-8 byte order
// mark) with a "---" line and end with a line that is "---" (trailing
// spaces and tabs allowed); lines may end in "\n" or "\r\n".
//
// Scalars keep their YAML 1.2 meaning: true and false are booleans, numbers
// are numbers, null and ~ are null, and everything else (dates included)
// is a string exactly as written. Anchors, aliases and merge keys ("<<")
// are resolved. A frontmatter that is missing gives an error wrapping
// ErrNoFrontmatter; one that is not a YAML mapping, repeats a key, uses a
// non-scalar key, holds a value JSON cannot carry (.inf, .nan), or passes
// MaxFrontmatterBytes or the parser's nesting and alias limits gives one
// wrapping ErrMalformedFrontmatter.
func ParseFrontmatter(data []byte) (frontmatter json.RawMessage, body []byte, err error) {
	yml, body, ok := splitFrontmatter(data)
	if !ok {
		return nil, nil, ErrNoFrontmatter
	}
	if len(yml) > MaxFrontmatterBytes {
		return nil, nil, fmt.Errorf("%w: longer than %d bytes", ErrMalformedFrontmatter, MaxFrontmatterBytes)
	}
	if !utf8.Valid(yml) {
		return nil, nil, fmt.Errorf("%w: not valid UTF-8", ErrMalformedFrontmatter)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(yml, &doc); err != nil {
		return nil, nil, fmt.Errorf("%w: %v", ErrMalformedFrontmatter, err)
	}
	root := &doc
	if root.Kind == yaml.DocumentNode && len(root.Content) == 1 {
		root = root.Content[0]
	}
	if root.Kind == yaml.AliasNode {
		root = root.Alias
	}
	if root.Kind != yaml.MappingNode {
		return nil, nil, fmt.Errorf("%w: it must be a YAML mapping of keys to values", ErrMalformedFrontmatter)
	}
	c := converter{budget: maxNodes}
	out, err := c.value(nil, root, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %v", ErrMalformedFrontmatter, err)
	}
	return out, body, nil
}

// splitFrontmatter finds the frontmatter block as the conformance suite's
// reference reader does: /^---\r?\n([\s\S]*?)\r?\n---[ \t]*(?:\r?\n|$)/
// after an optional byte order mark.
func splitFrontmatter(data []byte) (yml, body []byte, ok bool) {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	var rest []byte
	switch {
	case bytes.HasPrefix(data, []byte("---\n")):
		rest = data[4:]
	case bytes.HasPrefix(data, []byte("---\r\n")):
		rest = data[5:]
	default:
		return nil, nil, false
	}
	// The closing line is searched from the first line break, so that the
	// block can be empty only when a blank line separates the two
	// delimiters, as in the reference reader.
	for i := 0; i < len(rest); {
		nl := bytes.IndexByte(rest[i:], '\n')
		if nl < 0 {
			return nil, nil, false
		}
		end := i + nl // rest[end] == '\n'
		line := rest[end+1:]
		if bytes.HasPrefix(line, []byte("---")) {
			tail := line[3:]
			j := 0
			for j < len(tail) && (tail[j] == ' ' || tail[j] == '\t') {
				j++
			}
			var after []byte
			closed := false
			switch {
			case j == len(tail):
				closed = true
			case tail[j] == '\n':
				closed, after = true, tail[j+1:]
			case tail[j] == '\r' && j+1 < len(tail) && tail[j+1] == '\n':
				closed, after = true, tail[j+2:]
			}
			if closed {
				y := rest[:end]
				if len(y) > 0 && y[len(y)-1] == '\r' {
					y = y[:len(y)-1]
				}
				return y, after, true
			}
		}
		i = end + 1
	}
	return nil, nil, false
}

// converter renders a YAML node tree as JSON.
type converter struct {
	budget int
}

func (c *converter) value(buf []byte, n *yaml.Node, depth int) ([]byte, error) {
	c.budget--
	if c.budget < 0 {
		return nil, errors.New("too many values (aliases expanded)")
	}
	if depth > maxDepth {
		return nil, fmt.Errorf("nested deeper than %d levels", maxDepth)
	}
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			return append(buf, "null"...), nil
		}
		return c.value(buf, n.Content[0], depth)
	case yaml.AliasNode:
		if n.Alias == nil {
			return nil, errors.New("unknown alias")
		}
		return c.value(buf, n.Alias, depth+1)
	case yaml.SequenceNode:
		buf = append(buf, '[')
		for i, e := range n.Content {
			if i > 0 {
				buf = append(buf, ',')
			}
			var err error
			if buf, err = c.value(buf, e, depth+1); err != nil {
				return nil, err
			}
		}
		return append(buf, ']'), nil
	case yaml.MappingNode:
		pairs, err := c.pairs(n, depth)
		if err != nil {
			return nil, err
		}
		buf = append(buf, '{')
		for i, p := range pairs {
			if i > 0 {
				buf = append(buf, ',')
			}
			buf = wire.AppendString(buf, p.key)
			buf = append(buf, ':')
			if buf, err = c.value(buf, p.val, depth+1); err != nil {
				return nil, err
			}
		}
		return append(buf, '}'), nil
	case yaml.ScalarNode:
		return c.scalar(buf, n)
	}
	return nil, fmt.Errorf("line %d: unsupported YAML node", n.Line)
}

type pair struct {
	key string
	val *yaml.Node
}

// pairs returns a mapping's keys and values in the order written, with the
// keys of merged mappings ("<<: *base") added after them where not already
// present, as YAML's merge key type says. A repeated key is an error.
func (c *converter) pairs(n *yaml.Node, depth int) ([]pair, error) {
	if depth > maxDepth {
		return nil, fmt.Errorf("nested deeper than %d levels", maxDepth)
	}
	var out []pair
	seen := make(map[string]bool, len(n.Content)/2)
	var merges []*yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		c.budget--
		if c.budget < 0 {
			return nil, errors.New("too many values (aliases expanded)")
		}
		if k.Kind == yaml.AliasNode && k.Alias != nil {
			k = k.Alias
		}
		if k.Kind != yaml.ScalarNode {
			return nil, fmt.Errorf("line %d: a key must be a scalar, not a mapping or sequence", k.Line)
		}
		if k.ShortTag() == "!!merge" {
			merges = append(merges, v)
			continue
		}
		if seen[k.Value] {
			return nil, fmt.Errorf("line %d: key %q repeated", k.Line, k.Value)
		}
		seen[k.Value] = true
		out = append(out, pair{k.Value, v})
	}
	for _, m := range merges {
		if m.Kind == yaml.AliasNode && m.Alias != nil {
			m = m.Alias
		}
		var sources []*yaml.Node
		switch m.Kind {
		case yaml.MappingNode:
			sources = []*yaml.Node{m}
		case yaml.SequenceNode:
			for _, e := range m.Content {
				if e.Kind == yaml.AliasNode && e.Alias != nil {
					e = e.Alias
				}
				sources = append(sources, e)
			}
		default:
			return nil, fmt.Errorf("line %d: a merge key (<<) needs a mapping or a sequence of mappings", m.Line)
		}
		for _, src := range sources {
			if src.Kind != yaml.MappingNode {
				return nil, fmt.Errorf("line %d: a merge key (<<) needs a mapping or a sequence of mappings", src.Line)
			}
			sub, err := c.pairs(src, depth+1)
			if err != nil {
				return nil, err
			}
			for _, p := range sub {
				if !seen[p.key] {
					seen[p.key] = true
					out = append(out, p)
				}
			}
		}
	}
	return out, nil
}

func (c *converter) scalar(buf []byte, n *yaml.Node) ([]byte, error) {
	switch n.ShortTag() {
	case "!!null":
		return append(buf, "null"...), nil
	case "!!bool", "!!int", "!!float":
		var v any
		if err := n.Decode(&v); err != nil {
			return nil, fmt.Errorf("line %d: %v", n.Line, err)
		}
		if f, ok := v.(float64); ok && (math.IsInf(f, 0) || math.IsNaN(f)) {
			return nil, fmt.Errorf("line %d: %s has no JSON form", n.Line, n.Value)
		}
		b, err := json.Marshal(v)
		if err != nil {
			return nil, fmt.Errorf("line %d: %v", n.Line, err)
		}
		return append(buf, b...), nil
	}
	// Strings, timestamps, binary and custom tags: the text as written.
	return wire.AppendString(buf, n.Value), nil
}
