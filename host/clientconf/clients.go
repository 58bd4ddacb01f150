package clientconf

import (
	"fmt"
	"path"
	"path/filepath"
	"runtime"
	"strings"
)

// Clients returns the clients mcphost knows, in the order `mcphost client
// list` shows them: fresh values each call (no package state to change).
func Clients() []Client {
	both := func() []Scope { return []Scope{ScopeUser, ScopeProject} }
	return []Client{
		{ID: "claude-code", Name: "Claude Code", Scopes: both()},
		{ID: "claude-desktop", Name: "Claude Desktop", Scopes: []Scope{ScopeUser}},
		{ID: "cursor", Name: "Cursor", Scopes: both()},
		{ID: "vscode", Name: "VS Code", Scopes: both()},
		{ID: "gemini", Name: "Gemini CLI", Scopes: both()},
		// Codex reads PROJECT/.codex/config.toml in trusted projects only.
		{ID: "codex", Name: "Codex", Scopes: both()},
	}
}

// Lookup returns the client id names.
func Lookup(id string) (Client, error) {
	for _, c := range Clients() {
		if c.ID == id {
			return c, nil
		}
	}
	return Client{}, fmt.Errorf("%w %q", ErrUnknownClient, id)
}

// HasScope reports whether the client keeps servers in scope.
func (c Client) HasScope(scope Scope) bool {
	for _, s := range c.Scopes {
		if s == scope {
			return true
		}
	}
	return false
}

// ScopeError is returned for a scope a client does not have.
type ScopeError struct {
	Client Client
	Scope  Scope
}

func (e *ScopeError) Error() string {
	return fmt.Sprintf("%s has no %s scope (it has: %s)", e.Client.Name, e.Scope, joinScopes(e.Client.Scopes))
}

func joinScopes(ss []Scope) string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = string(s)
	}
	return strings.Join(out, ", ")
}

// EnvError is returned when a path depends on an environment variable
// that is not set (HOME, APPDATA).
type EnvError struct{ Var string }

func (e *EnvError) Error() string { return "$" + e.Var + " is not set" }

// Path returns the file in which client c keeps its MCP servers in scope,
// for the operating system env.GOOS (its separators too, so that the paths
// of every OS can be computed and tested anywhere):
//
//	claude-code     user     $CLAUDE_CONFIG_DIR/.claude.json, else ~/.claude.json (top-level "mcpServers")
//	                project  PROJECT/.mcp.json
//	claude-desktop  user     macOS ~/Library/Application Support/Claude/claude_desktop_config.json,
//	                         Windows %APPDATA%\Claude\claude_desktop_config.json,
//	                         Linux $XDG_CONFIG_HOME/Claude/claude_desktop_config.json (~/.config)
//	cursor          user     ~/.cursor/mcp.json
//	                project  PROJECT/.cursor/mcp.json
//	vscode          user     the user profile's mcp.json: macOS ~/Library/Application Support/Code/User/mcp.json,
//	                         Windows %APPDATA%\Code\User\mcp.json, Linux $XDG_CONFIG_HOME/Code/User/mcp.json
//	                project  PROJECT/.vscode/mcp.json
//	gemini          user     ~/.gemini/settings.json ($GEMINI_CLI_HOME instead of ~ when set)
//	                project  PROJECT/.gemini/settings.json
//	codex           user     $CODEX_HOME/config.toml, else ~/.codex/config.toml
//	                project  PROJECT/.codex/config.toml (read by Codex in trusted projects only)
//
// ~ is $HOME, on Windows %USERPROFILE% (else $HOME). PROJECT is
// env.ProjectDir, else env.WorkDir. A project file that is the user file
// (the project is the home directory) is a *SameFileError.
func (c Client) Path(scope Scope, env Env) (string, error) {
	p, err := c.path(scope, env)
	if err != nil || scope != ScopeProject {
		return p, err
	}
	pt := pather{env: env}
	if u, uerr := c.path(ScopeUser, env); uerr == nil && pt.clean(u) == pt.clean(p) {
		return "", &SameFileError{Client: c, Path: p}
	}
	return p, nil
}

// SameFileError is returned for a project scope whose file is the user
// scope's (a project directory that is the home directory).
type SameFileError struct {
	Client Client
	Path   string
}

func (e *SameFileError) Error() string {
	return fmt.Sprintf("%s's project file %s is its user file (the project directory is the home directory): use the user scope, or run in a project", e.Client.Name, e.Path)
}

func (c Client) path(scope Scope, env Env) (string, error) {
	if !c.HasScope(scope) {
		return "", &ScopeError{Client: c, Scope: scope}
	}
	p := pather{env: env}
	if scope == ScopeProject {
		dir := env.ProjectDir
		if dir == "" {
			dir = env.WorkDir
		}
		if dir == "" {
			return "", fmt.Errorf("%s %s scope: no project directory", c.Name, scope)
		}
		switch c.ID {
		case "claude-code":
			return p.join(dir, ".mcp.json"), nil
		case "cursor":
			return p.join(dir, ".cursor", "mcp.json"), nil
		case "vscode":
			return p.join(dir, ".vscode", "mcp.json"), nil
		case "gemini":
			return p.join(dir, ".gemini", "settings.json"), nil
		case "codex":
			return p.join(dir, ".codex", "config.toml"), nil
		}
		return "", &ScopeError{Client: c, Scope: scope}
	}
	switch c.ID {
	case "claude-code":
		if dir := p.get("CLAUDE_CONFIG_DIR"); dir != "" {
			return p.join(dir, ".claude.json"), nil
		}
		return p.inHome(".claude.json")
	case "claude-desktop":
		return p.appConfig("Claude", "claude_desktop_config.json")
	case "cursor":
		return p.inHome(".cursor", "mcp.json")
	case "vscode":
		return p.appConfig("Code", "User", "mcp.json")
	case "gemini":
		if dir := p.get("GEMINI_CLI_HOME"); dir != "" {
			return p.join(dir, ".gemini", "settings.json"), nil
		}
		return p.inHome(".gemini", "settings.json")
	case "codex":
		if dir := p.get("CODEX_HOME"); dir != "" {
			return p.join(dir, "config.toml"), nil
		}
		return p.inHome(".codex", "config.toml")
	}
	return "", &ScopeError{Client: c, Scope: scope}
}

// pather computes the paths of env.GOOS.
type pather struct{ env Env }

func (p pather) goos() string {
	if p.env.GOOS == "" {
		return runtime.GOOS
	}
	return p.env.GOOS
}

func (p pather) get(name string) string {
	if p.env.LookupEnv == nil {
		return ""
	}
	v, _ := p.env.LookupEnv(name)
	return v
}

// join joins path elements with the separator of the target OS.
func (p pather) join(elem ...string) string {
	goos := p.goos()
	if goos == runtime.GOOS {
		return filepath.Join(elem...)
	}
	if goos != "windows" {
		return path.Join(elem...)
	}
	parts := make([]string, 0, len(elem))
	for i, e := range elem {
		e = strings.ReplaceAll(e, "/", `\`)
		if i > 0 {
			e = strings.TrimLeft(e, `\`)
		}
		if i < len(elem)-1 {
			e = strings.TrimRight(e, `\`)
		}
		if e != "" {
			parts = append(parts, e)
		}
	}
	return strings.Join(parts, `\`)
}

// clean normalizes a path of env.GOOS for comparison.
func (p pather) clean(s string) string {
	if p.goos() == "windows" {
		return strings.ToLower(strings.TrimRight(strings.ReplaceAll(s, "/", `\`), `\`))
	}
	return path.Clean(s)
}

// home is the user's home directory.
func (p pather) home() (string, error) {
	if p.goos() == "windows" {
		if h := p.get("USERPROFILE"); h != "" {
			return h, nil
		}
	}
	if h := p.get("HOME"); h != "" {
		return h, nil
	}
	if p.goos() == "windows" {
		return "", &EnvError{Var: "USERPROFILE"}
	}
	return "", &EnvError{Var: "HOME"}
}

func (p pather) inHome(elem ...string) (string, error) {
	h, err := p.home()
	if err != nil {
		return "", err
	}
	return p.join(append([]string{h}, elem...)...), nil
}

// appConfig is a file in the OS's per-user application configuration
// directory (what os.UserConfigDir returns, for env.GOOS).
func (p pather) appConfig(elem ...string) (string, error) {
	switch p.goos() {
	case "windows":
		dir := p.get("APPDATA")
		if dir == "" {
			return "", &EnvError{Var: "APPDATA"}
		}
		return p.join(append([]string{dir}, elem...)...), nil
	case "darwin", "ios":
		return p.inHome(append([]string{"Library", "Application Support"}, elem...)...)
	}
	if dir := p.get("XDG_CONFIG_HOME"); dir != "" && (strings.HasPrefix(dir, "/")) {
		return p.join(append([]string{dir}, elem...)...), nil
	}
	return p.inHome(append([]string{".config"}, elem...)...)
}
