package config

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcphost/mcphost/host/redact"
)

// TestServerEntryFromFields maps one entry of each client format to the
// block written for it (with AddServerBlock): variables as env(), literal
// secrets as secret() of the stored value, nothing of the secret in the
// block, and every problem reported by member.
func TestServerEntryFromFields(t *testing.T) {
	for _, tc := range []struct {
		name, format, json string
		workspace          string
		want               string   // the block written, when imported
		problems           []string // the members reported, when not
		notes              int
	}{
		{"stdio with variables", EntryMCPServers,
			`{"command":"${HOME}/bin/x","args":["--dsn","${DSN:-postgres://h/db}","${env:USER}"],"env":{"MODE":"fast"}}`, "",
			`server "n" {
  command = "${env("HOME")}/bin/x"
  args    = ["--dsn", env("DSN", "postgres://h/db"), env("USER")]
  env = {
    MODE = "fast"
  }
}
`, nil, 0},
		{"secret env by name and by shape", EntryMCPServers,
			`{"command":"x","env":{"GITHUB_TOKEN":"canary-value-1","OTHER":"ghp_canaryCanaryCanary0123456789abcdefAB","FROM_ENV":"${GITHUB_TOKEN}"}}`, "",
			`server "n" {
  command = "x"
  env = {
    FROM_ENV     = env("GITHUB_TOKEN")
    GITHUB_TOKEN = secret("stored:env.GITHUB_TOKEN")
    OTHER        = secret("stored:env.OTHER")
  }
}
`, nil, 0},
		{"plain values of secret names", EntryMCPServers,
			`{"command":"x","env":{"TOKENIZERS_PARALLELISM":"false","GOOGLE_APPLICATION_CREDENTIALS":"/k/creds.json","MAX_TOKENS":"100"}}`, "",
			`server "n" {
  command = "x"
  env = {
    GOOGLE_APPLICATION_CREDENTIALS = "/k/creds.json"
    MAX_TOKENS                     = "100"
    TOKENIZERS_PARALLELISM         = "false"
  }
}
`, nil, 0},
		{"disabled", EntryMCPServers, `{"command":"x","disabled":true}`, "",
			"server \"n\" {\n  command  = \"x\"\n  disabled = true\n}\n", nil, 0},
		{"http type and header secret", EntryMCPServers,
			`{"type":"http","url":"https://h/mcp","headers":{"Authorization":"Bearer canary-value-2","X-Team":"core"}}`, "",
			`server "n" {
  transport = "http"
  url       = "https://h/mcp"
  headers = {
    Authorization = secret("stored:headers.Authorization")
    X-Team        = "core"
  }
}
`, nil, 0},
		{"bearer from a variable is no secret", EntryVSCode,
			`{"type":"http","url":"https://h/mcp","headers":{"Authorization":"Bearer ${env:GH}"}}`, "",
			`server "n" {
  transport = "http"
  url       = "https://h/mcp"
  headers = {
    Authorization = "Bearer ${env("GH")}"
  }
}
`, nil, 0},
		{"vscode input refused", EntryVSCode,
			`{"type":"stdio","command":"npx","env":{"KEY":"${input:perplexity-key}"}}`, "", "", []string{"env.KEY"}, 0},
		{"vscode workspaceFolder and envFile", EntryVSCode,
			`{"command":"x","args":["${workspaceFolder}/src"],"envFile":"${workspaceFolder}/.env"}`, "/w",
			"server \"n\" {\n  command  = \"x\"\n  args     = [\"/w/src\"]\n  env_file = \"/w/.env\"\n}\n", nil, 0},
		{"vscode workspaceFolder unknown", EntryVSCode, `{"command":"x","args":["${workspaceFolder}"]}`, "", "", []string{"args[0]"}, 0},
		{"gemini httpUrl", EntryGemini, `{"httpUrl":"http://h/mcp","timeout":5000,"trust":true}`, "",
			"server \"n\" {\n  transport = \"http\"\n  url       = \"http://h/mcp\"\n}\n", nil, 2},
		{"gemini url is sse", EntryGemini, `{"url":"http://h/events"}`, "",
			"server \"n\" {\n  transport = \"sse\"\n  url       = \"http://h/events\"\n}\n", nil, 0},
		{"gemini $VAR", EntryGemini, `{"command":"x","env":{"DB":"$DB_URL"}}`, "",
			"server \"n\" {\n  command = \"x\"\n  env = {\n    DB = env(\"DB_URL\")\n  }\n}\n", nil, 0},
		{"gemini tool filter refused", EntryGemini, `{"command":"x","includeTools":["a"]}`, "", "", []string{"includeTools"}, 0},
		{"codex stdio", EntryCodex, `{"command":"npx","args":["-y","d"],"env":{"M":"f"},"env_vars":["AWS_PROFILE"],"enabled":false,"startup_timeout_sec":20}`, "",
			`server "n" {
  command = "npx"
  args    = ["-y", "d"]
  env = {
    M = "f"
  }
  inherit_env = ["AWS_PROFILE"]
  disabled    = true
}
`, nil, 1},
		{"codex http", EntryCodex, `{"url":"https://h/mcp","bearer_token_env_var":"LIN","http_headers":{"X-Team":"core"},"env_http_headers":{"X-Key":"KEY_VAR"}}`, "",
			`server "n" {
  transport = "http"
  url       = "https://h/mcp"
  headers = {
    Authorization = "Bearer ${env("LIN")}"
    X-Key         = env("KEY_VAR")
    X-Team        = "core"
  }
}
`, nil, 0},
		{"codex tool filter refused", EntryCodex, `{"command":"x","enabled_tools":["one"]}`, "", "", []string{"enabled_tools"}, 0},
		{"unknown member", EntryMCPServers, `{"command":"x","bogus":1}`, "", "", []string{"bogus"}, 0},
		{"wrong types", EntryMCPServers, `{"command":1,"args":"a","env":[]}`, "", "", []string{"command", "args", "env", ""}, 0},
		{"token in args", EntryMCPServers, `{"command":"x","args":["--key","ghp_canaryCanaryCanary0123456789abcdefAB"]}`, "", "", []string{"args[1]"}, 0},
		{"partial secret", EntryMCPServers, `{"command":"x","env":{"API_KEY":"abc${X}"}}`, "", "", []string{"env.API_KEY"}, 0},
		{"both command and url", EntryMCPServers, `{"command":"x","url":"http://h"}`, "", "", []string{""}, 0},
		{"unknown client variable", EntryVSCode, `{"command":"${pathSeparator}x"}`, "", "", []string{"command"}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var fields map[string]any
			if err := json.Unmarshal([]byte(tc.json), &fields); err != nil {
				t.Fatal(err)
			}
			var stored []string
			opts := EntryOptions{Format: tc.format, WorkspaceDir: tc.workspace, StoreSecret: func(where, value string) (SecretRef, error) {
				stored = append(stored, value)
				return SecretRef{Stored: "stored:" + where}, nil
			}}
			e, notes, err := ServerEntryFromFields("n", fields, opts)
			if tc.problems != nil {
				var ee *EntryError
				if !errors.As(err, &ee) || !errors.Is(err, ErrServerJSON) {
					t.Fatalf("err = %v, want an *EntryError", err)
				}
				var keys []string
				for _, p := range ee.Problems {
					keys = append(keys, p.Key)
					if p.What == "" {
						t.Errorf("problem of %q says nothing", p.Key)
					}
				}
				if d := cmp.Diff(tc.problems, keys); d != "" {
					t.Errorf("problems (-want +got)\n%s\n%v", d, err)
				}
				if strings.Contains(err.Error(), "canary") || strings.Contains(err.Error(), "ghp_") {
					t.Errorf("the error shows the secret: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			out, err := AddServerBlock(nil, "f.hcl", e)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, string(out)); d != "" {
				t.Errorf("block (-want +got)\n%s", d)
			}
			for _, s := range stored {
				if strings.Contains(string(out), s) {
					t.Errorf("the block holds the secret %q", s)
				}
			}
			if len(notes) != tc.notes {
				t.Errorf("notes = %q, want %d", notes, tc.notes)
			}
		})
	}
}

// TestServerEntryFromFieldsNoStore: without a store (a project file), a
// literal secret is refused, never written.
func TestServerEntryFromFieldsNoStore(t *testing.T) {
	_, _, err := ServerEntryFromFields("n", map[string]any{"command": "x", "env": map[string]any{"API_KEY": "canary"}}, EntryOptions{})
	var ee *EntryError
	if !errors.As(err, &ee) || len(ee.Problems) != 1 || ee.Problems[0].Key != "env.API_KEY" {
		t.Fatalf("err = %v", err)
	}
}

// FuzzServerEntryFromFields maps arbitrary entries (another client's file
// is untrusted input) in every format: no panic, an error is an
// *EntryError, and an entry mapped is written as a block that parses, with
// no stored secret's value in it.
func FuzzServerEntryFromFields(f *testing.F) {
	f.Add(`{"command":"${HOME}/x","args":["${A:-b}","${env:C}"],"env":{"TOKEN":"v"}}`)
	f.Add(`{"httpUrl":"http://h","headers":{"Authorization":"Bearer x"},"disabled":true}`)
	f.Add(`{"url":"http://h","bearer_token_env_var":"T","env_http_headers":{"X":"Y"},"enabled":false}`)
	f.Add(`{"command":"x","env":{"K":"${input:id}"},"oauth":{"clientId":"c","callbackPort":80}}`)
	f.Fuzz(func(t *testing.T, data string) {
		var fields map[string]any
		if json.Unmarshal([]byte(data), &fields) != nil {
			return
		}
		for _, format := range []string{EntryMCPServers, EntryVSCode, EntryGemini, EntryCodex} {
			var stored []string
			e, _, err := ServerEntryFromFields("n", fields, EntryOptions{Format: format, WorkspaceDir: "/w",
				StoreSecret: func(where, value string) (SecretRef, error) {
					stored = append(stored, value)
					return SecretRef{Stored: "s"}, nil
				}})
			if err != nil {
				var ee *EntryError
				if !errors.As(err, &ee) || len(ee.Problems) == 0 {
					t.Fatalf("%s: error %v is not an *EntryError", format, err)
				}
				continue
			}
			out, err := AddServerBlock(nil, "f.hcl", e)
			if err != nil {
				t.Fatalf("%s: %v", format, err)
			}
			if _, err := parseForEdit(out, "f.hcl"); err != nil {
				t.Fatalf("%s: the block does not parse: %v\n%s", format, err, out)
			}
			for _, s := range stored {
				if len(s) > 3 && strings.Contains(string(out), s) {
					t.Fatalf("%s: the secret %q is in the block:\n%s", format, s, out)
				}
			}
		}
	})
}

// TestIsSecretNameIsRedacts: import and the redactor (the ask prompt, the
// logs) agree on every name.
func TestIsSecretNameIsRedacts(t *testing.T) {
	for _, name := range []string{"pwd", "db_key", "GITHUB_PAT", "private_key", "passphrase", "session_id", "code_verifier", "assertion", "GITHUB_TOKEN", "LOG_LEVEL", "keyboard"} {
		if IsSecretName(name) != redact.SecretName(name) {
			t.Errorf("%s: IsSecretName %v, redact.SecretName %v", name, IsSecretName(name), redact.SecretName(name))
		}
	}
}

// TestServerEntryFromFieldsPerClient: what differs by client and OS.
// ${userHome} is USERPROFILE on Windows (HOME is usually unset there);
// Claude Desktop does not expand ${…}, so its values stay literal text
// (noted) and a literal secret in them is stored; Claude Code runs
// headersHelper through a shell: a command line becomes sh -c (a problem
// on Windows), a plain program stays one.
func TestServerEntryFromFieldsPerClient(t *testing.T) {
	for _, tc := range []struct {
		name, format, goos, json string
		want                     string   // the block written, when imported
		problems                 []string // the members reported, when not
		notes                    int
	}{
		{"userHome on windows", EntryVSCode, "windows", `{"command":"${userHome}/bin/x.exe"}`,
			"server \"n\" {\n  command = \"${env(\"USERPROFILE\")}/bin/x.exe\"\n}\n", nil, 0},
		{"userHome elsewhere", EntryVSCode, "darwin", `{"command":"${userHome}/bin/x"}`,
			"server \"n\" {\n  command = \"${env(\"HOME\")}/bin/x\"\n}\n", nil, 0},
		{"claude desktop keeps ${} literal", EntryClaudeDesktop, "linux", `{"command":"npx","args":["${HOME}/Documents"],"env":{"MODE":"${MODE}"}}`,
			"server \"n\" {\n  command = \"npx\"\n  args    = [\"$${HOME}/Documents\"]\n  env = {\n    MODE = \"$${MODE}\"\n  }\n}\n", nil, 2},
		{"claude desktop secret with ${} stored", EntryClaudeDesktop, "linux", `{"command":"x","env":{"API_KEY":"abc${X}"}}`,
			"server \"n\" {\n  command = \"x\"\n  env = {\n    API_KEY = secret(\"stored:env.API_KEY\")\n  }\n}\n", nil, 1},
		{"headersHelper shell command", EntryMCPServers, "linux", `{"type":"http","url":"https://h/mcp","headersHelper":"/opt/get-headers.sh --aud x | jq ."}`,
			"server \"n\" {\n  transport      = \"http\"\n  url            = \"https://h/mcp\"\n  headers_helper = [\"sh\", \"-c\", \"/opt/get-headers.sh --aud x | jq .\"]\n}\n", nil, 1},
		{"headersHelper plain program", EntryMCPServers, "linux", `{"type":"http","url":"https://h/mcp","headersHelper":"${HOME}/bin/helper"}`,
			"server \"n\" {\n  transport      = \"http\"\n  url            = \"https://h/mcp\"\n  headers_helper = \"${env(\"HOME\")}/bin/helper\"\n}\n", nil, 0},
		{"headersHelper shell command on windows", EntryMCPServers, "windows", `{"type":"http","url":"https://h/mcp","headersHelper":"helper.cmd --aud x"}`,
			"", []string{"headersHelper"}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var fields map[string]any
			if err := json.Unmarshal([]byte(tc.json), &fields); err != nil {
				t.Fatal(err)
			}
			opts := EntryOptions{Format: tc.format, GOOS: tc.goos, StoreSecret: func(where, _ string) (SecretRef, error) {
				return SecretRef{Stored: "stored:" + where}, nil
			}}
			e, notes, err := ServerEntryFromFields("n", fields, opts)
			if tc.problems != nil {
				var ee *EntryError
				if !errors.As(err, &ee) {
					t.Fatalf("err = %v, want an *EntryError", err)
				}
				var keys []string
				for _, p := range ee.Problems {
					keys = append(keys, p.Key)
				}
				if d := cmp.Diff(tc.problems, keys); d != "" {
					t.Errorf("problems (-want +got)\n%s", d)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			out, err := AddServerBlock(nil, "f.hcl", e)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, string(out)); d != "" {
				t.Errorf("block (-want +got)\n%s", d)
			}
			if len(notes) != tc.notes {
				t.Errorf("notes = %q, want %d", notes, tc.notes)
			}
		})
	}
}
