package conn

import (
	"context"
	"maps"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host/registry"
)

// Extensions: what servers declare in their capabilities' extensions, and
// the methods of the extensions the host sends (custom methods of the
// go-sdk client, registered on every client the connections make).

// addExtensionMethods lets client send the methods of the extensions the
// host speaks: the Skills extension's skills/list, skills/get and
// resources/directory/read.
func addExtensionMethods(client *mcp.Client) {
	// (They fail only for a standard method's name.)
	_ = mcp.AddSendingCustomMethod[*registry.ListSkillsParams, *registry.ListSkillsResult](client, registry.MethodListSkills)
	_ = mcp.AddSendingCustomMethod[*registry.GetSkillParams, *registry.GetSkillResult](client, registry.MethodGetSkill)
	_ = mcp.AddSendingCustomMethod[*registry.ReadDirectoryParams, *registry.ReadDirectoryResult](client, registry.MethodReadDirectory)
}

// Extensions returns the extensions the connection's server declared in
// its capabilities (a copy; nil if it declared none or is not connected).
// It never connects.
func (c *Conn) Extensions() map[string]any {
	c.mu.Lock()
	cs := c.session
	c.mu.Unlock()
	if cs == nil {
		return nil
	}
	ir := cs.InitializeResult()
	if ir == nil || ir.Capabilities == nil || len(ir.Capabilities.Extensions) == 0 {
		return nil
	}
	return maps.Clone(ir.Capabilities.Extensions)
}

// ExtensionsOf returns the extensions server declared on the connection
// ctx uses (see For): nil if none, or if it is not connected.
func (m *Manager) ExtensionsOf(ctx context.Context, server string) map[string]any {
	c := m.For(ctx, server)
	if c == nil {
		return nil
	}
	return c.Extensions()
}

// ListSkills sends skills/list to server (on the connection ctx uses),
// following nextCursor to the end, and returns every entry with the
// smallest ttlMs and the narrowest cacheScope the pages gave (nil, "" if
// none).
func (m *Manager) ListSkills(ctx context.Context, server string) (skills []*registry.Skill, ttl *int, scope string, err error) {
	err = m.Do(ctx, server, func(ctx context.Context, cs *mcp.ClientSession) error {
		skills, ttl, scope = nil, nil, ""
		cursor := ""
		for pages := 0; ; pages++ {
			res, err := mcp.CallCustomMethod[*registry.ListSkillsParams, *registry.ListSkillsResult](ctx, cs,
				registry.MethodListSkills, &registry.ListSkillsParams{Cursor: cursor})
			if err != nil {
				return err
			}
			skills = append(skills, res.Skills...)
			if res.TTLMs != nil && (ttl == nil || *res.TTLMs < *ttl) {
				v := *res.TTLMs
				ttl = &v
			}
			if res.CacheScope == "private" || scope == "" {
				scope = res.CacheScope
			}
			if res.NextCursor == "" || res.NextCursor == cursor || pages == maxSkillPages {
				return nil
			}
			cursor = res.NextCursor
		}
	})
	return skills, ttl, scope, err
}

// maxSkillPages bounds the pages of one server's skills/list (a server
// that never stops paging must not hold the request forever).
const maxSkillPages = 100

// GetSkill sends skills/get for uri (the server's own) to server, on the
// connection ctx uses.
func (m *Manager) GetSkill(ctx context.Context, server, uri string) (*registry.GetSkillResult, error) {
	var res *registry.GetSkillResult
	err := m.Do(ctx, server, func(ctx context.Context, cs *mcp.ClientSession) error {
		var err error
		res, err = mcp.CallCustomMethod[*registry.GetSkillParams, *registry.GetSkillResult](ctx, cs,
			registry.MethodGetSkill, &registry.GetSkillParams{URI: uri})
		return err
	})
	return res, err
}

// ReadDirectory sends resources/directory/read for p (the server's own
// URI) to server, on the connection ctx uses.
func (m *Manager) ReadDirectory(ctx context.Context, server string, p *registry.ReadDirectoryParams) (*registry.ReadDirectoryResult, error) {
	var res *registry.ReadDirectoryResult
	err := m.Do(ctx, server, func(ctx context.Context, cs *mcp.ClientSession) error {
		var err error
		res, err = mcp.CallCustomMethod[*registry.ReadDirectoryParams, *registry.ReadDirectoryResult](ctx, cs,
			registry.MethodReadDirectory, &registry.ReadDirectoryParams{URI: p.URI, Cursor: p.Cursor})
		return err
	})
	return res, err
}
