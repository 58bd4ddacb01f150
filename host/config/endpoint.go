package config

import (
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/gohcl"

	"github.com/mcphost/mcphost/host/permissions"
)

// Endpoint is a named endpoint of the gateway (an endpoint "NAME" block):
// a profile of what one kind of client is served — some of the servers,
// some of their tools, under a naming of its own — at /mcp/NAME by serve
// --http and on stdio by serve --endpoint NAME. Calls, reads and prompts
// of anything outside it are refused as unknown; the permission rules,
// pins, audit, rate limits and inbound OAuth apply as on /mcp.
type Endpoint struct {
	Name string `json:"name"`
	// Servers are the servers the endpoint serves (their tools, prompts,
	// resources and templates), by name.
	Servers []string `json:"servers"`
	// Tools, if set, limits the servers' tools further.
	Tools *EndpointTools `json:"tools,omitempty"`
	// Naming is how tools and prompts are named at the endpoint (one of
	// NamingModes); "" is the gateway's (serve --naming, settings {
	// naming }).
	Naming string `json:"naming,omitempty"`
	// Origin is where the block is declared.
	Origin *Origin `json:"origin,omitempty"`
}

// EndpointTools limits an endpoint's tools (its tools { include, exclude }
// block). Patterns are those of permission rules, over registry names:
// mcp__SERVER__TOOL, with the wildcards * and ?, or mcp__SERVER for all of a
// server's tools (permissions.Match) — an endpoint spans servers, so a
// tool's own name alone would be ambiguous. A tool is served if it matches
// an include pattern (or include is unset: nil; include = [] serves none)
// and no exclude pattern; a server's login pseudo-tool is never left out.
type EndpointTools struct {
	Include []string `json:"include"` // (no omitempty: [] is not unset)
	Exclude []string `json:"exclude,omitempty"`
}

// HasServer reports whether server is one of the endpoint's servers.
func (e *Endpoint) HasServer(server string) bool { return slices.Contains(e.Servers, server) }

// Allows reports whether the tool of registry name name, of server, is
// served at the endpoint. login says the tool is the server's login
// pseudo-tool (host.IsAuthTool), which the tools block never leaves out; a
// server's own tool of that name is filtered as any other.
func (e *Endpoint) Allows(server, name string, login bool) bool {
	if !e.HasServer(server) {
		return false
	}
	f := e.Tools
	if f == nil || login {
		return true
	}
	for _, p := range f.Exclude {
		if permissions.Match(p, name) {
			return false
		}
	}
	if f.Include == nil {
		return true // (no include: every tool not excluded; include = []: none)
	}
	for _, p := range f.Include {
		if permissions.Match(p, name) {
			return true
		}
	}
	return false
}

// Equal reports whether e and o serve the same (their origins aside).
func (e *Endpoint) Equal(o *Endpoint) bool {
	if e == nil || o == nil {
		return e == o
	}
	a, b := *e, *o
	a.Origin, b.Origin = nil, nil
	return reflect.DeepEqual(a, b)
}

// Endpoint returns the endpoint named name, or nil.
func (c *Config) Endpoint(name string) *Endpoint {
	for _, e := range c.Endpoints {
		if e.Name == name {
			return e
		}
	}
	return nil
}

// EndpointNames returns the endpoints' names, sorted.
func (c *Config) EndpointNames() []string {
	var out []string
	for _, e := range c.Endpoints {
		out = append(out, e.Name)
	}
	return out
}

// endpointBlock is an endpoint block as written.
type endpointBlock struct {
	ServersExpr hcl.Expression      `hcl:"servers"` // (a list of strings, decoded with its elements' ranges)
	Naming      *string             `hcl:"naming,optional"`
	Tools       []*endpointToolsBlk `hcl:"tools,block"`
	NamingRange hcl.Range           `hcl:"naming,attr_value_range"`
	Servers     []string            // (ServersExpr's value)
}

type endpointToolsBlk struct {
	Include      []string  `hcl:"include,optional"`
	Exclude      []string  `hcl:"exclude,optional"`
	IncludeRange hcl.Range `hcl:"include,attr_value_range"`
	ExcludeRange hcl.Range `hcl:"exclude,attr_value_range"`
	DefRange     hcl.Range `hcl:",def_range"`
}

// decodedEndpoint is an endpoint of a file, with where its servers are
// named (checked once every file's servers are merged).
type decodedEndpoint struct {
	*Endpoint
	serverRanges []hcl.Range // of Servers[i]
}

// decodeEndpoint decodes an endpoint "NAME" block.
func decodeEndpoint(blk *hcl.Block, path string, scope Scope, ctx *hcl.EvalContext) (*decodedEndpoint, hcl.Diagnostics) {
	name := blk.Labels[0]
	var diags hcl.Diagnostics
	if !ValidServerName(name) {
		diags = append(diags, errorf(&blk.LabelRanges[0], "Invalid endpoint name",
			"Endpoint name %q is not allowed: use letters and digits, optionally joined by single '-' or '_' (it is served at /mcp/NAME).", name))
	}
	var b endpointBlock
	d := gohcl.DecodeBody(blk.Body, ctx, &b)
	diags = append(diags, d...)
	if d.HasErrors() {
		return nil, diags
	}
	var servers []string
	if d := gohcl.DecodeExpression(b.ServersExpr, ctx, &servers); d.HasErrors() {
		return nil, append(diags, d...)
	}
	b.Servers = servers
	e := &Endpoint{Name: name, Servers: b.Servers, Origin: &Origin{Scope: scope, File: path, Range: blk.DefRange}}
	de := &decodedEndpoint{Endpoint: e}
	elems, _ := hcl.ExprList(b.ServersExpr)
	for i := range b.Servers {
		r := b.ServersExpr.Range()
		if len(elems) == len(b.Servers) {
			r = elems[i].Range()
		}
		de.serverRanges = append(de.serverRanges, r)
	}
	if len(b.Servers) == 0 {
		diags = append(diags, errorf(b.ServersExpr.Range().Ptr(), "No servers", "An endpoint serves the servers it names: servers = [\"github\", …]."))
	}
	seen := map[string]bool{}
	for i, s := range b.Servers {
		if seen[s] {
			diags = append(diags, warnf(&de.serverRanges[i], "Server named twice", "Endpoint %q names server %q twice.", name, s))
		}
		seen[s] = true
	}
	if b.Naming != nil {
		if !slices.Contains(NamingModes(), *b.Naming) {
			diags = append(diags, errorf(b.NamingRange.Ptr(), "Invalid naming",
				"naming must be one of %s, got %q (leave it out for the gateway's).", strings.Join(NamingModes(), ", "), *b.Naming))
		}
		e.Naming = *b.Naming
	}
	for i, t := range b.Tools {
		if i > 0 {
			diags = append(diags, errorf(&t.DefRange, "Duplicate tools block", "An endpoint has at most one tools block; the first is at %s.", b.Tools[0].DefRange))
			continue
		}
		for _, list := range []struct {
			name     string
			patterns []string
			rng      hcl.Range
		}{{"include", t.Include, t.IncludeRange}, {"exclude", t.Exclude, t.ExcludeRange}} {
			for _, p := range list.patterns {
				if err := permissions.ValidatePattern(permissions.Deny, p); err != nil {
					diags = append(diags, errorf(list.rng.Ptr(), "Invalid tool pattern",
						"An endpoint's %s lists registry names or globs of them, as permission rules do (\"mcp__github__create_*\", \"mcp__github\" for all of a server's tools): %v.", list.name, err))
				}
			}
		}
		if t.IncludeRange != (hcl.Range{}) && len(t.Include) == 0 {
			diags = append(diags, warnf(t.IncludeRange.Ptr(), "No tools included", "include = [] serves none of the endpoint's tools (but login pseudo-tools)."))
		}
		e.Tools = &EndpointTools{Include: t.Include, Exclude: t.Exclude}
		if t.IncludeRange != (hcl.Range{}) && e.Tools.Include == nil {
			e.Tools.Include = []string{} // (set, empty: serves none)
		}
	}
	return de, diags
}

// mergeEndpoints collects the endpoint blocks of every file (a later, higher
// precedence file's replaces an earlier one of the same name) and checks
// that each names configured servers.
func mergeEndpoints(cfg *Config, files []*decodedFile) hcl.Diagnostics {
	var diags hcl.Diagnostics
	byName := map[string]*decodedEndpoint{}
	for _, f := range files {
		for _, e := range f.endpoints {
			byName[e.Name] = e
		}
	}
	cfg.Endpoints = nil
	for _, de := range byName {
		for i, s := range de.Servers {
			if cfg.Server(s) != nil {
				continue
			}
			var names []string
			for _, c := range cfg.Servers {
				names = append(names, c.Name)
			}
			detail := fmt.Sprintf("Endpoint %q names server %q, which is not configured.", de.Name, s)
			if len(names) > 0 {
				detail += " The servers are " + strings.Join(names, ", ") + "."
			}
			diags = append(diags, forScope(de.Origin.Scope, hcl.Diagnostics{errorf(&de.serverRanges[i], "Unknown server", "%s", detail)})...)
		}
		cfg.Endpoints = append(cfg.Endpoints, de.Endpoint)
	}
	sort.Slice(cfg.Endpoints, func(i, j int) bool { return cfg.Endpoints[i].Name < cfg.Endpoints[j].Name })
	return diags
}
