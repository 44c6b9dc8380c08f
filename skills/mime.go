package skills

import (
	"net/http"
	"path"
	"strings"
	"unicode/utf8"
)

// mimeTypes maps the extensions of files commonly found in skills to their
// media types. It is fixed, rather than the system's table, so that a skill
// is served the same way on every machine.
var mimeTypes = map[string]string{
	".md":       "text/markdown",
	".markdown": "text/markdown",
	".txt":      "text/plain",
	".text":     "text/plain",
	".csv":      "text/csv",
	".tsv":      "text/tab-separated-values",
	".html":     "text/html",
	".htm":      "text/html",
	".css":      "text/css",
	".js":       "text/javascript",
	".mjs":      "text/javascript",
	".ts":       "text/x-typescript",
	".py":       "text/x-python",
	".sh":       "text/x-shellscript",
	".bash":     "text/x-shellscript",
	".go":       "text/x-go",
	".rb":       "text/x-ruby",
	".rs":       "text/x-rust",
	".java":     "text/x-java",
	".c":        "text/x-c",
	".h":        "text/x-c",
	".cpp":      "text/x-c++",
	".json":     "application/json",
	".jsonl":    "application/jsonl",
	".yaml":     "application/yaml",
	".yml":      "application/yaml",
	".toml":     "application/toml",
	".xml":      "application/xml",
	".sql":      "application/sql",
	".svg":      "image/svg+xml",
	".png":      "image/png",
	".jpg":      "image/jpeg",
	".jpeg":     "image/jpeg",
	".gif":      "image/gif",
	".webp":     "image/webp",
	".pdf":      "application/pdf",
	".zip":      "application/zip",
	".gz":       "application/gzip",
	".wasm":     "application/wasm",
}

// textual lists the media types outside text/* that are text.
var textual = map[string]bool{
	"application/json":  true,
	"application/jsonl": true,
	"application/yaml":  true,
	"application/toml":  true,
	"application/xml":   true,
	"application/sql":   true,
	"image/svg+xml":     true,
}

// mimeType returns the media type of a file named name holding data, and
// whether it is served as text: a textual type whose bytes are valid UTF-8.
// A name without a known extension gets the type sniffed from its content
// (http.DetectContentType), without parameters.
func mimeType(name string, data []byte) (string, bool) {
	m, ok := mimeTypes[strings.ToLower(path.Ext(name))]
	if !ok {
		m, _, _ = strings.Cut(http.DetectContentType(data), ";")
	}
	text := (strings.HasPrefix(m, "text/") || textual[m]) && utf8.Valid(data)
	return m, text
}
