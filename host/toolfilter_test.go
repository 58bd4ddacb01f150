package host_test

import (
	"context"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/config"
)

// TestToolFilterSeesServedNames: a server's tools { include, exclude }
// decides on the name as it is served, not only as the server spells it: a
// tool whose name hides characters (zero-width, bidi controls, tag
// characters) or uses full-width forms is served under its folded name, and
// the filter judges that name; exclude ignores case. A filtered-out tool
// is neither listed nor called.
func TestToolFilterSeesServedNames(t *testing.T) {
	t.Parallel()
	names := []string{
		"delete_plain",
		"del\u200bete_zwsp", // zero-width space
		"delete\u2060_wj",   // word joiner
		"\uff44\uff45\uff4c\uff45\uff54\uff45_fullwidth", // ｄｅｌｅｔｅ
		"\u202edelete_bidi",    // right-to-left override
		"dele\U000E0074te_tag", // a tag character
		"DELETE_upper",
		"Delete_title",
		"read_file",
		"\uff52\uff45\uff41\uff44_fw", // ｒｅａｄ
		"re\u200bad_zw",
		"write_file",
	}
	server := mcp.NewServer(&mcp.Implementation{Name: "s", Version: "1"}, nil)
	for _, n := range names {
		server.AddTool(&mcp.Tool{Name: n, InputSchema: map[string]any{"type": "object"}},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "called"}}}, nil
			})
	}
	for _, tc := range []struct {
		name   string
		filter *config.ToolFilter
		want   []string
	}{
		{"exclude", &config.ToolFilter{Exclude: []string{"delete_*"}},
			[]string{"mcp__s__read_file", "mcp__s__read_fw", "mcp__s__read_zw", "mcp__s__write_file"}},
		{"include", &config.ToolFilter{Include: []string{"read_*"}},
			[]string{"mcp__s__read_file", "mcp__s__read_fw", "mcp__s__read_zw"}},
		{"include and exclude", &config.ToolFilter{Include: []string{"*"}, Exclude: []string{"delete_*", "read_f*"}},
			[]string{"mcp__s__read_zw", "mcp__s__write_file"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := config.InProcessServer("s")
			s.Tools = tc.filter
			cfg, diags := config.Load(&config.LoadOptions{Dynamic: []*config.Server{s}, WorkDir: t.TempDir(),
				LookupEnv: func(string) (string, bool) { return "", false }})
			if diags.HasErrors() {
				t.Fatal(diags)
			}
			cfg.DefaultMode = "allow_all"
			h, err := host.New(cfg, &host.Options{OutputDir: t.TempDir(), InProcess: map[string]*mcp.Server{"s": server}})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { h.Close() })
			ctx := context.Background()
			tools, problems := h.Tools(ctx)
			if len(problems) > 0 {
				t.Fatal(problems)
			}
			var got []string
			for _, tl := range tools {
				got = append(got, tl.Name)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("served tools (-want +got):\n%s", diff)
			}
			for _, n := range []string{"mcp__s__delete_zwsp", "mcp__s__delete_fullwidth", "mcp__s__delete_bidi", "mcp__s__delete_tag", "mcp__s__DELETE_upper"} {
				if slices.Contains(tc.want, n) {
					continue
				}
				if _, err := h.CallTool(ctx, n, map[string]any{}, nil); err == nil {
					t.Errorf("%s, filtered out, was called", n)
				}
			}
		})
	}
}
