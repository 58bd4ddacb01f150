// Command transport-ws is the mcphost transport plugin for MCP over WebSocket.
package main

import (
	"os"

	"github.com/mcphost/mcphost/plugins/transport-ws/wstransport"
)

func main() { os.Exit(wstransport.Main()) }
