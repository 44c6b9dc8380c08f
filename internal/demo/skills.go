package demo

import (
	"embed"
	"io/fs"

	"github.com/mcpkit/mcpkit/mcp"
)

// skillData holds the demo's Agent Skills: pdf-processing, with a
// references/ and a scripts/ subdirectory, and mcpkit/serving-skills, at a
// nested skill path, with a references/ subdirectory. The conformance
// scenarios exercise the first skill listed, so each has a subdirectory.
//
//go:embed skilldata
var skillData embed.FS

// Skills returns the file system of the demo's skills.
func Skills() fs.FS {
	sub, err := fs.Sub(skillData, "skilldata")
	if err != nil {
		panic(err) // the embedded directory is always there
	}
	return sub
}

// AddSkills serves the demo's skills on s, with resources/directory/read.
func AddSkills(s *mcp.Server) {
	if err := s.AddSkills(Skills(), &mcp.SkillsOptions{DirectoryRead: true}); err != nil {
		panic("demo skills: " + err.Error()) // they are part of the binary: a test catches this
	}
}
