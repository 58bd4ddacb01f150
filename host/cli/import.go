package cli

import "github.com/spf13/cobra"

// importCmd is `mcphost import CLIENT|FILE` (WP-B).
func (a *app) importCmd() *cobra.Command {
	return &cobra.Command{Use: "import CLIENT|FILE", Short: "Import the MCP servers of another client's configuration"}
}
