package llmtools

import (
	"context"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/permissions"
	"github.com/mcphost/mcphost/host/registry"
)

// FromHost exports a host's tools as format f's definitions: with no
// servers, every active server's (auto mode, Host.Tools); otherwise only
// the named servers' (manual mode, Host.ToolsOf). Tools the permission
// rules deny are left out (a model would only be refused them), each
// reported as a problem; tools the rules ask about stay (the call asks).
// The registry's problems (servers that could not be reached, tools left
// out) are returned beside the export; the only error is ErrUnknownFormat.
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
	tools, denied := Callable(h, tools)
	e, err := Convert(tools, f)
	return e, append(problems, denied...), err
}

// Callable returns the tools the host's permission rules do not deny, and
// a problem for each one left out.
func Callable(h *host.Host, tools []*registry.Tool) ([]*registry.Tool, []registry.Problem) {
	var kept []*registry.Tool
	var left []registry.Problem
	for _, t := range tools {
		if d := h.Decide(t.Name); d.Behavior == permissions.Deny {
			left = append(left, registry.Problem{Server: t.Server, Detail: "tool " + t.Name + " is left out: " + d.Explain()})
			continue
		}
		kept = append(kept, t)
	}
	return kept, left
}
