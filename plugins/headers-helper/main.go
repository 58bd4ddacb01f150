// Command headers-helper is the mcphost plugin that runs a server's
// headers_helper command to obtain dynamic request headers.
package main

import (
	"os"

	"github.com/mcphost/mcphost/plugins/headers-helper/headershelper"
)

func main() { os.Exit(headershelper.Main()) }
