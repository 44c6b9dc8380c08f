package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"reflect"
	"regexp"
	"strings"

	"github.com/mcpkit/mcpkit/skills"
)

// Skill is a skill as a server of the skills extension
// (io.modelcontextprotocol/skills) describes it in skills/list and
// skills/get. Listing a skill reads none of its files: LoadSkill does, when
// the skill is needed.
type Skill struct {
	// URI is the URI of the skill's SKILL.md, which identifies the skill.
	URI string
	// Frontmatter is the SKILL.md frontmatter as the server sent it, a
	// JSON object; Name and Description are its name and description.
	Frontmatter json.RawMessage
	Name        string
	Description string
	// Files is the skill's manifest: every file with its digest and size,
	// SKILL.md included. It is nil when Dynamic.
	Files []SkillFile
	// Dynamic is set when the server publishes no manifest
	// ("resources": "dynamic"): files are then read unverified.
	Dynamic bool
}

// SkillFile is one file of a skill's manifest.
type SkillFile struct {
	URI    string `json:"uri"`
	Digest string `json:"digest"`
	Size   int64  `json:"size"`
}

var digestRE = regexp.MustCompile(`^sha256:[0-9a-f]{64}$`)

// UnmarshalJSON decodes a skill entry and checks it: a uri ending in
// /SKILL.md, a frontmatter object with a description and a name that
// follows the naming rules (skills.ValidName) and equals the last segment
// of the uri before /SKILL.md, so a name is always safe as a file name,
// and resources that are "dynamic" or files inside the skill's directory,
// each listed once with a sha256 digest and a size that is not negative.
func (s *Skill) UnmarshalJSON(b []byte) error {
	var w struct {
		URI         string          `json:"uri"`
		Frontmatter json.RawMessage `json:"frontmatter"`
		Resources   json.RawMessage `json:"resources"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	dir, ok := strings.CutSuffix(w.URI, "/"+skills.ManifestName)
	if !ok || dir == "" {
		return fmt.Errorf("skill uri %q does not name a SKILL.md", w.URI)
	}
	var fm map[string]json.RawMessage
	if err := json.Unmarshal(w.Frontmatter, &fm); err != nil || fm == nil {
		return fmt.Errorf("skill %s: frontmatter is not an object", w.URI)
	}
	*s = Skill{URI: w.URI, Frontmatter: w.Frontmatter}
	if json.Unmarshal(fm["name"], &s.Name) != nil || s.Name == "" {
		return fmt.Errorf("skill %s: frontmatter has no name", w.URI)
	}
	if !skills.ValidName(s.Name) {
		return fmt.Errorf("skill %s: name %q breaks the naming rules (1-64 of a-z, 0-9 and -, no leading, trailing or doubled -)", w.URI, s.Name)
	}
	if last := dir[strings.LastIndexByte(dir, '/')+1:]; last != s.Name {
		return fmt.Errorf("skill %s: name %q differs from the URI's last segment %q", w.URI, s.Name, last)
	}
	if json.Unmarshal(fm["description"], &s.Description) != nil || s.Description == "" {
		return fmt.Errorf("skill %s: frontmatter has no description", w.URI)
	}
	if string(w.Resources) == `"dynamic"` {
		s.Dynamic = true
		return nil
	}
	if err := json.Unmarshal(w.Resources, &s.Files); err != nil || s.Files == nil {
		return fmt.Errorf("skill %s: resources is neither an array nor \"dynamic\"", w.URI)
	}
	seen := make(map[string]bool, len(s.Files))
	for _, f := range s.Files {
		switch {
		case f.URI != w.URI && !strings.HasPrefix(f.URI, dir+"/"):
			return fmt.Errorf("skill %s: file %s is outside the skill's directory", w.URI, f.URI)
		case seen[f.URI]:
			return fmt.Errorf("skill %s: file %s is listed twice", w.URI, f.URI)
		case !digestRE.MatchString(f.Digest):
			return fmt.Errorf("skill %s: file %s has digest %q, not sha256:{64 lowercase hex}", w.URI, f.URI, f.Digest)
		case f.Size < 0:
			return fmt.Errorf("skill %s: file %s has a negative size", w.URI, f.URI)
		}
		seen[f.URI] = true
	}
	if !seen[w.URI] {
		return fmt.Errorf("skill %s: resources do not list its SKILL.md", w.URI)
	}
	return nil
}

// File returns the manifest entry of the file with the given URI.
func (s *Skill) File(uri string) (SkillFile, bool) {
	for _, f := range s.Files {
		if f.URI == uri {
			return f, true
		}
	}
	return SkillFile{}, false
}

// ListSkills yields the skills of a server of the skills extension, page
// after page, reading none of their files.
func (c *Client) ListSkills(ctx context.Context, opts ...CallOption) iter.Seq2[*Skill, error] {
	return listAll[Skill](c, ctx, "skills/list", "skills", opts, nil)
}

// GetSkill returns the skill whose SKILL.md has the given URI. A server
// that serves no such skill answers with error -32602.
func (c *Client) GetSkill(ctx context.Context, uri string, opts ...CallOption) (*Skill, error) {
	res, err := c.call(ctx, "skills/get", map[string]any{"uri": uri}, newConfig(opts))
	if err != nil {
		return nil, err
	}
	var w struct {
		Skill *Skill `json:"skill"`
	}
	if err := json.Unmarshal(res, &w); err != nil {
		return nil, &ProtocolError{Method: "skills/get", Msg: "malformed result: " + err.Error()}
	}
	if w.Skill == nil {
		return nil, &ProtocolError{Method: "skills/get", Msg: "the result has no skill"}
	}
	if w.Skill.URI != uri {
		return nil, &ProtocolError{Method: "skills/get", Msg: fmt.Sprintf("asked for %s, got %s", uri, w.Skill.URI)}
	}
	return w.Skill, nil
}

// The ways a skill file can fail verification. A *SkillError wraps one.
var (
	// ErrSkillSize: the bytes read are not as many as the manifest says.
	ErrSkillSize = errors.New("size differs from the skill's manifest")
	// ErrSkillDigest: the bytes read do not have the manifest's digest.
	ErrSkillDigest = errors.New("digest differs from the skill's manifest")
	// ErrSkillFrontmatter: the frontmatter of the SKILL.md read differs
	// from the skill entry's, or cannot be parsed.
	ErrSkillFrontmatter = errors.New("frontmatter differs from the skill entry's")
	// ErrSkillNotListed: the file is not in the skill's manifest (or, for a
	// dynamic skill, not inside the skill's directory).
	ErrSkillNotListed = errors.New("not a file of the skill")
)

// SkillError is a skill file that failed verification: its content must
// not be used. URI names the file; Err wraps one of the ErrSkill* reasons.
type SkillError struct {
	URI string
	Err error
}

func (e *SkillError) Error() string { return "client: skill file " + e.URI + ": " + e.Err.Error() }

// Unwrap returns the reason.
func (e *SkillError) Unwrap() error { return e.Err }

// LoadedSkill is a skill whose SKILL.md was read and verified. Its other
// files are read when asked for, each verified in turn.
type LoadedSkill struct {
	// Skill is the entry the skill was loaded from.
	Skill *Skill
	// Manifest is the verified content of SKILL.md, and Body the part of it
	// after the frontmatter: the instructions.
	Manifest []byte
	Body     []byte

	c    *Client
	opts []CallOption
}

// LoadSkill reads a skill's SKILL.md and verifies it against the entry
// (from ListSkills or GetSkill): its size and digest must be the
// manifest's, and its frontmatter, parsed, must equal the entry's field by
// field (a missing field and null are the same). On any difference it
// returns a *SkillError and the skill must not be used; nothing else of the
// skill is read. The options apply to every read of the skill.
func (c *Client) LoadSkill(ctx context.Context, s *Skill, opts ...CallOption) (*LoadedSkill, error) {
	l := &LoadedSkill{Skill: s, c: c, opts: opts}
	data, err := l.read(ctx, s.URI)
	if err != nil {
		return nil, err
	}
	fm, body, err := skills.ParseFrontmatter(data)
	if err != nil {
		return nil, &SkillError{URI: s.URI, Err: fmt.Errorf("%w: %v", ErrSkillFrontmatter, err)}
	}
	if field, ok := sameFrontmatter(fm, s.Frontmatter); !ok {
		return nil, &SkillError{URI: s.URI, Err: fmt.Errorf("%w: field %q", ErrSkillFrontmatter, field)}
	}
	l.Manifest, l.Body = data, body
	return l, nil
}

// ReadFile reads one file of the skill by its URI and verifies it against
// the manifest, returning a *SkillError on a difference. A URI that is not
// in the manifest is refused without asking the server (for a dynamic
// skill, one outside the skill's directory; its files cannot be verified).
func (l *LoadedSkill) ReadFile(ctx context.Context, uri string) ([]byte, error) {
	return l.read(ctx, uri)
}

func (l *LoadedSkill) read(ctx context.Context, uri string) ([]byte, error) {
	s := l.Skill
	var want SkillFile
	if s.Dynamic {
		dir := strings.TrimSuffix(s.URI, skills.ManifestName)
		if uri != s.URI && !strings.HasPrefix(uri, dir) {
			return nil, &SkillError{URI: uri, Err: ErrSkillNotListed}
		}
	} else {
		f, ok := s.File(uri)
		if !ok {
			return nil, &SkillError{URI: uri, Err: ErrSkillNotListed}
		}
		want = f
	}
	res, err := l.c.ReadResource(ctx, uri, l.opts...)
	if err != nil {
		return nil, err
	}
	var data []byte
	found := false
	for _, ct := range res.Contents {
		if ct.URI != "" && ct.URI != uri {
			continue
		}
		found = true
		if ct.Blob != nil {
			data = ct.Blob
		} else {
			data = []byte(ct.Text)
		}
		break
	}
	if !found {
		return nil, &ProtocolError{Method: "resources/read", Msg: "no contents for " + uri}
	}
	if s.Dynamic {
		return data, nil
	}
	if int64(len(data)) != want.Size {
		return nil, &SkillError{URI: uri, Err: fmt.Errorf("%w: %d bytes, the manifest says %d", ErrSkillSize, len(data), want.Size)}
	}
	if skills.Digest(data) != want.Digest {
		return nil, &SkillError{URI: uri, Err: ErrSkillDigest}
	}
	return data, nil
}

// sameFrontmatter compares two frontmatter objects field by field, a
// missing field being null; it returns the first field that differs.
func sameFrontmatter(a, b json.RawMessage) (string, bool) {
	if bytes.Equal(a, b) {
		return "", true
	}
	var ma, mb map[string]any
	if json.Unmarshal(a, &ma) != nil || json.Unmarshal(b, &mb) != nil {
		return "", false
	}
	for k, v := range ma {
		if !reflect.DeepEqual(v, mb[k]) {
			return k, false
		}
	}
	for k, v := range mb {
		if _, ok := ma[k]; !ok && v != nil {
			return k, false
		}
	}
	return "", true
}
