package config

import "fmt"

// Scope says where a piece of configuration came from. Scopes are ordered by
// precedence: on a name clash the server from the higher scope wins.
type Scope int

// The scopes, lowest precedence first.
const (
	// ScopeDynamic holds servers contributed at run time (by a library user or a plugin).
	ScopeDynamic Scope = iota
	// ScopeUser is the per-user file ($MCPHOST_CONFIG_DIR/config.hcl).
	ScopeUser
	// ScopeProject is the shared, committed per-project file (.mcphost.hcl), found by
	// walking up from the working directory. Its servers need approval.
	ScopeProject
	// ScopeLocal is the private per-project file kept in the user's config directory.
	ScopeLocal
	// ScopeCLI holds files named with --config; they replace discovery of the scopes above.
	ScopeCLI
	// ScopeManaged is the enterprise-managed file. When it declares servers it is
	// exclusive: every other scope's servers are ignored.
	ScopeManaged
)

var scopeNames = [...]string{"dynamic", "user", "project", "local", "cli", "managed"}

// String returns the scope's lower-case name.
func (s Scope) String() string {
	if s < 0 || int(s) >= len(scopeNames) {
		return fmt.Sprintf("scope(%d)", int(s))
	}
	return scopeNames[s]
}

// ParseScope parses a scope name as written by String.
func ParseScope(name string) (Scope, error) {
	for i, n := range scopeNames {
		if n == name {
			return Scope(i), nil
		}
	}
	return 0, fmt.Errorf("unknown scope %q (allowed: dynamic, user, project, local, cli, managed)", name)
}

// MarshalText implements encoding.TextMarshaler.
func (s Scope) MarshalText() ([]byte, error) { return []byte(s.String()), nil }
