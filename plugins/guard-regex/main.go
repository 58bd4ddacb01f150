// Command guard-regex is the mcphost interceptor plugin that denies calls
// whose arguments match a regular expression (deny_arguments) and masks
// matches in results (redact_results).
package main

import (
	"os"

	"github.com/mcphost/mcphost/plugins/guard-regex/guardregex"
)

func main() { os.Exit(guardregex.Main()) }
