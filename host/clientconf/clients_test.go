package clientconf

import (
	"errors"
	"testing"
)

func envOf(goos string, vars map[string]string) Env {
	return Env{
		GOOS:       goos,
		ProjectDir: map[string]string{"windows": `C:\src\proj`}[goos],
		WorkDir:    "/src/proj",
		LookupEnv: func(k string) (string, bool) {
			v, ok := vars[k]
			return v, ok
		},
	}
}

// TestPathTables checks each client's file on Linux, macOS and Windows.
func TestPathTables(t *testing.T) {
	linux := map[string]string{"HOME": "/home/u"}
	darwin := map[string]string{"HOME": "/Users/u"}
	windows := map[string]string{"USERPROFILE": `C:\Users\u`, "APPDATA": `C:\Users\u\AppData\Roaming`, "HOME": "/c/msys/home"}
	tests := []struct {
		goos   string
		vars   map[string]string
		client string
		scope  Scope
		want   string
	}{
		{"linux", linux, "claude-code", ScopeUser, "/home/u/.claude.json"},
		{"linux", linux, "claude-code", ScopeProject, "/src/proj/.mcp.json"},
		{"linux", linux, "claude-desktop", ScopeUser, "/home/u/.config/Claude/claude_desktop_config.json"},
		{"linux", linux, "cursor", ScopeUser, "/home/u/.cursor/mcp.json"},
		{"linux", linux, "cursor", ScopeProject, "/src/proj/.cursor/mcp.json"},
		{"linux", linux, "vscode", ScopeUser, "/home/u/.config/Code/User/mcp.json"},
		{"linux", linux, "vscode", ScopeProject, "/src/proj/.vscode/mcp.json"},
		{"linux", linux, "gemini", ScopeUser, "/home/u/.gemini/settings.json"},
		{"linux", linux, "gemini", ScopeProject, "/src/proj/.gemini/settings.json"},
		{"linux", linux, "codex", ScopeUser, "/home/u/.codex/config.toml"},
		{"linux", linux, "codex", ScopeProject, "/src/proj/.codex/config.toml"},
		{"linux", map[string]string{"HOME": "/home/u", "XDG_CONFIG_HOME": "/xdg"}, "vscode", ScopeUser, "/xdg/Code/User/mcp.json"},
		{"linux", map[string]string{"HOME": "/home/u", "XDG_CONFIG_HOME": "/xdg"}, "claude-desktop", ScopeUser, "/xdg/Claude/claude_desktop_config.json"},
		{"linux", map[string]string{"HOME": "/home/u", "XDG_CONFIG_HOME": "rel"}, "vscode", ScopeUser, "/home/u/.config/Code/User/mcp.json"},
		{"linux", map[string]string{"HOME": "/home/u", "CODEX_HOME": "/opt/codex"}, "codex", ScopeUser, "/opt/codex/config.toml"},
		{"linux", map[string]string{"HOME": "/home/u", "CLAUDE_CONFIG_DIR": "/cc"}, "claude-code", ScopeUser, "/cc/.claude.json"},
		{"linux", map[string]string{"HOME": "/home/u", "GEMINI_CLI_HOME": "/g"}, "gemini", ScopeUser, "/g/.gemini/settings.json"},

		{"darwin", darwin, "claude-code", ScopeUser, "/Users/u/.claude.json"},
		{"darwin", darwin, "claude-desktop", ScopeUser, "/Users/u/Library/Application Support/Claude/claude_desktop_config.json"},
		{"darwin", darwin, "cursor", ScopeUser, "/Users/u/.cursor/mcp.json"},
		{"darwin", darwin, "vscode", ScopeUser, "/Users/u/Library/Application Support/Code/User/mcp.json"},
		{"darwin", darwin, "vscode", ScopeProject, "/src/proj/.vscode/mcp.json"},
		{"darwin", darwin, "gemini", ScopeUser, "/Users/u/.gemini/settings.json"},
		{"darwin", darwin, "codex", ScopeUser, "/Users/u/.codex/config.toml"},
		{"darwin", darwin, "codex", ScopeProject, "/src/proj/.codex/config.toml"},
		{"darwin", map[string]string{"HOME": "/Users/u", "XDG_CONFIG_HOME": "/xdg"}, "vscode", ScopeUser, "/Users/u/Library/Application Support/Code/User/mcp.json"},

		{"windows", windows, "claude-code", ScopeUser, `C:\Users\u\.claude.json`},
		{"windows", windows, "claude-code", ScopeProject, `C:\src\proj\.mcp.json`},
		{"windows", windows, "claude-desktop", ScopeUser, `C:\Users\u\AppData\Roaming\Claude\claude_desktop_config.json`},
		{"windows", windows, "cursor", ScopeUser, `C:\Users\u\.cursor\mcp.json`},
		{"windows", windows, "cursor", ScopeProject, `C:\src\proj\.cursor\mcp.json`},
		{"windows", windows, "vscode", ScopeUser, `C:\Users\u\AppData\Roaming\Code\User\mcp.json`},
		{"windows", windows, "vscode", ScopeProject, `C:\src\proj\.vscode\mcp.json`},
		{"windows", windows, "gemini", ScopeUser, `C:\Users\u\.gemini\settings.json`},
		{"windows", windows, "gemini", ScopeProject, `C:\src\proj\.gemini\settings.json`},
		{"windows", windows, "codex", ScopeUser, `C:\Users\u\.codex\config.toml`},
		{"windows", windows, "codex", ScopeProject, `C:\src\proj\.codex\config.toml`},
		{"windows", map[string]string{"USERPROFILE": `C:\Users\u`, "CODEX_HOME": `D:\codex\`}, "codex", ScopeUser, `D:\codex\config.toml`},
	}
	for _, tt := range tests {
		t.Run(tt.goos+"/"+tt.client+"/"+string(tt.scope), func(t *testing.T) {
			c, err := Lookup(tt.client)
			if err != nil {
				t.Fatal(err)
			}
			got, err := c.Path(tt.scope, envOf(tt.goos, tt.vars))
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("Path = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestPathErrors(t *testing.T) {
	c, _ := Lookup("claude-desktop")
	var se *ScopeError
	if _, err := c.Path(ScopeProject, envOf("linux", map[string]string{"HOME": "/h"})); !errors.As(err, &se) {
		t.Errorf("claude-desktop project: %v, want a ScopeError", err)
	}
	d, _ := Lookup("claude-desktop")
	var ee *EnvError
	if _, err := d.Path(ScopeUser, envOf("windows", map[string]string{"USERPROFILE": `C:\u`})); !errors.As(err, &ee) || ee.Var != "APPDATA" {
		t.Errorf("desktop without APPDATA: %v, want an EnvError", err)
	}
	if _, err := d.Path(ScopeUser, envOf("linux", nil)); !errors.As(err, &ee) || ee.Var != "HOME" {
		t.Errorf("without HOME: %v, want an EnvError", err)
	}
	if _, err := Lookup("zed"); !errors.Is(err, ErrUnknownClient) {
		t.Errorf("Lookup(zed) = %v", err)
	}
}

// TestProjectIsUserFile: a project scope whose file is the user scope's
// (the project directory is the home directory) is refused (review 37a
// finding 9).
func TestProjectIsUserFile(t *testing.T) {
	for _, tt := range []struct{ goos, id, home string }{
		{"linux", "cursor", "/src/proj"},
		{"linux", "gemini", "/src/proj/"},
		{"windows", "cursor", `c:\src\proj`},
	} {
		c, _ := Lookup(tt.id)
		var sf *SameFileError
		if _, err := c.Path(ScopeProject, envOf(tt.goos, map[string]string{"HOME": tt.home, "USERPROFILE": tt.home})); !errors.As(err, &sf) {
			t.Errorf("%s %s: %v, want a SameFileError", tt.goos, tt.id, err)
		}
	}
}

// TestClientsFresh: changing what Clients returns changes no package state
// (review 37a finding 11).
func TestClientsFresh(t *testing.T) {
	cs := Clients()
	cs[0].Scopes[0] = "broken"
	cs[0].ID = "broken"
	if got := Clients(); got[0].Scopes[0] != ScopeUser || got[0].ID != "claude-code" {
		t.Fatalf("Clients shares state: %+v", got[0])
	}
}
