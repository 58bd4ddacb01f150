// Command clidocs writes the mcphost CLI reference, one Markdown file per
// command, generated from the cobra commands (host/cli.NewRootCommand).
//
//	go run ./internal/cmd/clidocs [DIR]   # DIR defaults to docs/cli
//
// `make docs` runs it; a test (clidocs_test.go) fails when docs/cli is not
// what it would write.
package main

import (
	"fmt"
	"os"

	"github.com/mcphost/mcphost/internal/clidocs"
)

func main() {
	dir := "docs/cli"
	if len(os.Args) > 1 {
		dir = os.Args[1]
	}
	if err := clidocs.Write(dir); err != nil {
		fmt.Fprintln(os.Stderr, "clidocs:", err)
		os.Exit(1)
	}
}
