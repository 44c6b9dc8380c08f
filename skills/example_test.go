package skills_test

import (
	"errors"
	"fmt"
	"testing/fstest"

	"github.com/mcpkit/mcpkit/skills"
)

func ExampleLoad() {
	fsys := fstest.MapFS{
		"pdf-processing/SKILL.md":            {Data: []byte("---\nname: pdf-processing\ndescription: Extract, fill, and assemble PDF documents\n---\n# PDF processing\n")},
		"pdf-processing/references/FORMS.md": {Data: []byte("# Forms\n")},
		"broken/SKILL.md":                    {Data: []byte("# no frontmatter\n")},
	}
	set, err := skills.Load(fsys, nil)
	var refused *skills.Error
	if errors.As(err, &refused) {
		fmt.Println("refused:", refused.Path, errors.Is(err, skills.ErrNoFrontmatter))
	}
	for _, s := range set.Skills() {
		fmt.Println(s.URI, s.Description)
		for _, f := range s.Files {
			fmt.Println(" ", f.URI, f.Size, f.MIMEType)
		}
	}
	// Output:
	// refused: broken/SKILL.md true
	// skill://pdf-processing/SKILL.md Extract, fill, and assemble PDF documents
	//   skill://pdf-processing/SKILL.md 101 text/markdown
	//   skill://pdf-processing/references/FORMS.md 8 text/markdown
}
