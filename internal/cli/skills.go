package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/mcpkit/mcpkit/client"
)

// skillsCommand is `mcpkit skills`.
var skillsCommand = clientCommand{name: "skills", synopsis: "[NAME]", min: 0, max: 1, flags: skillsCmdFlags,
	short: "list the Agent Skills, show one, or download it verified (--save DIR)", about: `Lists the server's Agent Skills (the skills extension, skills/list), one a line:
name, file count and size, URI and description; no skill file is read
(--json: {"skills": [...]} as the server sent them). With NAME (a skill's
name or the URI of its SKILL.md), loads that skill: SKILL.md is read and
verified against the listing (size, digest and frontmatter) and printed, and
its files are listed. With --save DIR, every file of the skill is read and
verified too, and only then written under DIR/NAME (which must not exist).
A file that fails verification is reported and nothing is written.
`}

// skillsCmd runs `mcpkit skills`.
func skillsCmdFlags(fs *flag.FlagSet) clientRunner {
	save := fs.String("save", "", "with NAME, download the skill's files, verified, into `DIR`/NAME")
	return func(inv *invocation, f *clientFlags, t target, pos []string) int {
		return skillsCmd(inv, f, t, pos, *save)
	}
}

// skillsCmd runs `mcpkit skills` with its flags and --save DIR.
func skillsCmd(inv *invocation, f *clientFlags, t target, pos []string, save string) int {
	stdin, stdout, stderr := inv.stdin, inv.stdout, inv.stderr
	if save != "" && len(pos) == 0 {
		fmt.Fprintf(stderr, "mcpkit skills: --save needs the NAME of a skill\n")
		return exitUsage
	}
	ctx := context.Background()
	c, code := connectClient(ctx, "skills", f, t, clientIO{stdin, stderr})
	if c == nil {
		return code
	}
	defer c.Close()
	var list []*client.Skill
	for s, err := range c.ListSkills(ctx) {
		if err != nil {
			return requestFailed("skills", err, stderr)
		}
		list = append(list, s)
	}
	if len(pos) == 0 {
		return printSkills(stdout, stderr, f.json, list)
	}
	s, err := pickSkill(list, pos[0])
	if err != nil {
		fmt.Fprintf(stderr, "mcpkit skills: %v\n", err)
		return exitUsage
	}
	loaded, err := c.LoadSkill(ctx, s)
	if err != nil {
		return skillFailed(err, stderr)
	}
	if save != "" {
		return saveSkill(ctx, loaded, save, stdout, stderr)
	}
	if f.json {
		b, _ := json.Marshal(map[string]any{"skill": json.RawMessage(mustJSON(s)), "manifest": string(loaded.Manifest)})
		printRaw(stdout, b)
		return exitOK
	}
	fmt.Fprintf(stdout, "%s", forTerminal(stdout, string(loaded.Manifest)))
	if !strings.HasSuffix(string(loaded.Manifest), "\n") {
		fmt.Fprintln(stdout)
	}
	fmt.Fprintf(stdout, "\nfiles (%s):\n", fileSummary(s))
	for _, fl := range s.Files {
		fmt.Fprintf(stdout, "  %-8d %s\n", fl.Size, termSafe(fl.URI, false))
	}
	return exitOK
}

func mustJSON(s *client.Skill) []byte {
	b, _ := json.Marshal(map[string]any{"uri": s.URI, "frontmatter": s.Frontmatter, "resources": s.Files})
	return b
}

func fileSummary(s *client.Skill) string {
	if s.Dynamic {
		return "dynamic"
	}
	var total int64
	for _, f := range s.Files {
		total += f.Size
	}
	return fmt.Sprintf("%d, %d bytes", len(s.Files), total)
}

func printSkills(stdout, stderr io.Writer, asJSON bool, list []*client.Skill) int {
	if asJSON {
		items := make([]json.RawMessage, 0, len(list))
		for _, s := range list {
			items = append(items, mustJSON(s))
		}
		b, _ := json.Marshal(map[string]any{"skills": items})
		printRaw(stdout, b)
		return exitOK
	}
	if len(list) == 0 {
		fmt.Fprintln(stderr, "(no skills)")
		return exitOK
	}
	wName, wFiles, wURI := 0, 0, 0
	for _, s := range list {
		wName, wFiles, wURI = max(wName, len(s.Name)), max(wFiles, len(fileSummary(s))), max(wURI, len(termSafe(s.URI, false)))
	}
	for _, s := range list {
		fmt.Fprintf(stdout, "%-*s  %-*s  %-*s  %s\n", wName, s.Name, wFiles, fileSummary(s), wURI, termSafe(s.URI, false), oneLine(s.Description, 100))
	}
	return exitOK
}

// pickSkill finds the skill named name (or whose SKILL.md URI is name).
func pickSkill(list []*client.Skill, name string) (*client.Skill, error) {
	var found []*client.Skill
	for _, s := range list {
		if s.URI == name {
			return s, nil
		}
		if s.Name == name {
			found = append(found, s)
		}
	}
	switch len(found) {
	case 0:
		return nil, fmt.Errorf("the server lists no skill named %q", name)
	case 1:
		return found[0], nil
	}
	uris := make([]string, len(found))
	for i, s := range found {
		uris[i] = s.URI
	}
	return nil, fmt.Errorf("%d skills are named %q; give the URI of one: %s", len(found), name, strings.Join(uris, ", "))
}

// skillFailed reports a skill that could not be loaded.
func skillFailed(err error, stderr io.Writer) int {
	var se *client.SkillError
	if errors.As(err, &se) {
		fmt.Fprintf(stderr, "mcpkit skills: verification failed, the skill is not used: %v\n", err)
		return exitRequestFails
	}
	return requestFailed("skills", err, stderr)
}

// saveSkill reads and verifies every file of the skill, then writes them
// under dir/NAME. Paths come from the server: each is checked to stay
// inside the skill's directory, and the files are written through an
// os.Root, which refuses any path leaving it.
func saveSkill(ctx context.Context, l *client.LoadedSkill, dir string, stdout, stderr io.Writer) int {
	s := l.Skill
	base := strings.TrimSuffix(s.URI, "SKILL.md")
	files := map[string][]byte{"SKILL.md": l.Manifest}
	order := []string{"SKILL.md"}
	for _, f := range s.Files {
		if f.URI == s.URI {
			continue
		}
		rel, err := relPath(strings.TrimPrefix(f.URI, base))
		if err != nil {
			fmt.Fprintf(stderr, "mcpkit skills: %s: %v; nothing written\n", f.URI, err)
			return exitRequestFails
		}
		data, err := l.ReadFile(ctx, f.URI)
		if err != nil {
			return skillFailed(err, stderr)
		}
		if _, dup := files[rel]; dup {
			fmt.Fprintf(stderr, "mcpkit skills: %s: two files map to %s; nothing written\n", f.URI, rel)
			return exitRequestFails
		}
		files[rel] = data
		order = append(order, rel)
	}
	if s.Dynamic {
		fmt.Fprintln(stderr, "(the server publishes no file list for this skill: only SKILL.md is saved)")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		fmt.Fprintf(stderr, "mcpkit skills: --save: %v\n", err)
		return exitUsage
	}
	// The client checked the name against the naming rules when it decoded
	// the skill; DIR is opened as an os.Root all the same, so the skill's
	// folder and every file in it are created through it and cannot land
	// outside DIR whatever the server sent.
	top, err := os.OpenRoot(dir)
	if err != nil {
		fmt.Fprintf(stderr, "mcpkit skills: --save: %v\n", err)
		return exitUsage
	}
	defer top.Close()
	if err := top.Mkdir(s.Name, 0o755); err != nil {
		if errors.Is(err, fs.ErrExist) {
			fmt.Fprintf(stderr, "mcpkit skills: --save: %s already exists; remove it or choose another DIR\n", filepath.Join(dir, s.Name))
		} else {
			fmt.Fprintf(stderr, "mcpkit skills: --save: %v\n", err)
		}
		return exitUsage
	}
	root, err := top.OpenRoot(s.Name)
	if err != nil {
		fmt.Fprintf(stderr, "mcpkit skills: --save: %v\n", err)
		return exitUsage
	}
	defer root.Close()
	for _, rel := range order {
		if d := path.Dir(rel); d != "." {
			if err := root.MkdirAll(d, 0o755); err != nil {
				fmt.Fprintf(stderr, "mcpkit skills: --save: %v\n", err)
				return exitRequestFails
			}
		}
		if err := root.WriteFile(rel, files[rel], 0o644); err != nil {
			fmt.Fprintf(stderr, "mcpkit skills: --save: %v\n", err)
			return exitRequestFails
		}
	}
	fmt.Fprintf(stdout, "saved %s (%d files, verified) in %s\n", s.Name, len(order), filepath.Join(dir, s.Name))
	return exitOK
}

// relPath turns the part of a file URI after its skill's directory into a
// relative slash path: each element percent-decoded, none empty, "." or
// "..", and none holding a slash or a NUL.
func relPath(escaped string) (string, error) {
	parts := strings.Split(escaped, "/")
	for i, p := range parts {
		d, err := url.PathUnescape(p)
		if err != nil {
			return "", fmt.Errorf("malformed path: %v", err)
		}
		if d == "" || d == "." || d == ".." || strings.ContainsAny(d, "/\\\x00") {
			return "", fmt.Errorf("unsafe path element %q", d)
		}
		parts[i] = d
	}
	return strings.Join(parts, "/"), nil
}
