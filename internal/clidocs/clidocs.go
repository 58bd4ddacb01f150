// Package clidocs generates the mcphost CLI reference (docs/cli) from the
// cobra commands with cobra's own Markdown generator.
package clidocs

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra/doc"

	"github.com/mcphost/mcphost/host/cli"
)

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
