package cli

import "github.com/spf13/cobra"

// clientCmd is `mcphost client connect|disconnect|list` (WP-A).
func (a *app) clientCmd() *cobra.Command {
	return &cobra.Command{Use: "client", Short: "Connect MCP clients (Claude Code, Cursor, VS Code, ...) to the gateway"}
}
