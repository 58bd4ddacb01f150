package cli

import (
	"bytes"
	"strings"

	"github.com/spf13/cobra"
)

// NewRootCommand returns the mcphost command tree for documentation (the CLI
// reference in docs/cli is generated from it by internal/testing/clidocs). It is
// built in a fixed environment (no variables, working directory "/", empty
// input, discarded output), so that its help text is the same on every
// machine; it is not meant to be executed.
func NewRootCommand() *cobra.Command {
	var out bytes.Buffer
	a := &app{
		stdin:     strings.NewReader(""),
		stdout:    &out,
		stderr:    &out,
		lookupEnv: func(string) (string, bool) { return "", false },
		workDir:   "/",
	}
	root := a.rootCmd()
	root.DisableAutoGenTag = true
	return root
}
