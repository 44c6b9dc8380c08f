package mcp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/mcpkit/mcpkit/internal/jsonscan"
)

// This file holds the other direction of the wire types: decoding what a
// server sends (tool results, prompts, resources, input requests) and
// encoding what a client answers (elicitation and sampling results). The
// client package uses them; the server side never does.

// DecodeContent decodes one content item: text, image, audio,
// resource_link or resource. An unknown type is an error.
func DecodeContent(raw json.RawMessage) (Content, error) {
	var w struct {
		Type        string            `json:"type"`
		Text        *string           `json:"text"`
		Data        []byte            `json:"data"`
		MIMEType    string            `json:"mimeType"`
		URI         string            `json:"uri"`
		Name        string            `json:"name"`
		Title       string            `json:"title"`
		Description string            `json:"description"`
		Size        *int64            `json:"size"`
		Resource    *ResourceContents `json:"resource"`
		Annotations *Annotations      `json:"annotations"`
		Icons       []Icon            `json:"icons"`
		Meta        Meta              `json:"_meta"`
	}
	if err := json.Unmarshal(raw, &w); err != nil {
		return nil, fmt.Errorf("content: %w", err)
	}
	switch w.Type {
	case "text":
		if w.Text == nil {
			return nil, errors.New("content: text content without text")
		}
		return &TextContent{Text: *w.Text, Annotations: w.Annotations, Meta: w.Meta}, nil
	case "image":
		return &ImageContent{Data: w.Data, MIMEType: w.MIMEType, Annotations: w.Annotations, Meta: w.Meta}, nil
	case "audio":
		return &AudioContent{Data: w.Data, MIMEType: w.MIMEType, Annotations: w.Annotations, Meta: w.Meta}, nil
	case "resource_link":
		return &ResourceLink{URI: w.URI, Name: w.Name, Title: w.Title, Description: w.Description, MIMEType: w.MIMEType, Size: w.Size, Annotations: w.Annotations, Icons: w.Icons, Meta: w.Meta}, nil
	case "resource":
		if w.Resource == nil {
			return nil, errors.New("content: embedded resource without resource")
		}
		return &EmbeddedResource{Resource: w.Resource, Annotations: w.Annotations, Meta: w.Meta}, nil
	}
	return nil, fmt.Errorf("content: unknown type %q", w.Type)
}

func decodeContents(raw json.RawMessage) ([]Content, error) {
	switch jsonscan.Kind(raw) {
	case 0, 'n':
		return nil, nil
	case '[':
	default:
		return nil, errors.New("content must be an array")
	}
	if !json.Valid(raw) {
		return nil, errors.New("content is not valid JSON")
	}
	var out []Content
	i := jsonscan.SkipSpace(raw, 0) + 1
	for {
		i = jsonscan.SkipSpace(raw, i)
		if i >= len(raw) || raw[i] == ']' {
			break
		}
		if raw[i] == ',' {
			i++
			continue
		}
		end := jsonscan.SkipValue(raw, i)
		c, err := decodeContentFast(raw[i:end])
		if err != nil {
			return nil, err
		}
		out = append(out, c)
		i = end
	}
	if out == nil {
		out = []Content{}
	}
	return out, nil
}

// decodeContentFast decodes a text content item in place, and any other
// through DecodeContent.
func decodeContentFast(raw []byte) (Content, error) {
	it, ok := jsonscan.Object(raw)
	if !ok {
		return DecodeContent(raw)
	}
	var (
		m        jsonscan.Member
		text     []byte
		isText   bool
		other    bool
		hasText  bool
		typeSeen int
	)
	for it.Next(&m) {
		switch {
		case m.KeyIs("type"):
			typeSeen++
			isText = jsonscan.StringEqual(m.Value, "text")
		case m.KeyIs("text"):
			text, hasText = m.Value, true
		default:
			other = true // annotations, _meta...: the general path
		}
	}
	if !isText || other || typeSeen != 1 || !hasText {
		return DecodeContent(raw)
	}
	s, ok := decodeString(text)
	if !ok {
		return nil, errors.New("content: text is not a string")
	}
	return &TextContent{Text: s}, nil
}

// UnmarshalJSON implements json.Unmarshaler: a CallToolResult as a server
// sends it. StructuredContent is kept as a json.RawMessage. It walks the
// result in place (encoding/json has checked it is valid JSON), decoding
// text content without reflection.
func (r *CallToolResult) UnmarshalJSON(b []byte) error {
	it, ok := jsonscan.Object(b)
	if !ok {
		return errors.New("a CallToolResult must be an object")
	}
	*r = CallToolResult{}
	var m jsonscan.Member
	for it.Next(&m) {
		switch {
		case m.KeyIs("content"):
			content, err := decodeContents(m.Value)
			if err != nil {
				return err
			}
			r.Content = content
		case m.KeyIs("structuredContent"):
			if k := jsonscan.Kind(m.Value); k != 0 && k != 'n' {
				r.StructuredContent = json.RawMessage(bytes.Clone(m.Value))
			} else {
				r.StructuredContent = nil
			}
		case m.KeyIs("isError"):
			switch string(m.Value) {
			case "true":
				r.IsError = true
			case "false", "null":
				r.IsError = false
			default:
				return errors.New("isError must be a boolean")
			}
		case m.KeyIs("_meta"):
			meta, err := decodeResultMeta(m.Value)
			if err != nil {
				return fmt.Errorf("_meta: %w", err)
			}
			r.Meta = meta
		}
	}
	return nil
}

// UnmarshalJSON implements json.Unmarshaler. The schemas are kept as
// json.RawMessage, verbatim.
func (t *Tool) UnmarshalJSON(b []byte) error {
	type plain Tool
	var w struct {
		plain
		InputSchema  json.RawMessage `json:"inputSchema"`
		OutputSchema json.RawMessage `json:"outputSchema"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*t = Tool(w.plain)
	t.InputSchema, t.OutputSchema = nil, nil
	if len(w.InputSchema) > 0 {
		t.InputSchema = w.InputSchema
	}
	if len(w.OutputSchema) > 0 {
		t.OutputSchema = w.OutputSchema
	}
	return nil
}

// UnmarshalJSON implements json.Unmarshaler.
func (m *PromptMessage) UnmarshalJSON(b []byte) error {
	var w struct {
		Role    Role            `json:"role"`
		Content json.RawMessage `json:"content"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	c, err := DecodeContent(w.Content)
	if err != nil {
		return err
	}
	*m = PromptMessage{Role: w.Role, Content: c}
	return nil
}

// UnmarshalJSON implements json.Unmarshaler.
func (r *GetPromptResult) UnmarshalJSON(b []byte) error {
	var w struct {
		Description string          `json:"description"`
		Messages    []PromptMessage `json:"messages"`
		Meta        Meta            `json:"_meta"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*r = GetPromptResult{Description: w.Description, Messages: w.Messages, Meta: w.Meta}
	return nil
}

// UnmarshalJSON implements json.Unmarshaler: text contents, or blob
// contents whose base64 data is decoded into Blob.
func (c *ResourceContents) UnmarshalJSON(b []byte) error {
	var w struct {
		URI      string  `json:"uri"`
		MIMEType string  `json:"mimeType"`
		Text     *string `json:"text"`
		Blob     *[]byte `json:"blob"`
		Meta     Meta    `json:"_meta"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*c = ResourceContents{URI: w.URI, MIMEType: w.MIMEType, Meta: w.Meta}
	switch {
	case w.Blob != nil:
		c.Blob = *w.Blob
		if c.Blob == nil {
			c.Blob = []byte{}
		}
	case w.Text != nil:
		c.Text = *w.Text
	default:
		return errors.New("resource contents without text or blob")
	}
	return nil
}

// UnmarshalJSON implements json.Unmarshaler. The caching hints
// (ttlMs, cacheScope) are read into CacheTTL and CacheScope.
func (r *ReadResourceResult) UnmarshalJSON(b []byte) error {
	var w struct {
		Contents   []*ResourceContents `json:"contents"`
		TTLMs      *int64              `json:"ttlMs"`
		CacheScope CacheScope          `json:"cacheScope"`
		Meta       Meta                `json:"_meta"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*r = ReadResourceResult{Contents: w.Contents, CacheScope: w.CacheScope, Meta: w.Meta}
	for i, c := range w.Contents {
		if c == nil {
			return fmt.Errorf("contents[%d] is null", i)
		}
	}
	if w.TTLMs != nil && *w.TTLMs > 0 {
		r.CacheTTL = msDuration(*w.TTLMs)
	}
	return nil
}

// UnmarshalJSON implements json.Unmarshaler: the completion member of a
// completion/complete result.
func (r *CompleteResult) UnmarshalJSON(b []byte) error {
	var w struct {
		Completion *struct {
			Values  []string `json:"values"`
			Total   int      `json:"total"`
			HasMore bool     `json:"hasMore"`
		} `json:"completion"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	if w.Completion == nil {
		return errors.New("the result has no completion member")
	}
	*r = CompleteResult{Values: w.Completion.Values, Total: w.Completion.Total, HasMore: w.Completion.HasMore}
	return nil
}

// UnmarshalJSON implements json.Unmarshaler: the params of an
// elicitation/create request. RequestedSchema is kept as a
// json.RawMessage.
func (p *ElicitParams) UnmarshalJSON(b []byte) error {
	var w struct {
		Mode            ElicitMode      `json:"mode"`
		Message         string          `json:"message"`
		RequestedSchema json.RawMessage `json:"requestedSchema"`
		URL             string          `json:"url"`
		ElicitationID   string          `json:"elicitationId"`
		Meta            Meta            `json:"_meta"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*p = ElicitParams{Mode: w.Mode, Message: w.Message, URL: w.URL, Meta: w.Meta}
	if k := jsonscan.Kind(w.RequestedSchema); k != 0 && k != 'n' {
		p.RequestedSchema = w.RequestedSchema
	}
	if p.Mode == "" {
		p.Mode = ElicitModeForm
	}
	return nil
}

// MarshalJSON implements json.Marshaler: the ElicitResult a client sends.
func (r *ElicitResult) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Action  ElicitAction   `json:"action"`
		Content map[string]any `json:"content,omitempty"`
	}{r.Action, r.Content})
}

// UnmarshalJSON implements json.Unmarshaler. One content object or an
// array of them is accepted.
func (m *SamplingMessage) UnmarshalJSON(b []byte) error {
	var w struct {
		Role    Role            `json:"role"`
		Content json.RawMessage `json:"content"`
		Meta    Meta            `json:"_meta"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*m = SamplingMessage{Role: w.Role, Meta: w.Meta}
	switch jsonscan.Kind(w.Content) {
	case '{':
		c, err := DecodeContent(w.Content)
		if err != nil {
			return err
		}
		m.Content = []Content{c}
	case '[':
		c, err := decodeContents(w.Content)
		if err != nil {
			return err
		}
		m.Content = c
	default:
		return errors.New("sampling message content must be an object or an array")
	}
	return nil
}

// MarshalJSON implements json.Marshaler: the CreateMessageResult a client
// sends. One content item is sent as an object, several as an array.
func (r *CreateMessageResult) MarshalJSON() ([]byte, error) {
	var content any = r.Content
	if len(r.Content) == 1 {
		content = r.Content[0]
	}
	return json.Marshal(struct {
		Role       Role   `json:"role"`
		Content    any    `json:"content"`
		Model      string `json:"model"`
		StopReason string `json:"stopReason,omitempty"`
		Meta       Meta   `json:"_meta,omitempty"`
	}{r.Role, content, r.Model, r.StopReason, r.Meta})
}

// msDuration converts a ttlMs value, bounded to a year.
func msDuration(ms int64) time.Duration {
	const year = 365 * 24 * time.Hour
	if ms > int64(year/time.Millisecond) {
		return year
	}
	return time.Duration(ms) * time.Millisecond
}
