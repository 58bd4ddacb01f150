package llmtools

import (
	"context"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/registry"
)

// FromHost exports a host's tools as format f's definitions: with no
// servers, every active server's (auto mode, Host.Tools); otherwise only
// the named servers' (manual mode, Host.ToolsOf). The registry's problems
// (servers that could not be reached, tools left out) are returned beside
// the export; the only error is ErrUnknownFormat.
func FromHost(ctx context.Context, h *host.Host, f Format, servers ...string) (*Export, []registry.Problem, error) {
	if _, err := ParseFormat(string(f)); err != nil {
		return nil, nil, err
	}
	var (
		tools    []*registry.Tool
		problems []registry.Problem
	)
	if len(servers) == 0 {
		tools, problems = h.Tools(ctx)
	} else {
		tools, problems = h.ToolsOf(ctx, servers)
	}
	e, err := Convert(tools, f)
	return e, problems, err
}
