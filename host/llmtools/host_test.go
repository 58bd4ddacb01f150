package llmtools_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/llmtools"
	"github.com/mcphost/mcphost/internal/demoserver"
	"github.com/mcphost/mcphost/internal/testing/demotest"
	"github.com/mcphost/mcphost/internal/testing/testbin"
)

func TestMain(m *testing.M) {
	demoserver.RunIfChild()
	os.Exit(m.Run())
}

// TestFromHost runs the whole path against real demo server processes:
// export every active server's tools (auto) or one server's (manual), then
// route a model's calls back through ToolCall and Host.CallTool, and
// flatten the results.
func TestFromHost(t *testing.T) {
	t.Parallel()
	cfg := &config.Config{Servers: []*config.Server{demotest.Server("demo"), demotest.Server("odd", "-schemas")}, DefaultMode: "allow_all"}
	h, err := host.New(cfg, &host.Options{OutputDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	auto, problems, err := llmtools.FromHost(ctx, h, llmtools.Anthropic)
	if err != nil || len(problems) > 0 {
		t.Fatalf("FromHost: %v %v", err, problems)
	}
	for _, want := range []string{"mcp__demo__echo", "mcp__odd__echo", "mcp__odd__schema_refs", "mcp__odd__schema_text"} {
		if _, ok := auto.Names.Vendor(want); !ok {
			t.Errorf("the auto export lacks %s", want)
		}
	}
	manual, _, err := llmtools.FromHost(ctx, h, llmtools.Gemini, "odd")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := manual.Names.Vendor("mcp__demo__echo"); ok || manual.Names.Len() == 0 {
		t.Errorf("the manual export of odd holds %d tools, with demo's echo: %v", manual.Names.Len(), ok)
	}
	if _, _, err := llmtools.FromHost(ctx, h, "gpt"); err == nil {
		t.Error("FromHost accepts an unknown format")
	}

	calls := []struct {
		tool, args, want string
	}{
		{"mcp__demo__echo", `{"message":"hi"}`, "hi"},
		{"mcp__odd__schema_choice", `{"input":{"id":7}}`, `arguments: {"id":7}`},
		{"mcp__odd__schema_refs", `{"home":{"street":"Main"}}`, `arguments: {"home":{"street":"Main"}}`},
		{"mcp__odd__schema_text", `{"input":"hello"}`, `arguments: "hello"`},
		{"mcp__demo__fail", `{"message":"boom"}`, llmtools.ErrorPrefix + "boom"},
	}
	for _, c := range calls {
		vendor, _ := manual.Names.Vendor(c.tool)
		e := manual
		if vendor == "" {
			e = auto
			vendor, _ = auto.Names.Vendor(c.tool)
		}
		call, err := e.ToolCall(vendor, json.RawMessage(c.args))
		if err != nil {
			t.Fatalf("%s: %v", c.tool, err)
		}
		res, err := h.CallTool(ctx, call.Name, call.Arguments, nil)
		if err != nil && res == nil {
			t.Fatalf("%s: %v", c.tool, err)
		}
		if got := llmtools.Flatten(res); got != c.want {
			t.Errorf("%s: Flatten = %q, want %q", c.tool, got, c.want)
		}
	}
}

// TestSDKsNotLinked: the vendors' SDKs, which the tests use as judges of
// the exports, and the OpenID provider the gateway's tests log in to
// (zitadel's, internal/testing/testidp), are not linked into the mcphost binary.
func TestSDKsNotLinked(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	t.Parallel()
	cmd := exec.Command("go", "list", "-e", "-deps", "./cmd/mcphost")
	cmd.Dir = testbin.Root()
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	deps := strings.Fields(string(out))
	if !slices.Contains(deps, "github.com/mcphost/mcphost/host/llmtools") {
		t.Fatalf("go list -deps ./cmd/mcphost does not list host/llmtools:\n%s", out)
	}
	for _, d := range deps {
		for _, sdk := range []string{"github.com/openai/", "github.com/anthropics/", "google.golang.org/genai", "github.com/zitadel/", "github.com/mcphost/mcphost/internal/testing/testidp"} {
			if strings.HasPrefix(d, sdk) {
				t.Errorf("the mcphost binary links %s", d)
			}
		}
	}
}
