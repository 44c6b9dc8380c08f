package mcp

import (
	"encoding/json"
)

// Content is one item of tool output or of a prompt message: *TextContent,
// *ImageContent, *AudioContent, *ResourceLink or *EmbeddedResource. In
// sampling messages and results it may also be a *ToolUseContent or a
// *ToolResultContent.
type Content interface {
	// contentType returns the wire "type" of the content.
	contentType() string
}

// TextContent is text for the model or the user.
type TextContent struct {
	Text        string
	Annotations *Annotations
	Meta        Meta
}

// ImageContent is an image. Data holds the raw bytes; they travel base64
// encoded.
type ImageContent struct {
	Data        []byte
	MIMEType    string
	Annotations *Annotations
	Meta        Meta
}

// AudioContent is audio. Data holds the raw bytes; they travel base64
// encoded.
type AudioContent struct {
	Data        []byte
	MIMEType    string
	Annotations *Annotations
	Meta        Meta
}

// ResourceLink points to a resource the client may read.
type ResourceLink struct {
	URI         string
	Name        string
	Title       string
	Description string
	MIMEType    string
	Size        *int64
	Annotations *Annotations
	Icons       []Icon
	Meta        Meta
}

// EmbeddedResource carries a resource's contents inline.
type EmbeddedResource struct {
	Resource    *ResourceContents
	Annotations *Annotations
	Meta        Meta
}

// ResourceContents is the contents of a resource: text, or binary data in
// Blob (sent base64 encoded). Exactly one of Text and Blob is sent: Blob
// when it is non-nil.
type ResourceContents struct {
	URI      string
	MIMEType string
	Text     string
	Blob     []byte
	Meta     Meta
}

func (*TextContent) contentType() string      { return "text" }
func (*ImageContent) contentType() string     { return "image" }
func (*AudioContent) contentType() string     { return "audio" }
func (*ResourceLink) contentType() string     { return "resource_link" }
func (*EmbeddedResource) contentType() string { return "resource" }

// MarshalJSON implements json.Marshaler.
func (c *TextContent) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Type        string       `json:"type"`
		Text        string       `json:"text"`
		Annotations *Annotations `json:"annotations,omitempty"`
		Meta        Meta         `json:"_meta,omitempty"`
	}{"text", c.Text, c.Annotations, c.Meta})
}

// MarshalJSON implements json.Marshaler.
func (c *ImageContent) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Type        string       `json:"type"`
		Data        []byte       `json:"data"`
		MIMEType    string       `json:"mimeType"`
		Annotations *Annotations `json:"annotations,omitempty"`
		Meta        Meta         `json:"_meta,omitempty"`
	}{"image", nonNil(c.Data), c.MIMEType, c.Annotations, c.Meta})
}

// MarshalJSON implements json.Marshaler.
func (c *AudioContent) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Type        string       `json:"type"`
		Data        []byte       `json:"data"`
		MIMEType    string       `json:"mimeType"`
		Annotations *Annotations `json:"annotations,omitempty"`
		Meta        Meta         `json:"_meta,omitempty"`
	}{"audio", nonNil(c.Data), c.MIMEType, c.Annotations, c.Meta})
}

// MarshalJSON implements json.Marshaler.
func (c *ResourceLink) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Type        string       `json:"type"`
		URI         string       `json:"uri"`
		Name        string       `json:"name"`
		Title       string       `json:"title,omitempty"`
		Description string       `json:"description,omitempty"`
		MIMEType    string       `json:"mimeType,omitempty"`
		Size        *int64       `json:"size,omitempty"`
		Annotations *Annotations `json:"annotations,omitempty"`
		Icons       []Icon       `json:"icons,omitempty"`
		Meta        Meta         `json:"_meta,omitempty"`
	}{"resource_link", c.URI, c.Name, c.Title, c.Description, c.MIMEType, c.Size, c.Annotations, c.Icons, c.Meta})
}

// MarshalJSON implements json.Marshaler.
func (c *EmbeddedResource) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Type        string            `json:"type"`
		Resource    *ResourceContents `json:"resource"`
		Annotations *Annotations      `json:"annotations,omitempty"`
		Meta        Meta              `json:"_meta,omitempty"`
	}{"resource", c.Resource, c.Annotations, c.Meta})
}

// MarshalJSON implements json.Marshaler.
func (c *ResourceContents) MarshalJSON() ([]byte, error) {
	if c.Blob != nil {
		return json.Marshal(struct {
			URI      string `json:"uri"`
			MIMEType string `json:"mimeType,omitempty"`
			Blob     []byte `json:"blob"`
			Meta     Meta   `json:"_meta,omitempty"`
		}{c.URI, c.MIMEType, c.Blob, c.Meta})
	}
	return json.Marshal(struct {
		URI      string `json:"uri"`
		MIMEType string `json:"mimeType,omitempty"`
		Text     string `json:"text"`
		Meta     Meta   `json:"_meta,omitempty"`
	}{c.URI, c.MIMEType, c.Text, c.Meta})
}

func nonNil(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}

// ToolUseContent is a language model's call of a tool, in a sampling
// result (CreateMessageResult, StopReason "toolUse") or in an assistant
// message of a later sampling request.
type ToolUseContent struct {
	// ID identifies the call; the ToolResultContent of its result names it.
	ID string
	// Name is the tool's name.
	Name string
	// Input is the arguments object.
	Input json.RawMessage
	Meta  Meta
}

// ToolResultContent is the result of a ToolUseContent, sent back to the
// model in a user message of the next sampling request. Its Content holds
// *TextContent, *ImageContent or *AudioContent items.
type ToolResultContent struct {
	// ToolUseID is the ID of the ToolUseContent this answers.
	ToolUseID         string
	Content           []Content
	StructuredContent json.RawMessage
	IsError           bool
	Meta              Meta
}

func (*ToolUseContent) contentType() string    { return "tool_use" }
func (*ToolResultContent) contentType() string { return "tool_result" }

// MarshalJSON implements json.Marshaler.
func (c *ToolUseContent) MarshalJSON() ([]byte, error) {
	input := c.Input
	if len(input) == 0 {
		input = json.RawMessage("{}")
	}
	return json.Marshal(struct {
		Type  string          `json:"type"`
		ID    string          `json:"id"`
		Name  string          `json:"name"`
		Input json.RawMessage `json:"input"`
		Meta  Meta            `json:"_meta,omitempty"`
	}{"tool_use", c.ID, c.Name, input, c.Meta})
}

// MarshalJSON implements json.Marshaler.
func (c *ToolResultContent) MarshalJSON() ([]byte, error) {
	content := c.Content
	if content == nil {
		content = []Content{}
	}
	return json.Marshal(struct {
		Type              string          `json:"type"`
		ToolUseID         string          `json:"toolUseId"`
		Content           []Content       `json:"content"`
		StructuredContent json.RawMessage `json:"structuredContent,omitempty"`
		IsError           bool            `json:"isError,omitempty"`
		Meta              Meta            `json:"_meta,omitempty"`
	}{"tool_result", c.ToolUseID, content, c.StructuredContent, c.IsError, c.Meta})
}
