package mcp

import (
	"encoding/json"

	"github.com/mcpkit/mcpkit/internal/protocol"
)

// LatestVersion is the newest protocol revision this package implements,
// "2026-07-28". (The protocol's vocabulary, the versions, the codes, the
// eras and the transport names, is declared once, in an internal package
// that the client's internals share; this package exports it.)
const LatestVersion = protocol.LatestVersion

// Implementation names a client or server and its version. It is
// self-reported and never used for security decisions.
type Implementation struct {
	// Name is the programmatic name, and the display name when Title is
	// empty.
	Name string `json:"name"`
	// Title is an optional human-readable display name.
	Title string `json:"title,omitempty"`
	// Version is the implementation's version.
	Version string `json:"version"`
	// Description optionally says what the implementation does.
	Description string `json:"description,omitempty"`
	// Icons are optional sized icons for user interfaces.
	Icons []Icon `json:"icons,omitempty"`
	// WebsiteURL is the optional address of the implementation's website.
	WebsiteURL string `json:"websiteUrl,omitempty"`
}

// ClientCapabilities is what a client declares it supports, per request.
// A nil field means "not declared".
type ClientCapabilities struct {
	Elicitation  *ElicitationCapability     `json:"elicitation,omitempty"`
	Sampling     *SamplingCapability        `json:"sampling,omitempty"`
	Roots        *RootsCapability           `json:"roots,omitempty"`
	Experimental map[string]json.RawMessage `json:"experimental,omitempty"`
	Extensions   map[string]json.RawMessage `json:"extensions,omitempty"`
}

// ElicitationCapability declares support for elicitation. An empty value
// means form mode.
type ElicitationCapability struct {
	Form json.RawMessage `json:"form,omitempty"`
	URL  json.RawMessage `json:"url,omitempty"`
}

// SamplingCapability declares support for sampling.
type SamplingCapability struct {
	Context json.RawMessage `json:"context,omitempty"`
	Tools   json.RawMessage `json:"tools,omitempty"`
}

// RootsCapability declares support for roots.
type RootsCapability struct {
	ListChanged bool `json:"listChanged,omitempty"`
}

// HasExtension reports whether the client declared the named extension.
func (c *ClientCapabilities) HasExtension(name string) bool {
	_, ok := c.Extensions[name]
	return ok
}

// ServerCapabilities is what the server advertises in server/discover.
type ServerCapabilities struct {
	Completions  *struct{}                  `json:"completions,omitempty"`
	Logging      *struct{}                  `json:"logging,omitempty"`
	Prompts      *ListCapability            `json:"prompts,omitempty"`
	Resources    *ResourcesCapability       `json:"resources,omitempty"`
	Tools        *ListCapability            `json:"tools,omitempty"`
	Experimental map[string]json.RawMessage `json:"experimental,omitempty"`
	Extensions   map[string]json.RawMessage `json:"extensions,omitempty"`
}

// ListCapability advertises a primitive family and whether the server
// notifies list changes.
type ListCapability struct {
	ListChanged bool `json:"listChanged,omitempty"`
}

// ResourcesCapability advertises resources.
type ResourcesCapability struct {
	ListChanged bool `json:"listChanged,omitempty"`
	Subscribe   bool `json:"subscribe,omitempty"`
}

// LogLevel is a syslog severity, as named by MCP.
type LogLevel string

// The log levels, from least to most severe.
const (
	LevelDebug     LogLevel = "debug"
	LevelInfo      LogLevel = "info"
	LevelNotice    LogLevel = "notice"
	LevelWarning   LogLevel = "warning"
	LevelError     LogLevel = "error"
	LevelCritical  LogLevel = "critical"
	LevelAlert     LogLevel = "alert"
	LevelEmergency LogLevel = "emergency"
)

// severity returns the rank of l, or -1 if l is not a known level.
func (l LogLevel) severity() int {
	switch l {
	case LevelDebug:
		return 0
	case LevelInfo:
		return 1
	case LevelNotice:
		return 2
	case LevelWarning:
		return 3
	case LevelError:
		return 4
	case LevelCritical:
		return 5
	case LevelAlert:
		return 6
	case LevelEmergency:
		return 7
	}
	return -1
}

// CacheScope says who may reuse a cached result.
type CacheScope string

// Cache scopes.
const (
	// CachePublic results hold nothing caller-specific; shared caches may
	// serve them across authorization contexts.
	CachePublic CacheScope = "public"
	// CachePrivate results may be reused only within one authorization
	// context.
	CachePrivate CacheScope = "private"
)

// Role is the speaker of a message or the audience of content.
type Role string

// Roles.
const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
)

// Annotations are optional hints about content for the client.
type Annotations struct {
	Audience     []Role   `json:"audience,omitempty"`
	Priority     *float64 `json:"priority,omitempty"`
	LastModified string   `json:"lastModified,omitempty"`
}

// Icon is an image a client may show for an item.
type Icon struct {
	Src      string   `json:"src"`
	MIMEType string   `json:"mimeType,omitempty"`
	Sizes    []string `json:"sizes,omitempty"`
	Theme    string   `json:"theme,omitempty"`
}

// Meta is a _meta object: keys follow MCP's _meta naming rules.
type Meta map[string]any
