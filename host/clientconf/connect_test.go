package clientconf

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

var (
	stdioEntry = Entry{Command: "/opt/mcphost/bin/mcphost", Args: []string{"serve", "--naming", "server", "--config", "/etc/mcphost/config.hcl"}}
	httpEntry  = Entry{URL: "http://127.0.0.1:8080/mcp", TokenEnv: DefaultTokenEnv}
)

// testEnv is an Env with HOME and the project in temporary directories.
func testEnv(t *testing.T) Env {
	t.Helper()
	home, proj := t.TempDir(), t.TempDir()
	vars := map[string]string{"HOME": home, "USERPROFILE": home, "APPDATA": filepath.Join(home, "AppData", "Roaming")}
	return Env{GOOS: runtime.GOOS, ProjectDir: proj, WorkDir: proj, LookupEnv: func(k string) (string, bool) {
		v, ok := vars[k]
		return v, ok
	}}
}

func fixture(t *testing.T, c Client) []byte {
	t.Helper()
	name := c.ID + ".json"
	if c.ID == "codex" {
		name = "codex.toml"
	}
	data, err := os.ReadFile(filepath.Join("testdata", "in", name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs (go test -update rewrites it):\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}

// apply applies the change a Connect or Disconnect planned.
func apply(t *testing.T) func(*Change, error) *Change {
	return func(ch *Change, err error) *Change {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		if err := ch.Apply(); err != nil {
			t.Fatal(err)
		}
		return ch
	}
}

func ext(c Client) string {
	if c.ID == "codex" {
		return ".toml"
	}
	return ".json"
}

// TestConnectDisconnect connects the gateway into each client's file of
// each scope, over stdio and HTTP, starting from an existing file with
// other servers (and comments) and from no file: the file is as the
// golden file says, and Disconnect restores it byte for byte (removes it,
// and the directories made for it, when there was none).
func TestConnectDisconnect(t *testing.T) {
	for _, c := range Clients() {
		for _, scope := range c.Scopes {
			for _, tr := range []struct {
				name  string
				entry Entry
			}{{"stdio", stdioEntry}, {"http", httpEntry}} {
				for _, start := range []string{"existing", "missing"} {
					t.Run(c.ID+"/"+string(scope)+"/"+tr.name+"/"+start, func(t *testing.T) {
						env := testEnv(t)
						backupDir := filepath.Join(t.TempDir(), "client-backups")
						path, err := c.Path(scope, env)
						if err != nil {
							t.Fatal(err)
						}
						var orig []byte
						if start == "existing" {
							orig = fixture(t, c)
							if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
								t.Fatal(err)
							}
							if err := os.WriteFile(path, orig, 0o644); err != nil {
								t.Fatal(err)
							}
						}
						ch, err := Connect(c, scope, env, tr.entry, backupDir)
						if c.ID == "claude-desktop" && tr.name == "http" {
							if !errors.Is(err, ErrNoHTTP) {
								t.Fatalf("Connect = %v, want ErrNoHTTP", err)
							}
							return
						}
						apply(t)(ch, err)
						got, err := os.ReadFile(path)
						if err != nil {
							t.Fatal(err)
						}
						if start == "existing" {
							golden(t, c.ID+"-"+string(scope)+"-"+tr.name+ext(c), got)
						} else {
							golden(t, c.ID+"-new-"+tr.name+ext(c), got)
							if st, err := os.Stat(path); err != nil || runtime.GOOS != "windows" && st.Mode().Perm() != 0o600 {
								t.Errorf("a new file: %v %v, want mode 0600", st.Mode(), err)
							}
						}
						_, conn, err := Status(c, scope, env, "")
						if err != nil || conn == nil {
							t.Fatalf("Status = %v, %v", conn, err)
						}
						if want := map[string]string{"stdio": "stdio", "http": "http"}[tr.name]; conn.Transport != want {
							t.Errorf("Status transport %q, want %q", conn.Transport, want)
						}
						if tr.name == "stdio" && !slices.Equal(conn.Configs, []string{"/etc/mcphost/config.hcl"}) {
							t.Errorf("Status configs %q", conn.Configs)
						}

						// A second connect changes nothing.
						again, err := Connect(c, scope, env, tr.entry, backupDir)
						if err != nil || !again.Unchanged() {
							t.Errorf("a second connect: unchanged %v, %v; diff:\n%s", again != nil && again.Unchanged(), err, again.Diff())
						}

						ch = apply(t)(Disconnect(c, scope, env, "", backupDir))
						if !ch.Restore {
							t.Errorf("Disconnect did not restore the backup")
						}
						after, err := os.ReadFile(path)
						switch {
						case start == "missing":
							if err == nil {
								t.Errorf("the file Connect created is still there")
							}
							if scope == ScopeProject {
								entries, _ := os.ReadDir(env.ProjectDir)
								if len(entries) != 0 {
									t.Errorf("the project directory still has %v", entries)
								}
							}
						case err != nil:
							t.Fatal(err)
						case !bytes.Equal(after, orig):
							t.Errorf("not restored byte for byte:\n%s", after)
						}
						if left, _ := os.ReadDir(backupDir); len(left) != 0 {
							t.Errorf("backups left: %v", left)
						}
					})
				}
			}
		}
	}
}

// TestDisconnectChangedSince: the file changed after Connect (the client
// wrote it): Disconnect removes only the entry, and says so, and the
// other change stays.
func TestDisconnectChangedSince(t *testing.T) {
	for _, c := range Clients() {
		for _, tr := range []Entry{stdioEntry, httpEntry} {
			if c.ID == "claude-desktop" && tr.URL != "" {
				continue
			}
			t.Run(c.ID+"/"+tr.URL, func(t *testing.T) {
				env := testEnv(t)
				backupDir := t.TempDir()
				path, _ := c.Path(ScopeUser, env)
				orig := fixture(t, c)
				os.MkdirAll(filepath.Dir(path), 0o755)
				if err := os.WriteFile(path, orig, 0o644); err != nil {
					t.Fatal(err)
				}
				apply(t)(Connect(c, ScopeUser, env, tr, backupDir))
				connected, _ := os.ReadFile(path)
				later := "\n"
				if c.ID == "codex" {
					later = "# written later\n"
				}
				if err := os.WriteFile(path, append(connected, later...), 0o644); err != nil {
					t.Fatal(err)
				}
				ch := apply(t)(Disconnect(c, ScopeUser, env, "", backupDir))
				if ch.Restore || !ch.ChangedSince || !ch.Found {
					t.Errorf("Disconnect: restore %v, changed since %v, found %v; want only the entry removed", ch.Restore, ch.ChangedSince, ch.Found)
				}
				got, _ := os.ReadFile(path)
				if want := append(append([]byte{}, orig...), later...); !bytes.Equal(got, want) {
					t.Errorf("got\n%s\nwant\n%s", got, want)
				}
				if _, conn, _ := Status(c, ScopeUser, env, ""); conn != nil {
					t.Errorf("still connected: %+v", conn)
				}
			})
		}
	}
}

// TestConnectReplaces: connecting again another way replaces the entry,
// and Disconnect still restores the file as it was before the first.
func TestConnectReplaces(t *testing.T) {
	for _, id := range []string{"claude-code", "vscode", "gemini", "codex"} {
		t.Run(id, func(t *testing.T) {
			c, _ := Lookup(id)
			env := testEnv(t)
			backupDir := t.TempDir()
			path, _ := c.Path(ScopeUser, env)
			orig := fixture(t, c)
			os.MkdirAll(filepath.Dir(path), 0o755)
			os.WriteFile(path, orig, 0o644)
			apply(t)(Connect(c, ScopeUser, env, stdioEntry, backupDir))
			apply(t)(Connect(c, ScopeUser, env, httpEntry, backupDir))
			got, _ := os.ReadFile(path)
			golden(t, id+"-user-http"+ext(c), got) // the same as connecting over HTTP at once
			apply(t)(Disconnect(c, ScopeUser, env, "", backupDir))
			if got, _ := os.ReadFile(path); !bytes.Equal(got, orig) {
				t.Errorf("not restored:\n%s", got)
			}
		})
	}
}

// TestEditShapes covers files of other shapes: compact, CRLF, an empty
// servers object, an entry that is already there, a file that is not an
// object.
func TestEditShapes(t *testing.T) {
	cc, _ := Lookup("claude-code")
	tests := []struct {
		name, in, want string
		err            error
	}{
		{"empty file", "", "{\n  \"mcpServers\": {\n    \"mcphost\": {\n      \"type\": \"stdio\",\n      \"command\": \"mcphost\",\n      \"args\": [\n        \"serve\"\n      ]\n    }\n  }\n}\n", nil},
		{"empty object", "{}\n", "{\n  \"mcpServers\": {\n    \"mcphost\": {\n      \"type\": \"stdio\",\n      \"command\": \"mcphost\",\n      \"args\": [\n        \"serve\"\n      ]\n    }\n  }\n}\n", nil},
		{"empty servers", "{\n    \"mcpServers\": {}\n}\n", "{\n    \"mcpServers\": {\n        \"mcphost\": {\n            \"type\": \"stdio\",\n            \"command\": \"mcphost\",\n            \"args\": [\n                \"serve\"\n            ]\n        }\n    }\n}\n", nil},
		{"compact", `{"mcpServers":{"a":{"command":"x"}}}`, `{"mcpServers":{"a":{"command":"x"}, "mcphost": {"type": "stdio", "command": "mcphost", "args": ["serve"]}}}`, nil},
		{"crlf", "{\r\n  \"a\": 1\r\n}\r\n", "{\r\n  \"a\": 1,\r\n  \"mcpServers\": {\r\n    \"mcphost\": {\r\n      \"type\": \"stdio\",\r\n      \"command\": \"mcphost\",\r\n      \"args\": [\r\n        \"serve\"\r\n      ]\r\n    }\r\n  }\r\n}\r\n", nil},
		{"replaced in place", "{\n  \"mcpServers\": {\n    \"mcphost\": {\"command\": \"old\"},\n    \"b\": {}\n  }\n}\n", "{\n  \"mcpServers\": {\n    \"mcphost\": {\n      \"type\": \"stdio\",\n      \"command\": \"mcphost\",\n      \"args\": [\n        \"serve\"\n      ]\n    },\n    \"b\": {}\n  }\n}\n", nil},
		{"not an object", "[]", "", ErrShape},
		{"servers not an object", `{"mcpServers": []}`, "", ErrShape},
		{"not JSON", `{"mcpServers": `, "", ErrSyntax},
	}
	e := Entry{Command: "mcphost", Args: []string{"serve"}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := jsonSet([]byte(tt.in), serversKey(cc), DefaultName, e.jsonEntry(cc))
			if tt.err != nil {
				if !errors.Is(err, tt.err) {
					t.Fatalf("err = %v, want %v", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("got\n%q\nwant\n%q", got, tt.want)
			}
		})
	}
}

func TestRemoveShapes(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"first of two", "{\"mcpServers\": {\n  \"mcphost\": {},\n  // b's comment\n  \"b\": 1\n}}", "{\"mcpServers\": {\n  // b's comment\n  \"b\": 1\n}}"},
		{"middle", "{\"mcpServers\": {\n  \"a\": 1,\n  \"mcphost\": {},\n  \"b\": 1\n}}", "{\"mcpServers\": {\n  \"a\": 1,\n  \"b\": 1\n}}"},
		{"last with a trailing comma", "{\"mcpServers\": {\n  \"a\": 1,\n  \"mcphost\": {},\n}}", "{\"mcpServers\": {\n  \"a\": 1,\n}}"},
		{"only", "{\"mcpServers\": {\n  \"mcphost\": {}\n}}", "{}"},
		{"only, with a comment", "{\"mcpServers\": {\n  // ours\n  \"mcphost\": {}\n}}", "{\"mcpServers\": {}}"},
		{"absent", "{\"mcpServers\": {\"a\": 1}}", "{\"mcpServers\": {\"a\": 1}}"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, _, err := jsonRemove([]byte(tt.in), "mcpServers", DefaultName)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("got\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}

func TestTOMLShapes(t *testing.T) {
	tests := []struct {
		name, in, want string
		err            error
	}{
		{"empty", "", "[mcp_servers.mcphost]\ncommand = \"mcphost\"\nargs = [\"serve\"]\n", nil},
		{"no final newline", "model = \"x\"", "model = \"x\"\n\n[mcp_servers.mcphost]\ncommand = \"mcphost\"\nargs = [\"serve\"]\n", nil},
		{"replaced in place", "[mcp_servers.mcphost]\ncommand = \"old\"\n\n[mcp_servers.mcphost.env]\nA = \"1\"\n\n# about b\n[mcp_servers.b]\ncommand = \"b\"\n",
			"[mcp_servers.mcphost]\ncommand = \"mcphost\"\nargs = [\"serve\"]\n\n# about b\n[mcp_servers.b]\ncommand = \"b\"\n", nil},
		{"quoted header", "[mcp_servers.\"mcphost\"]\ncommand = \"old\"\n", "[mcp_servers.mcphost]\ncommand = \"mcphost\"\nargs = [\"serve\"]\n", nil},
		{"inline table", "[mcp_servers]\nmcphost = { command = \"old\" }\n", "", ErrShape},
		{"not TOML", "[mcp_servers\n", "", ErrSyntax},
	}
	e := Entry{Command: "mcphost", Args: []string{"serve"}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tomlSet([]byte(tt.in), DefaultName, e)
			if tt.err != nil {
				if !errors.Is(err, tt.err) {
					t.Fatalf("err = %v, want %v", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("got\n%q\nwant\n%q", got, tt.want)
			}
		})
	}
}

// TestEntryRejected: entries that cannot be written.
func TestEntryRejected(t *testing.T) {
	c, _ := Lookup("cursor")
	env := testEnv(t)
	for _, e := range []Entry{{}, {Command: "x", URL: "http://h"}, {URL: "http://h", TokenEnv: "A B"}, {URL: "127.0.0.1:8080/mcp"}, {URL: "tcp://h:1"}} {
		if _, err := Connect(c, ScopeUser, env, e, ""); !errors.Is(err, ErrBadEntry) {
			t.Errorf("Connect(%+v) = %v, want ErrBadEntry", e, err)
		}
	}
}

// TestReconnectAfterClientRewrite: a second connect after the client
// rewrote its file (Claude Code does on every start) keeps no backup that
// holds the entry, so that Disconnect leaves the client disconnected
// (review 37a finding 2).
func TestReconnectAfterClientRewrite(t *testing.T) {
	for _, id := range []string{"claude-code", "cursor", "vscode", "gemini", "codex"} {
		t.Run(id, func(t *testing.T) {
			c, _ := Lookup(id)
			env := testEnv(t)
			backupDir := t.TempDir()
			path, _ := c.Path(ScopeUser, env)
			orig := fixture(t, c)
			os.MkdirAll(filepath.Dir(path), 0o755)
			os.WriteFile(path, orig, 0o644)
			apply(t)(Connect(c, ScopeUser, env, stdioEntry, backupDir))
			cur, _ := os.ReadFile(path)
			os.WriteFile(path, append(cur, '\n'), 0o644) // the client rewrites its file
			apply(t)(Connect(c, ScopeUser, env, httpEntry, backupDir))
			apply(t)(Disconnect(c, ScopeUser, env, "", backupDir))
			if _, conn, err := Status(c, ScopeUser, env, ""); conn != nil || err != nil {
				t.Fatalf("still connected after disconnect: %+v %v", conn, err)
			}
			got, _ := os.ReadFile(path)
			want, _, err := (&Change{Client: c, Name: DefaultName}).without(append(cur, '\n'))
			if err != nil || !bytes.Equal(got, want) {
				t.Errorf("got\n%s\nwant the rewritten file without the entry\n%s", got, want)
			}
		})
	}
}

// TestSecondName: a second gateway name in a file mcphost connected is
// refused while the first is there (review 37a finding 10), and accepted
// once it is gone.
func TestSecondName(t *testing.T) {
	c, _ := Lookup("cursor")
	env := testEnv(t)
	backupDir := t.TempDir()
	apply(t)(Connect(c, ScopeUser, env, stdioEntry, backupDir))
	b := stdioEntry
	b.Name = "b"
	_, err := Connect(c, ScopeUser, env, b, backupDir)
	var oe *OtherEntryError
	if !errors.As(err, &oe) || oe.Name != DefaultName {
		t.Fatalf("second name: err %v, want OtherEntryError", err)
	}
	apply(t)(Disconnect(c, ScopeUser, env, "", backupDir))
	apply(t)(Connect(c, ScopeUser, env, b, backupDir))
	apply(t)(Disconnect(c, ScopeUser, env, "b", backupDir))
	path, _ := c.Path(ScopeUser, env)
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("not removed: %v", err)
	}
}

// TestDanglingLink: a client file that is a symbolic link to a missing
// target is refused, not replaced by a regular file (review 37a finding 7).
func TestDanglingLink(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("symbolic links need a privilege on Windows")
	}
	c, _ := Lookup("cursor")
	env := testEnv(t)
	path, _ := c.Path(ScopeUser, env)
	os.MkdirAll(filepath.Dir(path), 0o755)
	if err := os.Symlink(filepath.Join(t.TempDir(), "missing", "mcp.json"), path); err != nil {
		t.Fatal(err)
	}
	ch, err := Connect(c, ScopeUser, env, stdioEntry, t.TempDir())
	if err == nil {
		err = ch.Apply()
	}
	if !errors.Is(err, ErrDanglingLink) {
		t.Fatalf("err %v, want ErrDanglingLink", err)
	}
	if st, err := os.Lstat(path); err != nil || st.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("the link was replaced: %v %v", st, err)
	}
}

// TestBOM: a file that starts with a UTF-8 byte order mark (Notepad) is
// edited, its mark kept, and restored (review 37a finding 12).
func TestBOM(t *testing.T) {
	c, _ := Lookup("claude-desktop")
	env := testEnv(t)
	backupDir := t.TempDir()
	path, _ := c.Path(ScopeUser, env)
	orig := []byte("\xef\xbb\xbf{\n  \"mcpServers\": {\n    \"a\": {\"command\": \"x\"}\n  }\n}\n")
	os.MkdirAll(filepath.Dir(path), 0o755)
	os.WriteFile(path, orig, 0o644)
	apply(t)(Connect(c, ScopeUser, env, stdioEntry, backupDir))
	got, _ := os.ReadFile(path)
	if !bytes.HasPrefix(got, []byte("\xef\xbb\xbf{\n")) || !bytes.Contains(got, []byte(`"mcphost"`)) {
		t.Fatalf("connect:\n%q", got)
	}
	if _, conn, err := Status(c, ScopeUser, env, ""); conn == nil || err != nil {
		t.Fatalf("status: %v %v", conn, err)
	}
	if s, err := Servers(c, got); err != nil || len(s) != 2 {
		t.Fatalf("import's reading: %v %v", s, err)
	}
	cur, _ := os.ReadFile(path)
	os.WriteFile(path, append(cur, '\n'), 0o644) // only the entry is removed now
	apply(t)(Disconnect(c, ScopeUser, env, "", backupDir))
	if got, _ := os.ReadFile(path); !bytes.Equal(got, append(orig, '\n')) {
		t.Fatalf("disconnect:\n%q", got)
	}
}
