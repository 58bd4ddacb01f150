// Package clientconf knows where the MCP clients mcphost connects to keep
// their MCP server configuration, and reads and writes it: Claude Code,
// Claude Desktop, Cursor, VS Code, Gemini CLI and Codex. `mcphost client
// connect|disconnect|list` write the gateway into those files (Connect,
// Disconnect); `mcphost import` reads their servers (Servers).
//
// An edit changes only the entry it writes: every other byte of the file
// (other servers, comments of a JSONC file, key order, indentation) stays
// as it was, so that Disconnect restores the file byte for byte.
package clientconf

import "errors"

// Scope is where a client keeps a server: the user's own configuration
// (every project) or the project's (a file in the repository).
type Scope string

// The scopes of a client's configuration.
const (
	ScopeUser    Scope = "user"
	ScopeProject Scope = "project"
)

// Client is one MCP client whose configuration mcphost reads and writes.
type Client struct {
	// ID names the client on the command line: claude-code,
	// claude-desktop, cursor, vscode, gemini, codex.
	ID string
	// Name is the client's product name ("Claude Code").
	Name string
	// Scopes are the scopes the client has, the default first.
	Scopes []Scope
}

// Env is what locating a client's files depends on.
type Env struct {
	// LookupEnv reads the environment (HOME, APPDATA, XDG_CONFIG_HOME,
	// CODEX_HOME, ...).
	LookupEnv func(string) (string, bool)
	// WorkDir is the working directory; ProjectDir the project's root
	// (where a project-scope file goes).
	WorkDir, ProjectDir string
	// GOOS is the operating system whose paths are used (runtime.GOOS).
	GOOS string
}

// ErrUnknownClient is returned for a client ID that is not one of Clients.
var ErrUnknownClient = errors.New("unknown client")

// Server is one server entry of a client's configuration, as the client
// wrote it.
type Server struct {
	// Name is the entry's key (mcpServers.NAME, servers.NAME,
	// [mcp_servers.NAME]).
	Name string
	// Fields are the entry's members, decoded as encoding/json decodes
	// into any (a TOML entry's too): "command", "args", "env", "url",
	// "httpUrl", "headers", "type", "envFile", ...
	Fields map[string]any
	// Line is the entry's line in the file (1-based; 0 when unknown).
	Line int
	// Format is what the entry's keys mean: FormatMCPServers,
	// FormatVSCode, FormatGemini or FormatCodex.
	Format string
	// Invalid, if not empty, says why the entry could not be read (it is
	// not an object); Fields is nil then.
	Invalid string
}

// Inputs are the VS Code "inputs" of a file (their ids), which
// ${input:ID} in a server's values refers to.
type Inputs []string
