package clientconf

import (
	"fmt"
	"path/filepath"
)

// The clients (WP-A owns this file: verify each path against the client's
// own documentation and correct it).
var clients = []Client{
	{ID: "claude-code", Name: "Claude Code", Scopes: []Scope{ScopeUser, ScopeProject}},
	{ID: "claude-desktop", Name: "Claude Desktop", Scopes: []Scope{ScopeUser}},
	{ID: "cursor", Name: "Cursor", Scopes: []Scope{ScopeUser, ScopeProject}},
	{ID: "vscode", Name: "VS Code", Scopes: []Scope{ScopeUser, ScopeProject}},
	{ID: "gemini", Name: "Gemini CLI", Scopes: []Scope{ScopeUser, ScopeProject}},
	{ID: "codex", Name: "Codex", Scopes: []Scope{ScopeUser}},
}

// Clients returns the clients mcphost knows, in a fixed order.
func Clients() []Client { return append([]Client(nil), clients...) }

// Lookup returns the client id names.
func Lookup(id string) (Client, error) {
	for _, c := range clients {
		if c.ID == id {
			return c, nil
		}
	}
	return Client{}, fmt.Errorf("%w %q", ErrUnknownClient, id)
}

// Path returns the file in which client c keeps its MCP servers in scope.
// (Stub: WP-A completes the table for every OS.)
func (c Client) Path(scope Scope, env Env) (string, error) {
	home, _ := env.LookupEnv("HOME")
	switch {
	case c.ID == "claude-code" && scope == ScopeUser:
		return filepath.Join(home, ".claude.json"), nil
	case c.ID == "claude-code" && scope == ScopeProject:
		return filepath.Join(env.ProjectDir, ".mcp.json"), nil
	case c.ID == "cursor" && scope == ScopeUser:
		return filepath.Join(home, ".cursor", "mcp.json"), nil
	case c.ID == "cursor" && scope == ScopeProject:
		return filepath.Join(env.ProjectDir, ".cursor", "mcp.json"), nil
	case c.ID == "vscode" && scope == ScopeProject:
		return filepath.Join(env.ProjectDir, ".vscode", "mcp.json"), nil
	case c.ID == "gemini" && scope == ScopeUser:
		return filepath.Join(home, ".gemini", "settings.json"), nil
	case c.ID == "gemini" && scope == ScopeProject:
		return filepath.Join(env.ProjectDir, ".gemini", "settings.json"), nil
	case c.ID == "codex" && scope == ScopeUser:
		return filepath.Join(home, ".codex", "config.toml"), nil
	}
	return "", fmt.Errorf("%s has no %s scope here (stub)", c.Name, scope)
}
