package cli

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/skills"
)

// skillsFlags are the flags of `mcpkit serve` that choose the Agent Skills
// served (the demo's embedded set by default).
type skillsFlags struct {
	dir    string
	watch  time.Duration
	strict bool
}

func (f *skillsFlags) register(fs interface {
	StringVar(*string, string, string, string)
	DurationVar(*time.Duration, string, time.Duration, string)
	BoolVar(*bool, string, bool, string)
}) {
	fs.StringVar(&f.dir, "skills", "", "serve the Agent Skills in `DIR` (every directory with a SKILL.md, at any depth) instead of the demo's")
	fs.DurationVar(&f.watch, "skills-watch", 2*time.Second, "with --skills, poll DIR this often for changed skills and tell listeners (0: load once)")
	fs.BoolVar(&f.strict, "skills-strict", false, "with --skills, refuse to start when any skill is invalid (default: serve the valid ones and log the others)")
}

// apply replaces the demo's skills with those of --skills, if given. An
// invalid skill is logged and left out, unless --skills-strict.
func (f *skillsFlags) apply(s *mcp.Server, log *slog.Logger) error {
	if f.dir == "" {
		return nil
	}
	info, err := os.Stat(f.dir)
	if err != nil {
		return fmt.Errorf("--skills: %w", err)
	}
	if !info.IsDir() {
		return fmt.Errorf("--skills: %s is not a directory", f.dir)
	}
	opts := &mcp.SkillsOptions{DirectoryRead: true, Watch: max(f.watch, 0)}
	opts.Strict = f.strict
	err = s.AddSkills(os.DirFS(f.dir), opts)
	if err == nil {
		return nil
	}
	var se *skills.Error
	if f.strict || !errors.As(err, &se) {
		return fmt.Errorf("--skills: %w", err)
	}
	log.Warn("skills left out", "dir", f.dir, "error", err)
	return nil
}
