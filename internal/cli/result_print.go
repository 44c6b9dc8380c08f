package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// The readable forms of results: text content as text, everything else
// as indented JSON. --json prints results as received instead.

// indentJSON indents raw JSON with two spaces, each line after the first
// starting with prefix; invalid JSON comes back as it is.
func indentJSON(raw json.RawMessage, prefix string) string {
	var b bytes.Buffer
	if err := json.Indent(&b, raw, prefix, "  "); err != nil {
		return string(raw)
	}
	return b.String()
}

// printRaw prints a result as the server sent it, on one line.
func printRaw(w io.Writer, raw json.RawMessage) {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		b.Reset()
		b.Write(raw)
	}
	b.WriteByte('\n')
	w.Write(b.Bytes())
}

// withNewline returns s ending in exactly one newline.
func withNewline(s string) string { return strings.TrimRight(s, "\n") + "\n" }

// printContent prints content blocks: a text block as its text, any other
// block (image, audio, resource link, embedded resource) as indented JSON.
// An embedded text resource prints its text under a "resource URI" line.
func printContent(w io.Writer, blocks []json.RawMessage) {
	for _, raw := range blocks {
		var b struct {
			Type     string `json:"type"`
			Text     *string
			Resource *struct {
				URI  string  `json:"uri"`
				Text *string `json:"text"`
			} `json:"resource"`
		}
		json.Unmarshal(raw, &b)
		switch {
		case b.Type == "text" && b.Text != nil:
			io.WriteString(w, forTerminal(w, withNewline(*b.Text)))
		case b.Type == "resource" && b.Resource != nil && b.Resource.Text != nil:
			fmt.Fprintf(w, "[resource %s]\n%s", termSafe(b.Resource.URI, false), forTerminal(w, withNewline(*b.Resource.Text)))
		default:
			io.WriteString(w, forTerminal(w, withNewline(indentJSON(raw, ""))))
		}
	}
}

// callResult is the part of a CallToolResult the printer reads.
type callResult struct {
	Content           []json.RawMessage `json:"content"`
	StructuredContent json.RawMessage   `json:"structuredContent"`
	IsError           bool              `json:"isError"`
}

// printCallResult prints a CallToolResult readably and reports whether it
// is a tool error. Structured content is printed only when there is no
// content (a tool that returns both repeats the one in the other).
func printCallResult(w io.Writer, raw json.RawMessage) (isError bool, err error) {
	var r callResult
	if err := json.Unmarshal(raw, &r); err != nil {
		return false, fmt.Errorf("the result is not a CallToolResult: %v", err)
	}
	printContent(w, r.Content)
	if len(r.Content) == 0 && len(r.StructuredContent) > 0 && string(r.StructuredContent) != "null" {
		io.WriteString(w, forTerminal(w, withNewline(indentJSON(r.StructuredContent, ""))))
	}
	return r.IsError, nil
}

// printReadResult prints a ReadResourceResult: text contents as text (a
// "[URI]" line before each when there are several), blobs as indented
// JSON.
func printReadResult(w io.Writer, raw json.RawMessage) error {
	var r struct {
		Contents []json.RawMessage `json:"contents"`
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		return fmt.Errorf("the result is not a ReadResourceResult: %v", err)
	}
	for _, c := range r.Contents {
		var item struct {
			URI  string  `json:"uri"`
			Text *string `json:"text"`
		}
		json.Unmarshal(c, &item)
		if len(r.Contents) > 1 {
			fmt.Fprintf(w, "[%s]\n", termSafe(item.URI, false))
		}
		if item.Text != nil {
			io.WriteString(w, forTerminal(w, withNewline(*item.Text)))
		} else {
			io.WriteString(w, forTerminal(w, withNewline(indentJSON(c, ""))))
		}
	}
	return nil
}

// printPromptResult prints a GetPromptResult: its description, then each
// message as "ROLE:" followed by its content.
func printPromptResult(w io.Writer, raw json.RawMessage) error {
	var r struct {
		Description string `json:"description"`
		Messages    []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		return fmt.Errorf("the result is not a GetPromptResult: %v", err)
	}
	if r.Description != "" {
		fmt.Fprintf(w, "%s\n\n", forTerminal(w, r.Description))
	}
	for i, m := range r.Messages {
		if i > 0 {
			io.WriteString(w, "\n")
		}
		fmt.Fprintf(w, "%s:\n", termSafe(m.Role, false))
		blocks := []json.RawMessage{m.Content}
		if len(m.Content) > 0 && m.Content[0] == '[' {
			json.Unmarshal(m.Content, &blocks)
		}
		printContent(w, blocks)
	}
	return nil
}

// printList prints the items of a list as an aligned table, one item a
// line, with the columns that suit the kind.
func printList(w io.Writer, kind string, items []json.RawMessage) {
	var buf bytes.Buffer
	tw := tabwriter.NewWriter(&buf, 0, 4, 2, ' ', 0)
	for _, raw := range items {
		var it struct {
			Name        string `json:"name"`
			Title       string `json:"title"`
			Description string `json:"description"`
			URI         string `json:"uri"`
			URITemplate string `json:"uriTemplate"`
			MIMEType    string `json:"mimeType"`
			Arguments   []struct {
				Name     string `json:"name"`
				Required bool   `json:"required"`
			} `json:"arguments"`
		}
		json.Unmarshal(raw, &it)
		desc := oneLine(it.Description, 100)
		it.Name, it.URI, it.URITemplate, it.MIMEType = termSafe(it.Name, false), termSafe(it.URI, false), termSafe(it.URITemplate, false), termSafe(it.MIMEType, false)
		switch kind {
		case "resources":
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", it.URI, it.Name, it.MIMEType, desc)
		case "resourceTemplates":
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", it.URITemplate, it.Name, it.MIMEType, desc)
		case "prompts":
			var args []string
			for _, a := range it.Arguments {
				if a.Required {
					args = append(args, termSafe(a.Name, false))
				} else {
					args = append(args, "["+termSafe(a.Name, false)+"]")
				}
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\n", it.Name, strings.Join(args, " "), desc)
		default:
			fmt.Fprintf(tw, "%s\t%s\n", it.Name, desc)
		}
	}
	tw.Flush()
	for _, line := range strings.SplitAfter(buf.String(), "\n") {
		if line != "" {
			io.WriteString(w, strings.TrimRight(line, " \n")+"\n")
		}
	}
}

// isToolError reports whether raw is a CallToolResult with isError set.
func isToolError(raw json.RawMessage) bool {
	var r callResult
	return json.Unmarshal(raw, &r) == nil && r.IsError
}
