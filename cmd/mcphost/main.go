// Command mcphost is a plugin-based MCP host. See the README.
package main

import (
	"os"

	"github.com/mcphost/mcphost/host/cli"
)

func main() { os.Exit(cli.Main()) }
