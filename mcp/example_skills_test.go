package mcp_test

import (
	"errors"
	"fmt"
	"testing/fstest"

	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/skills"
)

func ExampleServer_AddSkills() {
	// Any fs.FS: os.DirFS("skills") on disk, an embed.FS in the binary.
	fsys := fstest.MapFS{
		"pdf-processing/SKILL.md":            {Data: []byte("---\nname: pdf-processing\ndescription: Work with PDF files.\n---\n# PDF processing\n")},
		"pdf-processing/references/FORMS.md": {Data: []byte("# Forms\n")},
		"notes/SKILL.md":                     {Data: []byte("---\nname: jottings\ndescription: The name is not the directory's.\n---\n")},
	}
	s := mcp.NewServer(nil)
	err := s.AddSkills(fsys, &mcp.SkillsOptions{DirectoryRead: true})
	var refused *skills.Error
	if errors.As(err, &refused) {
		// pdf-processing is served anyway.
		fmt.Println("left out:", refused.Path, errors.Is(err, skills.ErrNameMismatch))
	}
	// Output:
	// left out: notes/SKILL.md true
}
