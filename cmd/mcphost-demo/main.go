// Command mcphost-demo is the demo MCP server bundled with mcphost.
package main

import (
	"os"

	"github.com/mcphost/mcphost/internal/demoserver"
)

func main() { os.Exit(demoserver.Main(os.Args[1:], os.Stderr, os.Exit)) }
