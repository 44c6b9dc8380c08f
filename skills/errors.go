package skills

import "errors"

// The reasons a skill is refused. An *Error wraps exactly one of them, so
// callers test a refusal with errors.Is(err, skills.ErrTooLarge) and find
// the file it is about with errors.As.
var (
	// ErrNoFrontmatter: SKILL.md does not begin with a "---" line, or the
	// frontmatter block has no closing "---" line.
	ErrNoFrontmatter = errors.New("SKILL.md has no frontmatter (it must begin with a --- line and close the block with another)")
	// ErrMalformedFrontmatter: the frontmatter is not valid YAML, is not a
	// mapping, repeats a key, or holds a value JSON cannot carry.
	ErrMalformedFrontmatter = errors.New("malformed frontmatter")
	// ErrMissingName: the frontmatter has no name, or it is not a non-empty
	// string.
	ErrMissingName = errors.New("frontmatter has no name (a non-empty string is required)")
	// ErrMissingDescription: the frontmatter has no description, or it is
	// not a non-empty string.
	ErrMissingDescription = errors.New("frontmatter has no description (a non-empty string is required)")
	// ErrInvalidName: the name breaks the Agent Skills naming rules: 1 to
	// 64 lowercase ASCII letters, digits and hyphens, with no leading,
	// trailing or doubled hyphen.
	ErrInvalidName = errors.New("name breaks the naming rules (1-64 characters: a-z, 0-9 and hyphens, no leading, trailing or doubled hyphen)")
	// ErrNameMismatch: the name differs from the skill's directory name.
	ErrNameMismatch = errors.New("name differs from the skill's directory name")
	// ErrTooManyFiles: the skill has more files (or directories) than
	// Options.MaxFiles.
	ErrTooManyFiles = errors.New("too many files in the skill")
	// ErrTooLarge: the skill's files add up to more than Options.MaxBytes,
	// or one of them, encoded as resources/read sends it, is more than
	// Options.MaxFileBytes (it could be listed but never read).
	ErrTooLarge = errors.New("the skill's files are too large")
	// ErrTooDeep: a directory lies more than MaxDepth levels below the
	// root of the file system; it is not read.
	ErrTooDeep = errors.New("directory nested too deep")
	// ErrSymlinkEscapes: a symbolic link points outside the file system
	// being served (an absolute target, or one climbing out with ".."), or
	// cannot be resolved.
	ErrSymlinkEscapes = errors.New("symbolic link leaves the skills root")
	// ErrNotRegular: a file is neither a regular file nor a directory (a
	// device, pipe or socket), or a symbolic link points to a directory.
	ErrNotRegular = errors.New("not a regular file")
	// ErrChanged: a file read back does not match the digest or size it
	// was indexed with: it changed on disk after Load.
	ErrChanged = errors.New("file changed since it was indexed")
)

// Error is a refusal that names the file it is about. Path is the file's
// slash-separated path in the file system given to Load (such as
// "pdf-processing/SKILL.md"); Err wraps one of the Err* reasons, with
// details.
type Error struct {
	Path string
	Err  error
}

// Error returns "skills: PATH: REASON".
func (e *Error) Error() string { return "skills: " + e.Path + ": " + e.Err.Error() }

// Unwrap returns the reason, for errors.Is.
func (e *Error) Unwrap() error { return e.Err }
