package clientconf

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// entry is what the tests compare of a Server.
type entry struct {
	Name, Format string
	Line         int
	Keys         int
}

func summarize(ss []Server) []entry {
	var out []entry
	for _, s := range ss {
		out = append(out, entry{s.Name, s.Format, s.Line, len(s.Fields)})
	}
	return out
}

func readTestdata(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "read", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestServersOfFile(t *testing.T) {
	for _, tc := range []struct {
		file, as string // as: the name the file is read under
		want     []entry
	}{
		{"claude_desktop_config.json", "", []entry{
			{"filesystem", FormatClaudeDesktop, 3, 2}, {"github", FormatClaudeDesktop, 7, 3}, {"old", FormatClaudeDesktop, 12, 2}}},
		{"mcp.json", "", []entry{
			{"perplexity", FormatVSCode, 13, 4}, {"fetch", FormatVSCode, 19, 4}, {"github", FormatVSCode, 25, 3}}},
		{"settings.json", "", []entry{ // recognised by its "theme"
			{"stream", FormatGemini, 4, 3}, {"events", FormatGemini, 9, 2}, {"local", FormatGemini, 10, 4}, {"filtered", FormatGemini, 11, 2}}},
		{"config.toml", "", []entry{
			{"docs", FormatCodex, 3, 5}, {"linear", FormatCodex, 10, 3}, {"off", FormatCodex, 15, 2}, {"picky", FormatCodex, 19, 2}}},
		{"claude.json", "", []entry{{"everything", FormatMCPServers, 4, 4}}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			as := tc.as
			if as == "" {
				as = tc.file
			}
			got, err := ServersOfFile(as, readTestdata(t, tc.file))
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, summarize(got)); d != "" {
				t.Errorf("(-want +got)\n%s", d)
			}
		})
	}
}

func TestServersOfFileFormats(t *testing.T) {
	for _, tc := range []struct {
		name, data string
		want       []entry
		err        error
	}{
		{"x/.gemini/settings.json", `{"mcpServers": {"a": {"url": "http://h/x"}}}`, []entry{{"a", FormatGemini, 1, 1}}, nil},
		{"any.json", `{"mcpServers": {"a": {"httpUrl": "http://h/x"}}}`, []entry{{"a", FormatGemini, 1, 1}}, nil},
		{".cursor/mcp.json", `{"mcpServers": {"a": {"url": "http://h/x"}}}`, []entry{{"a", FormatMCPServers, 1, 1}}, nil},
		{"settings.json", "{\"mcp\": {\"servers\": {\n\"a\": {\"command\": \"x\"}}}}", []entry{{"a", FormatVSCode, 2, 1}}, nil},
		{"settings.json", `{"mcp.servers": {"a": {"command": "x"}}}`, []entry{{"a", FormatVSCode, 1, 1}}, nil},
		{"c.toml", "[mcp_servers]\nx = { command = \"a\" }\n", []entry{{"x", FormatCodex, 2, 1}}, nil},
		{"c.toml", "mcp_servers.\"a b\".command = \"a\"\n", []entry{{"a b", FormatCodex, 1, 1}}, nil},
		{"dup.json", `{"mcpServers": {"a": {"command": "x"}, "a": {"command": "y", "args": []}}}`, []entry{{"a", FormatMCPServers, 1, 2}}, nil},
		{"none.json", `{"other": 1}`, nil, ErrFormat},
		{"bad.json", `{"mcpServers": `, nil, ErrFormat},
		{"list.json", `[1]`, nil, ErrFormat},
		{"bad.toml", `[mcp_servers`, nil, ErrFormat},
		{"obj.json", `{"mcpServers": []}`, nil, ErrFormat},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ServersOfFile(tc.name, []byte(tc.data))
			if !errors.Is(err, tc.err) {
				t.Fatalf("err = %v, want %v", err, tc.err)
			}
			if d := cmp.Diff(tc.want, summarize(got)); d != "" {
				t.Errorf("(-want +got)\n%s", d)
			}
		})
	}
}

func TestServersOfClient(t *testing.T) {
	for _, tc := range []struct {
		client, file string
		want         []string
	}{
		{"claude-desktop", "claude_desktop_config.json", []string{"filesystem", "github", "old"}},
		{"cursor", "claude_desktop_config.json", []string{"filesystem", "github", "old"}},
		{"claude-code", "claude.json", []string{"everything"}},
		{"vscode", "mcp.json", []string{"perplexity", "fetch", "github"}},
		{"gemini", "settings.json", []string{"stream", "events", "local", "filtered"}},
		{"codex", "config.toml", []string{"docs", "linear", "off", "picky"}},
	} {
		t.Run(tc.client, func(t *testing.T) {
			c, err := Lookup(tc.client)
			if err != nil {
				t.Fatal(err)
			}
			got, err := Servers(c, readTestdata(t, tc.file))
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, s := range got {
				names = append(names, s.Name)
			}
			if d := cmp.Diff(tc.want, names); d != "" {
				t.Errorf("(-want +got)\n%s", d)
			}
		})
	}
}

func TestProjectServers(t *testing.T) {
	data := readTestdata(t, "claude.json")
	for _, tc := range []struct {
		dir  string
		want []entry
	}{
		{"/home/u/src/app", []entry{{"sentry", FormatMCPServers, 10, 2}, {"db", FormatMCPServers, 11, 3}}},
		{"/home/u/src/app/", []entry{{"sentry", FormatMCPServers, 10, 2}, {"db", FormatMCPServers, 11, 3}}},
		{"/home/u/src", nil},
	} {
		got, err := ProjectServers(data, filepath.FromSlash(tc.dir))
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(tc.want, summarize(got)); d != "" {
			t.Errorf("%s: (-want +got)\n%s", tc.dir, d)
		}
	}
}

// FuzzServersOfFile reads arbitrary files (a client's configuration is
// untrusted input) as JSON and as TOML: no panic, and every entry read has
// a name and either fields or a reason.
func FuzzServersOfFile(f *testing.F) {
	for _, name := range []string{"claude_desktop_config.json", "mcp.json", "settings.json", "config.toml", "claude.json"} {
		b, err := os.ReadFile(filepath.Join("testdata", "read", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`{"mcpServers": {"a": 1}, "projects": {"/x": {"mcpServers": {"b": {}}}}}`))
	f.Add([]byte("[mcp_servers.a]\ncommand = 1\n[mcp_servers.a.env]\nK = 'v'\n"))
	f.Add([]byte(`{"projects": {"/x": {"disabledMcpjsonServers": ["a"], "enableAllProjectMcpServers": "yes"}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		if _, err := ClaudeProjectChoices(data, "/x"); err != nil && !errors.Is(err, ErrFormat) {
			t.Fatalf("ClaudeProjectChoices: unclassified error %v", err)
		}
		for _, name := range []string{"f.json", "f.toml", ".gemini/settings.json"} {
			ss, err := ServersOfFile(name, data)
			if err != nil {
				if !errors.Is(err, ErrFormat) {
					t.Fatalf("%s: unclassified error %v", name, err)
				}
				continue
			}
			for _, s := range ss {
				if s.Fields == nil && s.Invalid == "" {
					t.Fatalf("%s: entry %q has neither fields nor a reason", name, s.Name)
				}
				if s.Line < 0 {
					t.Fatalf("%s: entry %q at line %d", name, s.Name, s.Line)
				}
			}
		}
		if _, err := ProjectServers(data, "/x"); err != nil && !errors.Is(err, ErrFormat) {
			t.Fatalf("ProjectServers: unclassified error %v", err)
		}
	})
}

func TestSameDir(t *testing.T) {
	for _, tc := range []struct {
		key, dir string
		want     bool
	}{
		{"/home/u/app", "/home/u/app", true},
		{"/home/u/app/", "/home/u/app", true},
		{"/home/u/App", "/home/u/app", false},
		{"C:/Users/u/app", `C:\Users\u\app`, true},
		{"c:/users/u/app", `C:\Users\u\app`, true},
		{"C:/Users/u/app2", `C:\Users\u\app`, false},
		{"/home/u", "/home/u/app", false},
	} {
		if got := sameDir(tc.key, tc.dir); got != tc.want {
			t.Errorf("sameDir(%q, %q) = %v", tc.key, tc.dir, got)
		}
	}
}
