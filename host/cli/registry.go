package cli

import "github.com/spf13/cobra"

// registryCmd is `mcphost registry search|show` (WP-C).
func (a *app) registryCmd() *cobra.Command {
	return &cobra.Command{Use: "registry", Short: "Search the MCP Registry for servers"}
}
