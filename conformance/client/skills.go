package main

import (
	"context"
	"fmt"

	"github.com/mcpkit/mcpkit/client"
)

// The client scenarios of the skills extension (SEP-2640). The scenario
// server lists one skill; a host lists skills on connection and loads one
// only when it is needed. Here, no-prefetch only lists (a host that has not
// needed the skill yet), and the verify-* scenarios load the skill and then
// read its other files, as a host using it would: the tampered SKILL.md must
// fail verification, so the other files are never read.
func init() {
	scenarios["sep-2640-client-no-prefetch"] = listSkills
	for _, name := range []string{"sep-2640-client-verify-digest", "sep-2640-client-verify-size", "sep-2640-client-verify-frontmatter"} {
		scenarios[name] = useSkills
	}
}

func skillList(ctx context.Context, c *client.Client) ([]*client.Skill, error) {
	var out []*client.Skill
	for s, err := range c.ListSkills(ctx) {
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

func listSkills(ctx context.Context, url string) error {
	c, err := connect(ctx, url)
	if err != nil {
		return err
	}
	defer c.Close()
	_, err = skillList(ctx, c)
	return err
}

// useSkills loads every listed skill and reads all its files; a skill that
// fails verification is reported (the scenario expects the error) and not
// used further.
func useSkills(ctx context.Context, url string) error {
	c, err := connect(ctx, url)
	if err != nil {
		return err
	}
	defer c.Close()
	list, err := skillList(ctx, c)
	if err != nil {
		return err
	}
	for _, s := range list {
		l, err := c.LoadSkill(ctx, s)
		if err != nil {
			return fmt.Errorf("skill %s rejected: %w", s.URI, err)
		}
		for _, f := range s.Files {
			if f.URI == s.URI {
				continue
			}
			if _, err := l.ReadFile(ctx, f.URI); err != nil {
				return fmt.Errorf("skill %s rejected: %w", s.URI, err)
			}
		}
	}
	return nil
}
