package client_test

import (
	"context"
	"fmt"
	"log"
	"testing/fstest"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/mcp"
)

func ExampleClient_LoadSkill() {
	s := mcp.NewServer(nil)
	err := s.AddSkills(fstest.MapFS{
		"pdf-processing/SKILL.md":            {Data: []byte("---\nname: pdf-processing\ndescription: Work with PDF files.\n---\nRead references/FORMS.md first.\n")},
		"pdf-processing/references/FORMS.md": {Data: []byte("# Forms\n")},
	}, nil)
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	c, err := client.Connect(ctx, &client.MemoryTransport{Server: s}, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	// Listing reads no file; LoadSkill reads and verifies SKILL.md, and
	// ReadFile each other file when it is needed.
	for skill, err := range c.ListSkills(ctx) {
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(skill.Name+":", skill.Description, len(skill.Files), "files")
		loaded, err := c.LoadSkill(ctx, skill)
		if err != nil {
			log.Fatal(err) // a *client.SkillError: the content must not be used
		}
		fmt.Printf("%s", loaded.Body)
		forms, err := loaded.ReadFile(ctx, "skill://pdf-processing/references/FORMS.md")
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("%s", forms)
	}
	// Output:
	// pdf-processing: Work with PDF files. 2 files
	// Read references/FORMS.md first.
	// # Forms
}
