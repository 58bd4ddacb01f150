// Command clidocs writes the mcphost CLI reference, one Markdown file per
// command, generated from the cobra commands (host/cli.NewRootCommand) with
// cobra's own Markdown generator:
//
//	go run ./internal/testing/clidocs [DIR]   # DIR defaults to docs/cli; or: make docs
//
// Its test fails when docs/cli is not what it would write. It is a tool of
// the repository, built into nothing that ships (hence internal/testing).
package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra/doc"

	"github.com/mcphost/mcphost/host/cli"
)

func main() {
	dir := "docs/cli"
	if len(os.Args) > 1 {
		dir = os.Args[1]
	}
	if err := Write(dir); err != nil {
		fmt.Fprintln(os.Stderr, "clidocs:", err)
		os.Exit(1)
	}
}

// Write replaces the Markdown files of dir with the CLI reference: one file
// per command (mcphost.md, mcphost_server_add.md, ...). Other files in dir
// are kept.
func Write(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("clidocs: %w", err)
	}
	old, err := filepath.Glob(filepath.Join(dir, "mcphost*.md"))
	if err != nil {
		return fmt.Errorf("clidocs: %w", err)
	}
	for _, f := range old {
		if err := os.Remove(f); err != nil {
			return fmt.Errorf("clidocs: %w", err)
		}
	}
	if err := doc.GenMarkdownTree(cli.NewRootCommand(), dir); err != nil {
		return fmt.Errorf("clidocs: generating into %s: %w", dir, err)
	}
	return nil
}
