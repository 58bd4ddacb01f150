package host

import (
	"context"
	"fmt"

	"github.com/mcphost/mcphost/host/registry"
)

// The Skills extension (registry.ExtensionSkills) as the host speaks it to
// servers: asked only of a server that declared the extension, on the
// connection ctx's caller uses (a per-user server's own for a gateway
// user), under the permission rules (a server denied to the caller is
// refused, as a resource read is).

// ServerExtensions returns the extensions server declared in its
// capabilities on the connection ctx's caller uses: nil when it declared
// none or is not connected (it never connects).
func (h *Host) ServerExtensions(ctx context.Context, server string) map[string]any {
	return h.conns.ExtensionsOf(ctx, server)
}

// HasSkills reports whether server declared the Skills extension (on the
// connection ctx's caller uses, if connected).
func (h *Host) HasSkills(ctx context.Context, server string) bool {
	_, ok := h.ServerExtensions(ctx, server)[registry.ExtensionSkills]
	return ok
}

// ListSkills lists server's skills (every page) under their own URIs, with
// the smallest ttlMs and narrowest cacheScope its pages gave.
func (h *Host) ListSkills(ctx context.Context, server string) (skills []*registry.Skill, ttl *int, scope string, err error) {
	if err := h.serverAllowed(ctx, server); err != nil {
		return nil, nil, "", err
	}
	skills, ttl, scope, err = h.conns.ListSkills(ctx, server)
	if err != nil {
		return nil, nil, "", fmt.Errorf("listing the skills of %s: %w", server, err)
	}
	return skills, ttl, scope, nil
}

// GetSkill gets the entry of server's skill whose SKILL.md is uri (the
// server's own URI).
func (h *Host) GetSkill(ctx context.Context, server, uri string) (*registry.GetSkillResult, error) {
	if err := h.serverAllowed(ctx, server); err != nil {
		return nil, err
	}
	res, err := h.conns.GetSkill(ctx, server, uri)
	if err != nil {
		return nil, fmt.Errorf("getting the skill %s from %s: %w", uri, server, err)
	}
	return res, nil
}

// ReadDirectory reads the directory resource p.URI (the server's own URI)
// of server (resources/directory/read, of servers whose Skills settings
// say directoryRead).
func (h *Host) ReadDirectory(ctx context.Context, server string, p *registry.ReadDirectoryParams) (*registry.ReadDirectoryResult, error) {
	if err := h.serverAllowed(ctx, server); err != nil {
		return nil, err
	}
	res, err := h.conns.ReadDirectory(ctx, server, p)
	if err != nil {
		return nil, fmt.Errorf("reading the directory %s of %s: %w", p.URI, server, err)
	}
	return res, nil
}

// ReadsDirectories reports whether server declared the Skills extension
// with directoryRead: true.
func (h *Host) ReadsDirectories(ctx context.Context, server string) bool {
	settings, _ := h.ServerExtensions(ctx, server)[registry.ExtensionSkills].(map[string]any)
	return settings["directoryRead"] == true
}
