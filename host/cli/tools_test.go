package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// toolsConfig has the demo server and a demo server with the schema_*
// tools, whose input schemas use $ref/$defs, recursion, oneOf, enums,
// nested objects, and empty and non-object schemas (mcphost-demo -schemas).
const toolsConfig = `server "demo" {
  command = "mcphost-demo"
}
server "odd" {
  command = "mcphost-demo"
  args    = ["-name", "odd", "-schemas"]
}
`

// TestToolsFormat runs `mcphost tools --format` against real demo server
// processes: JSON in the vendor's shape on stdout, one note a line on
// stderr, --server choosing servers (manual mode) or not (auto mode).
func TestToolsFormat(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.hcl")
	if err := os.WriteFile(cfg, []byte(toolsConfig), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name      string
		args      []string
		wantCode  int
		wantTools []string // among the tools exported
		noTools   []string // not among them
		check     func(t *testing.T, tools []map[string]any)
		wantNotes []string // among the note lines on stderr
		wantErr   string
	}{
		{
			name:      "openai, every active server",
			args:      []string{"tools", "--format", "openai"},
			wantTools: []string{"mcp__demo__echo", "mcp__odd__echo", "mcp__odd__schema_refs", "mcp__odd__schema_text"},
			check: func(t *testing.T, tools []map[string]any) {
				fn := toolNamed(t, tools, "mcp__odd__schema_text")["function"].(map[string]any)
				want := map[string]any{"type": "object", "required": []any{"input"},
					"properties": map[string]any{"input": map[string]any{"type": "string", "description": "The text."}}}
				if !jsonEqual(fn["parameters"], want) {
					t.Errorf("schema_text's parameters = %v, want the string schema wrapped", fn["parameters"])
				}
				refs := toolNamed(t, tools, "mcp__odd__schema_refs")["function"].(map[string]any)["parameters"].(map[string]any)
				if _, ok := refs["$defs"]; !ok {
					t.Errorf("schema_refs lost its $defs: %v", refs)
				}
			},
			wantNotes: []string{
				`note: mcp__odd__schema_text: #: rewritten: a schema of type "string" is not an object schema; wrapped as the property "input" of one (Export.ToolCall unwraps the model's arguments)`,
				`note: mcp__odd__schema_nested: #/properties/tags: added: "items": {} (OpenAI refuses an array schema without items)`,
			},
		},
		{
			name:      "openai-responses, one server",
			args:      []string{"tools", "--format", "openai-responses", "--server", "odd"},
			wantTools: []string{"mcp__odd__echo", "mcp__odd__schema_choice"},
			noTools:   []string{"mcp__demo__echo"},
			check: func(t *testing.T, tools []map[string]any) {
				for _, tool := range tools {
					if tool["type"] != "function" || tool["strict"] != false {
						t.Errorf("%v is not a non-strict function tool", tool["name"])
					}
				}
			},
			wantNotes: []string{`note: mcp__odd__schema_choice: #: rewritten: a schema with "oneOf" at the top is not an object schema; wrapped as the property "input" of one (Export.ToolCall unwraps the model's arguments)`},
		},
		{
			name:      "anthropic, two servers named",
			args:      []string{"tools", "--format", "anthropic", "--server", "odd", "--server", "demo", "--server", "odd"},
			wantTools: []string{"mcp__demo__echo", "mcp__odd__echo", "mcp__odd__schema_empty"},
			check: func(t *testing.T, tools []map[string]any) {
				empty := toolNamed(t, tools, "mcp__odd__schema_empty")
				if !jsonEqual(empty["input_schema"], map[string]any{"type": "object", "properties": map[string]any{}}) {
					t.Errorf("schema_empty's input_schema = %v", empty["input_schema"])
				}
				if n := len(tools); n != countNamed(tools, "mcp__odd__")+countNamed(tools, "mcp__demo__") {
					t.Errorf("%d tools, not all of odd and demo", n)
				}
			},
		},
		{
			name:      "gemini",
			args:      []string{"tools", "--format", "gemini", "--server", "odd"},
			wantTools: []string{"mcp__odd__schema_refs", "mcp__odd__schema_enums", "mcp__odd__schema_empty"},
			check: func(t *testing.T, tools []map[string]any) {
				out, _ := json.Marshal(tools)
				for _, banned := range []string{`"$ref"`, `"$defs"`, `"oneOf"`, `"allOf"`, `"const"`, `"additionalProperties"`, `"default"`, `"type":"string"`} {
					if bytes.Contains(out, []byte(banned)) {
						t.Errorf("the Gemini export holds %s", banned)
					}
				}
				if p, ok := toolNamed(t, tools, "mcp__odd__schema_empty")["parameters"]; ok {
					t.Errorf("schema_empty has parameters %v; Gemini refuses empty ones", p)
				}
			},
			wantNotes: []string{
				`note: mcp__odd__schema_refs: #/$defs/Node/properties/children/items/$ref: dropped: "#/$defs/Node" is recursive, and Gemini has no references: replaced by a plain object`,
				`note: mcp__odd__schema_enums: #/properties/mode/const: rewritten: const → an enum of one value`,
				`note: mcp__odd__schema_nested: #/properties/user/properties/email/format: dropped: format "email": Gemini accepts only enum and date-time for type string`,
			},
		},
		{
			name:     "an unknown format",
			args:     []string{"tools", "--format", "xml"},
			wantCode: exitConfig,
			wantErr:  `Error: --format: unknown tool format "xml": use one of openai, openai-responses, anthropic, gemini` + "\n",
		},
		{
			name:     "an unknown server",
			args:     []string{"tools", "--format", "openai", "--server", "odd", "--server", "nope"},
			wantCode: exitError,
			wantErr:  `Error: no server named "nope" is configured` + "\n",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			code, stdout, stderr := runMcphost(ctx, dir, append([]string{"--config", cfg}, tc.args...)...)
			if code != tc.wantCode {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tc.wantCode, stdout, stderr)
			}
			if tc.wantErr != "" {
				if stderr != tc.wantErr || stdout != "" {
					t.Errorf("stderr = %q, want %q; stdout = %q", stderr, tc.wantErr, stdout)
				}
				return
			}
			tools := exportedTools(t, tc.args, stdout)
			for _, name := range tc.wantTools {
				toolNamed(t, tools, name)
			}
			for _, name := range tc.noTools {
				if countNamed(tools, name) > 0 {
					t.Errorf("%s is exported", name)
				}
			}
			if tc.check != nil {
				tc.check(t, tools)
			}
			lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
			for _, l := range lines {
				if l != "" && !strings.HasPrefix(l, "note: ") {
					t.Errorf("stderr line %q is not a note", l)
				}
			}
			for _, want := range tc.wantNotes {
				if !slices.Contains(lines, want) {
					t.Errorf("stderr lacks the line\n%s\nstderr:\n%s", want, stderr)
				}
			}
		})
	}
}

// TestToolsServers: --server is repeatable for the listing too.
func TestToolsServers(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.hcl")
	if err := os.WriteFile(cfg, []byte(toolsConfig), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	code, stdout, stderr := runMcphost(ctx, dir, "--config", cfg, "tools", "--server", "odd", "--server", "demo", "--json")
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, stderr)
	}
	var out struct{ Tools []struct{ Name string } }
	if err := json.Unmarshal([]byte(stdout), &out); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range out.Tools {
		names = append(names, tl.Name)
	}
	for _, want := range []string{"mcp__demo__echo", "mcp__odd__schema_text"} {
		if !slices.Contains(names, want) {
			t.Errorf("the listing lacks %s: %v", want, names)
		}
	}
}

// runMcphost runs the CLI in this process, with dir as its home and
// configuration directory, and returns its exit code and output. Stdio
// servers are found on the test's PATH, where TestMain put mcphost-demo.
func runMcphost(ctx context.Context, dir string, args ...string) (code int, stdout, stderr string) {
	var out, errw bytes.Buffer
	a := &app{stdin: strings.NewReader(""), stdout: &out, stderr: &errw, workDir: dir,
		lookupEnv: func(k string) (string, bool) {
			switch k {
			case "HOME", "MCPHOST_CONFIG_DIR":
				return dir, true
			case "MCPHOST_MANAGED_CONFIG":
				return filepath.Join(dir, "managed.hcl"), true
			}
			return "", false
		}}
	code = a.execute(ctx, args)
	return code, out.String(), errw.String()
}

// exportedTools decodes an export, flattening Gemini's one tool into its
// function declarations.
func exportedTools(t *testing.T, args []string, stdout string) []map[string]any {
	t.Helper()
	var tools []map[string]any
	if err := json.Unmarshal([]byte(stdout), &tools); err != nil {
		t.Fatalf("stdout is not a JSON list: %v\n%s", err, stdout)
	}
	if !slices.Contains(args, "gemini") {
		return tools
	}
	if len(tools) != 1 {
		t.Fatalf("a Gemini export of %d tools, want 1", len(tools))
	}
	var decls []map[string]any
	for _, d := range tools[0]["functionDeclarations"].([]any) {
		decls = append(decls, d.(map[string]any))
	}
	return decls
}

// toolNamed returns the exported tool of the given name.
func toolNamed(t *testing.T, tools []map[string]any, name string) map[string]any {
	t.Helper()
	for _, tool := range tools {
		if exportName(tool) == name {
			return tool
		}
	}
	t.Fatalf("no tool %s among %d", name, len(tools))
	return nil
}

// countNamed counts the exported tools whose names start with prefix.
func countNamed(tools []map[string]any, prefix string) int {
	n := 0
	for _, tool := range tools {
		if strings.HasPrefix(exportName(tool), prefix) {
			n++
		}
	}
	return n
}

func exportName(tool map[string]any) string {
	if fn, ok := tool["function"].(map[string]any); ok {
		tool = fn
	}
	name, _ := tool["name"].(string)
	return name
}

func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}
