// Package skills finds, validates and indexes Agent Skills for the MCP
// skills extension (io.modelcontextprotocol/skills, SEP-2640).
//
// A skill is a directory holding a SKILL.md file, whose YAML frontmatter
// names the skill and describes it, and any other files. Load walks an
// fs.FS, takes every directory with a SKILL.md as a skill (skills may sit at
// any depth: "pdf-processing" or "acme/tools/pdf-processing"), checks each
// one, and computes every file's digest and size once. The resulting Set
// answers what the extension serves: the skill entries of skills/list and
// skills/get, the bytes of each skill:// file, and directory listings.
//
// mcp.Server.AddSkills loads and serves the skills of an fs.FS; the client
// package reads skills with the same frontmatter parser and verifies them
// against their entries.
package skills

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"regexp"
	"slices"
	"strings"

	"github.com/mcpkit/mcpkit/internal/wire"
)

// ExtensionID is the identifier of the skills extension in
// capabilities.extensions.
const ExtensionID = "io.modelcontextprotocol/skills"

// Scheme is the URI scheme of skill files: a skill at "acme/pdf-processing"
// in the file system has the URI skill://acme/pdf-processing/SKILL.md.
const Scheme = "skill"

// ManifestName is the name of the file that makes a directory a skill.
const ManifestName = "SKILL.md"

// The defaults of Options.MaxFiles and Options.MaxBytes: the limits the
// extension says a server should not pass.
const (
	DefaultMaxFiles = 512
	DefaultMaxBytes = 16 << 20
)

// DefaultMaxFileBytes is the default of Options.MaxFileBytes: what a
// resources/read response of 16 MiB, the limit of this SDK's server
// (mcp.QuotaOptions.MaxResponseBytes) and client by default, carries with
// 64 KiB to spare for the envelope (the URI, the media type, the id).
const DefaultMaxFileBytes = 16<<20 - 64<<10

// MaxDepth bounds how deep below the root of the file system Load reads
// directories and Watch looks for changes: one limit for both, so that
// every skill that is served is watched. A directory deeper than that is
// refused with ErrTooDeep.
const MaxDepth = 64

// inMemory is the size up to which a file's bytes are kept from Load on.
// Larger files are read from the file system on each read, and checked
// against their digest.
const inMemory = 64 << 10

// Options configures Load. The zero value gives the extension's limits
// and lenient loading.
type Options struct {
	// MaxFiles bounds the files of one skill, SKILL.md included, and,
	// separately, its directories. Default DefaultMaxFiles (512); a
	// negative value means no limit.
	MaxFiles int
	// MaxBytes bounds the total size of one skill's files. Default
	// DefaultMaxBytes (16 MiB); a negative value means no limit.
	MaxBytes int64
	// MaxFileBytes bounds one file as resources/read sends it: its bytes
	// base64-encoded (4 for every 3) when it is a blob, JSON-escaped when
	// it is text. A skill with a larger file is refused (ErrTooLarge)
	// rather than listing a file that no response can carry. Default
	// DefaultMaxFileBytes (mcp.Server.AddSkills derives it from the
	// server's MaxResponseBytes instead); a negative value means no limit.
	MaxFileBytes int64
	// Strict makes Load fail as a whole when any skill is refused. By
	// default a refused skill is left out and the others are loaded.
	Strict bool
}

// Set is an immutable index of the skills found in one file system. Its
// methods are safe for concurrent use. The Skills, Files and entries it
// returns are shared: callers must not modify them.
type Set struct {
	fsys   fs.FS
	skills []*Skill          // sorted by URI
	byURI  map[string]*Skill // by the URI of SKILL.md
	files  map[string]*File  // by URI
	dirs   map[string][]DirEntry
}

// Skill is one skill of a Set.
type Skill struct {
	// Name and Description are the frontmatter's name and description.
	Name        string
	Description string
	// Dir is the skill's slash-separated directory in the file system,
	// such as "acme/pdf-processing".
	Dir string
	// URI is the URI of the skill's SKILL.md, which identifies the skill:
	// skill://acme/pdf-processing/SKILL.md.
	URI string
	// DirURI is the URI of the skill's directory: skill://acme/pdf-processing.
	DirURI string
	// Frontmatter is the SKILL.md frontmatter as a JSON object, every key
	// kept in the order written (see ParseFrontmatter).
	Frontmatter json.RawMessage
	// Files are the skill's files: SKILL.md first, then by path.
	Files []*File
	// Size is the total size of Files in bytes.
	Size int64

	entry []byte
}

// MarshalJSON returns the skill's entry as skills/list and skills/get send
// it: {"uri", "frontmatter", "resources": [{"uri", "digest", "size"}...]}.
func (s *Skill) MarshalJSON() ([]byte, error) { return s.entry, nil }

// File is one file of a skill.
type File struct {
	// Path is the file's slash-separated path inside its skill's
	// directory, such as "SKILL.md" or "references/FORMS.md".
	Path string
	// URI is the file's skill:// URI.
	URI string
	// Size is its length in bytes and Digest the SHA-256 of those bytes,
	// as "sha256:" and 64 lowercase hexadecimal digits.
	Size   int64
	Digest string
	// MIMEType is the media type it is served with: text/markdown for
	// Markdown, others from the file name's extension or, failing that,
	// from its content.
	MIMEType string
	// Text is true when the file is served as text (valid UTF-8 of a
	// textual media type) rather than as a base64 blob.
	Text bool

	fsPath string // where the bytes are in the file system (links resolved)
	data   []byte // the bytes, when kept in memory
}

// DirEntry is one child of a directory inside a skill.
type DirEntry struct {
	// URI is the child's URI and Name its last path element.
	URI  string
	Name string
	// File is the child's file, or nil when the child is a directory.
	File *File
}

// IsDir reports whether the entry is a directory.
func (e DirEntry) IsDir() bool { return e.File == nil }

// Skills returns the skills of s, sorted by URI.
func (s *Set) Skills() []*Skill { return s.skills }

// Skill returns the skill whose SKILL.md has the given URI, or nil.
func (s *Set) Skill(uri string) *Skill { return s.byURI[uri] }

// File returns the file with the given URI, or nil.
func (s *Set) File(uri string) *File { return s.files[uri] }

// Dir returns the children of the directory with the given URI, sorted by
// name, and whether the URI names a directory of a skill (a skill's own
// directory, such as skill://pdf-processing, or one inside it). A trailing
// slash is allowed.
func (s *Set) Dir(uri string) ([]DirEntry, bool) {
	if len(uri) > len(Scheme)+3 {
		uri = strings.TrimSuffix(uri, "/")
	}
	d, ok := s.dirs[uri]
	return d, ok
}

// ReadFile returns the bytes of the file with the given URI. Small files
// come from memory; larger ones are read from the file system and checked
// against the size and digest they were indexed with, so that the bytes
// returned always match the skill's entry: a file changed on disk since
// Load gives an error wrapping ErrChanged. The returned slice is shared
// and must not be modified.
func (s *Set) ReadFile(uri string) ([]byte, *File, error) {
	f := s.files[uri]
	if f == nil {
		return nil, nil, fs.ErrNotExist
	}
	if f.data != nil || f.Size == 0 {
		return f.data, f, nil
	}
	data, err := readLimited(s.fsys, f.fsPath, f.Size+1)
	if err != nil {
		return nil, f, &Error{Path: f.fsPath, Err: err}
	}
	if int64(len(data)) != f.Size || Digest(data) != f.Digest {
		return nil, f, &Error{Path: f.fsPath, Err: ErrChanged}
	}
	return data, f, nil
}

// Digest returns the digest of data as the extension writes it: "sha256:"
// followed by 64 lowercase hexadecimal digits.
func Digest(data []byte) string {
	sum := sha256.Sum256(data)
	return "sha256:" + hex.EncodeToString(sum[:])
}

var nameRule = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,62}[a-z0-9])?$`)

// ValidName reports whether name follows the Agent Skills naming rules: 1
// to 64 characters, lowercase ASCII letters, digits and hyphens, with no
// leading, trailing or doubled hyphen.
func ValidName(name string) bool {
	return nameRule.MatchString(name) && !strings.Contains(name, "--")
}

// Load finds and indexes the skills in fsys. Every directory holding a
// SKILL.md is a skill, whose files are everything below it; Load does not
// look for skills inside a skill (a SKILL.md at the root of fsys is
// refused, and the skills below it are loaded). Names beginning with "." (such as .git)
// are skipped, and symbolic links to directories are not followed while
// looking for skills. To serve a subdirectory, pass fs.Sub(fsys, dir).
//
// A skill is refused, with an *Error naming the file at fault, when its
// SKILL.md has no frontmatter or a malformed one, lacks a name or a
// description, or has a name that breaks the naming rules or differs from
// the directory's name; when it has more than Options.MaxFiles files or
// more than Options.MaxBytes bytes; when a symbolic link in it leads
// outside fsys or to a directory (links to regular files inside fsys are
// served as those files; fsys must implement fs.ReadLinkFS for links to be
// resolved); or when a file is neither regular nor a directory.
//
// By default a refused skill is left out: Load returns the Set of the
// others together with an error joining every refusal (match each with
// errors.As and *Error, or errors.Is and a reason). With Options.Strict,
// any refusal makes Load return a nil Set. An error reading fsys's root
// also returns a nil Set.
func Load(fsys fs.FS, opts *Options) (*Set, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.MaxFiles == 0 {
		o.MaxFiles = DefaultMaxFiles
	}
	if o.MaxBytes == 0 {
		o.MaxBytes = DefaultMaxBytes
	}
	if o.MaxFileBytes == 0 {
		o.MaxFileBytes = DefaultMaxFileBytes
	}
	l := &loader{fsys: fsys, opts: o, set: &Set{
		fsys:  fsys,
		byURI: make(map[string]*Skill),
		files: make(map[string]*File),
		dirs:  make(map[string][]DirEntry),
	}}
	if err := l.discover(".", true); err != nil {
		return nil, err
	}
	slices.SortFunc(l.set.skills, func(a, b *Skill) int { return strings.Compare(a.URI, b.URI) })
	if len(l.problems) > 0 {
		err := errors.Join(l.problems...)
		if o.Strict {
			return nil, err
		}
		return l.set, err
	}
	return l.set, nil
}

type loader struct {
	fsys     fs.FS
	opts     Options
	set      *Set
	problems []error
}

func hidden(name string) bool { return strings.HasPrefix(name, ".") }

// depth is the nesting of dir, a path in the file system: 0 for its root.
func depth(dir string) int {
	if dir == "." {
		return 0
	}
	return strings.Count(dir, "/") + 1
}

// tooDeep is the refusal of a directory past MaxDepth.
func tooDeep(dir string) *Error {
	return &Error{Path: dir, Err: fmt.Errorf("%w: more than %d levels below the root", ErrTooDeep, MaxDepth)}
}

// discover looks for skills in dir and below.
func (l *loader) discover(dir string, root bool) error {
	if depth(dir) > MaxDepth {
		l.problems = append(l.problems, tooDeep(dir))
		return nil
	}
	entries, err := fs.ReadDir(l.fsys, dir)
	if err != nil {
		e := &Error{Path: dir, Err: err}
		if root {
			return e
		}
		l.problems = append(l.problems, e)
		return nil
	}
	for _, e := range entries {
		if e.Name() == ManifestName {
			l.loadSkill(dir, entries)
			if !root {
				return nil
			}
		}
	}
	for _, e := range entries {
		if !hidden(e.Name()) && e.IsDir() {
			if err := l.discover(path.Join(dir, e.Name()), false); err != nil {
				return err
			}
		}
	}
	return nil
}

// skillWalk gathers the files of one skill.
type skillWalk struct {
	l      *loader
	dirURI string
	files  []*File
	dirs   map[string][]DirEntry
	nFiles int
	nDirs  int
	total  int64
}

func (l *loader) loadSkill(dir string, entries []fs.DirEntry) {
	if err := l.loadSkillErr(dir, entries); err != nil {
		l.problems = append(l.problems, err)
	}
}

func (l *loader) loadSkillErr(dir string, entries []fs.DirEntry) *Error {
	manifest := path.Join(dir, ManifestName)
	if dir == "." {
		return &Error{Path: manifest, Err: fmt.Errorf("%w: SKILL.md is at the root of the file system; each skill needs a directory of its own", ErrNameMismatch)}
	}
	w := &skillWalk{l: l, dirURI: dirURI(dir), dirs: make(map[string][]DirEntry)}
	if err := w.walk(dir, "", entries); err != nil {
		return err
	}
	// Read every file once: digests, sizes and the in-memory copies.
	var total int64
	for _, f := range w.files {
		budget := int64(1 << 62)
		if l.opts.MaxBytes >= 0 {
			budget = l.opts.MaxBytes - total + 1
		}
		data, err := readLimited(l.fsys, f.fsPath, budget)
		if err != nil {
			return &Error{Path: f.fsPath, Err: err}
		}
		total += int64(len(data))
		if l.opts.MaxBytes >= 0 && total > l.opts.MaxBytes {
			return &Error{Path: f.fsPath, Err: fmt.Errorf("%w: more than %d bytes", ErrTooLarge, l.opts.MaxBytes)}
		}
		f.Size = int64(len(data))
		f.Digest = Digest(data)
		f.MIMEType, f.Text = mimeType(f.Path, data)
		if n := servedSize(data, f.Text); l.opts.MaxFileBytes >= 0 && n > l.opts.MaxFileBytes {
			return &Error{Path: f.fsPath, Err: fmt.Errorf("%w: %d bytes, %d once encoded for resources/read, more than %d", ErrTooLarge, len(data), n, l.opts.MaxFileBytes)}
		}
		if len(data) <= inMemory || f.Path == ManifestName {
			f.data = data
		}
	}
	slices.SortFunc(w.files, func(a, b *File) int {
		if (a.Path == ManifestName) != (b.Path == ManifestName) {
			if a.Path == ManifestName {
				return -1
			}
			return 1
		}
		return strings.Compare(a.Path, b.Path)
	})
	if len(w.files) == 0 || w.files[0].Path != ManifestName {
		return &Error{Path: manifest, Err: fmt.Errorf("%w: SKILL.md is not a file", ErrNotRegular)}
	}
	sk, err := newSkill(dir, w.files[0].data)
	if err != nil {
		return &Error{Path: path.Join(dir, ManifestName), Err: err}
	}
	sk.Dir, sk.DirURI, sk.Files, sk.Size = dir, w.dirURI, w.files, total
	sk.URI = w.files[0].URI
	sk.entry = appendEntry(nil, sk)
	s := l.set
	s.skills = append(s.skills, sk)
	s.byURI[sk.URI] = sk
	for _, f := range sk.Files {
		s.files[f.URI] = f
	}
	for u, d := range w.dirs {
		s.dirs[u] = d
	}
	return nil
}

// servedSize is the size of data in a resources/read result: base64 for a
// blob, and for text a JSON string's contents as encoding/json writes them
// (at most that: \b and \f are counted as \u escapes).
func servedSize(data []byte, text bool) int64 {
	if !text {
		return int64((len(data) + 2) / 3 * 4)
	}
	n := int64(0)
	for i := 0; i < len(data); i++ {
		switch c := data[i]; {
		case c == '"' || c == '\\' || c == '\n' || c == '\r' || c == '\t':
			n += 2
		case c < 0x20 || c == '<' || c == '>' || c == '&':
			n += 6
		case c == 0xE2 && i+2 < len(data) && data[i+1] == 0x80 && (data[i+2] == 0xA8 || data[i+2] == 0xA9):
			n += 6 // U+2028 and U+2029, escaped
			i += 2
		default:
			n++
		}
	}
	return n
}

// newSkill checks a SKILL.md and returns its skill, without its files.
func newSkill(dir string, manifest []byte) (*Skill, error) {
	fm, _, err := ParseFrontmatter(manifest)
	if err != nil {
		return nil, err
	}
	name, desc, err := nameAndDescription(fm)
	if err != nil {
		return nil, err
	}
	if !ValidName(name) {
		return nil, fmt.Errorf("%w: %q", ErrInvalidName, name)
	}
	if base := path.Base(dir); base != name {
		return nil, fmt.Errorf("%w: name %q, directory %q", ErrNameMismatch, name, base)
	}
	return &Skill{Name: name, Description: desc, Frontmatter: fm}, nil
}

// nameAndDescription returns a frontmatter's name and description, which
// must be non-empty strings.
func nameAndDescription(fm json.RawMessage) (name, desc string, err error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(fm, &m); err != nil {
		return "", "", fmt.Errorf("%w: %v", ErrMalformedFrontmatter, err)
	}
	if json.Unmarshal(m["name"], &name) != nil || name == "" {
		return "", "", ErrMissingName
	}
	if json.Unmarshal(m["description"], &desc) != nil || desc == "" {
		return "", "", ErrMissingDescription
	}
	return name, desc, nil
}

// walk gathers the files below fsDir, the skill's directory rel ("" for
// the skill's own directory), whose entries are given.
func (w *skillWalk) walk(fsDir, rel string, entries []fs.DirEntry) *Error {
	l := w.l
	here := w.dirURI
	if rel != "" {
		here += "/" + escapePath(rel)
	}
	children := []DirEntry{}
	for _, e := range entries {
		name := e.Name()
		if hidden(name) {
			continue
		}
		fsPath, relPath := path.Join(fsDir, name), path.Join(rel, name)
		uri := w.dirURI + "/" + escapePath(relPath)
		mode := e.Type()
		switch {
		case mode.IsDir():
			if depth(fsPath) > MaxDepth {
				return tooDeep(fsPath)
			}
			w.nDirs++
			if l.opts.MaxFiles >= 0 && w.nDirs > l.opts.MaxFiles {
				return &Error{Path: fsPath, Err: fmt.Errorf("%w: more than %d directories", ErrTooManyFiles, l.opts.MaxFiles)}
			}
			sub, err := fs.ReadDir(l.fsys, fsPath)
			if err != nil {
				return &Error{Path: fsPath, Err: err}
			}
			if err := w.walk(fsPath, relPath, sub); err != nil {
				return err
			}
			children = append(children, DirEntry{URI: uri, Name: name})
			continue
		case mode&fs.ModeSymlink != 0:
			target, err := l.realpath(fsPath)
			if err != nil {
				return &Error{Path: fsPath, Err: err}
			}
			info, err := fs.Lstat(l.fsys, target)
			if err != nil {
				return &Error{Path: fsPath, Err: fmt.Errorf("%w: %v", ErrSymlinkEscapes, err)}
			}
			if info.IsDir() {
				return &Error{Path: fsPath, Err: fmt.Errorf("%w: a symbolic link to a directory", ErrNotRegular)}
			}
			if !info.Mode().IsRegular() {
				return &Error{Path: fsPath, Err: fmt.Errorf("%w: a symbolic link to a %v", ErrNotRegular, info.Mode().Type())}
			}
			if err := w.add(fsPath, target, relPath, uri, info.Size()); err != nil {
				return err
			}
		case mode.IsRegular():
			info, err := e.Info()
			if err != nil {
				return &Error{Path: fsPath, Err: err}
			}
			if !info.Mode().IsRegular() {
				return &Error{Path: fsPath, Err: fmt.Errorf("%w: %v", ErrNotRegular, info.Mode().Type())}
			}
			if err := w.add(fsPath, fsPath, relPath, uri, info.Size()); err != nil {
				return err
			}
		default:
			return &Error{Path: fsPath, Err: fmt.Errorf("%w: %v", ErrNotRegular, mode)}
		}
		children = append(children, DirEntry{URI: uri, Name: name, File: w.files[len(w.files)-1]})
	}
	w.dirs[here] = children
	return nil
}

// add records one file, checking the limits on the sizes the file system
// reports (the bytes read are checked again).
func (w *skillWalk) add(fsPath, target, rel, uri string, size int64) *Error {
	o := w.l.opts
	w.nFiles++
	if o.MaxFiles >= 0 && w.nFiles > o.MaxFiles {
		return &Error{Path: fsPath, Err: fmt.Errorf("%w: more than %d files", ErrTooManyFiles, o.MaxFiles)}
	}
	w.total += size
	if o.MaxBytes >= 0 && w.total > o.MaxBytes {
		return &Error{Path: fsPath, Err: fmt.Errorf("%w: more than %d bytes", ErrTooLarge, o.MaxBytes)}
	}
	w.files = append(w.files, &File{Path: rel, URI: uri, Size: size, fsPath: target})
	return nil
}

// maxLinks bounds the symbolic links followed to resolve one path.
const maxLinks = 40

// realpath resolves every symbolic link in p, a path in l.fsys, and
// returns the path it leads to, which has no link in it. A link whose
// target is absolute or climbs out of the file system is refused.
func (l *loader) realpath(p string) (string, error) {
	if _, ok := l.fsys.(fs.ReadLinkFS); !ok {
		return "", fmt.Errorf("%w: the file system cannot read links (it does not implement fs.ReadLinkFS)", ErrSymlinkEscapes)
	}
	hops := 0
	return l.resolve(p, &hops)
}

func (l *loader) resolve(p string, hops *int) (string, error) {
	cur := "."
	for part := range strings.SplitSeq(p, "/") {
		next := path.Join(cur, part)
		info, err := fs.Lstat(l.fsys, next)
		if err != nil {
			return "", fmt.Errorf("%w: %v", ErrSymlinkEscapes, err)
		}
		if info.Mode()&fs.ModeSymlink != 0 {
			*hops++
			if *hops > maxLinks {
				return "", fmt.Errorf("%w: more than %d links", ErrSymlinkEscapes, maxLinks)
			}
			target, err := fs.ReadLink(l.fsys, next)
			if err != nil {
				return "", fmt.Errorf("%w: %v", ErrSymlinkEscapes, err)
			}
			if strings.HasPrefix(target, "/") || strings.Contains(target, `\`) {
				return "", fmt.Errorf("%w: it points to %s", ErrSymlinkEscapes, target)
			}
			j := path.Join(cur, target)
			if j == ".." || strings.HasPrefix(j, "../") {
				return "", fmt.Errorf("%w: it points to %s", ErrSymlinkEscapes, target)
			}
			if next, err = l.resolve(j, hops); err != nil {
				return "", err
			}
		}
		cur = next
	}
	return cur, nil
}

// readLimited reads the file at name, at most limit bytes of it.
func readLimited(fsys fs.FS, name string, limit int64) ([]byte, error) {
	f, err := fsys.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var buf bytes.Buffer
	if info, err := f.Stat(); err == nil && info.Size() > 0 && info.Size() < limit {
		buf.Grow(int(info.Size()) + 1)
	}
	_, err = io.Copy(&buf, io.LimitReader(f, limit))
	return buf.Bytes(), err
}

// dirURI returns the URI of a skill directory: skill:// and its path,
// whose first element is the URI's authority.
func dirURI(dir string) string {
	first, rest, _ := strings.Cut(dir, "/")
	u := Scheme + "://" + escape(first, true)
	if rest != "" {
		u += "/" + escapePath(rest)
	}
	return u
}

// escapePath percent-encodes each element of a slash-separated path.
func escapePath(p string) string {
	if !needsEscape(p, false) {
		return p
	}
	parts := strings.Split(p, "/")
	for i, s := range parts {
		parts[i] = escape(s, false)
	}
	return strings.Join(parts, "/")
}

// escape percent-encodes s as an RFC 3986 path segment or, when authority
// is set, a reg-name: unreserved characters and sub-delims are kept, and
// ":" and "@" too in path segments.
func escape(s string, authority bool) string {
	if !needsEscape(s, authority) {
		return s
	}
	const hexDigits = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if keep(c, authority) {
			b.WriteByte(c)
		} else {
			b.WriteByte('%')
			b.WriteByte(hexDigits[c>>4])
			b.WriteByte(hexDigits[c&15])
		}
	}
	return b.String()
}

func needsEscape(s string, authority bool) bool {
	for i := 0; i < len(s); i++ {
		if s[i] != '/' && !keep(s[i], authority) {
			return true
		}
	}
	return false
}

func keep(c byte, authority bool) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	switch c {
	case '-', '.', '_', '~', '!', '$', '&', '\'', '(', ')', '*', '+', ',', ';', '=':
		return true
	case ':', '@':
		return !authority
	}
	return false
}

// appendEntry appends the skill's entry in skills/list.
func appendEntry(b []byte, s *Skill) []byte {
	b = append(b, `{"uri":`...)
	b = wire.AppendString(b, s.URI)
	b = append(b, `,"frontmatter":`...)
	b = append(b, s.Frontmatter...)
	b = append(b, `,"resources":[`...)
	for i, f := range s.Files {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"uri":`...)
		b = wire.AppendString(b, f.URI)
		b = append(b, `,"digest":"`...)
		b = append(b, f.Digest...)
		b = append(b, `","size":`...)
		b = fmt.Appendf(b, "%d}", f.Size)
	}
	return append(b, "]}"...)
}
