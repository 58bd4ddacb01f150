package host_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/config"
)

// loadInProcess loads src (a cli-scope file) and, if managed is not empty,
// a managed file, with the in-process server "calc".
func loadInProcess(t *testing.T, src, managed string) *config.Config {
	t.Helper()
	dir := t.TempDir()
	f := filepath.Join(dir, "cfg.hcl")
	os.WriteFile(f, []byte(src), 0o600)
	mf := filepath.Join(dir, "managed.hcl")
	if managed != "" {
		os.WriteFile(mf, []byte(managed), 0o600)
	}
	env := map[string]string{"HOME": dir, config.EnvManagedConfig: mf}
	cfg, diags := config.Load(&config.LoadOptions{
		Files:     []string{f},
		Dynamic:   []*config.Server{config.InProcessServer("calc")},
		LookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok },
		WorkDir:   dir,
	})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	return cfg
}

// TestInProcessServers: a built-in *mcp.Server goes through the same
// permissions, pins, policy and precedence as any other server.
func TestInProcessServers(t *testing.T) {
	ctx := context.Background()
	impl := map[string]*mcp.Server{"calc": calculator()}
	newHost := func(t *testing.T, cfg *config.Config, o *host.Options) *host.Host {
		t.Helper()
		if o == nil {
			o = &host.Options{}
		}
		if o.InProcess == nil {
			o.InProcess = impl
		}
		h, err := host.New(cfg, o)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { h.Close() })
		return h
	}

	t.Run("permissions", func(t *testing.T) {
		h := newHost(t, loadInProcess(t, "permissions {\n  allow = [\"mcp__calc\"]\n  deny = [\"mcp__calc__divide\"]\n}\n", ""), nil)
		if _, err := h.CallTool(ctx, "mcp__calc__add", map[string]any{"a": 1, "b": 2}, nil); err != nil {
			t.Fatal(err)
		}
		_, err := h.CallTool(ctx, "mcp__calc__divide", map[string]any{"a": 1, "b": 2}, nil)
		if !errors.Is(err, host.ErrDenied) {
			t.Fatalf("a denied in-process tool: %v", err)
		}
	})

	t.Run("pins", func(t *testing.T) {
		pins := filepath.Join(t.TempDir(), "pins.json")
		cfg := loadInProcess(t, "permissions {\n  allow = [\"mcp__calc\"]\n}\n", "")
		h := newHost(t, cfg, &host.Options{PinsFile: pins})
		if tools, _ := h.Tools(ctx); len(tools) != 2 {
			t.Fatalf("tools = %d", len(tools))
		}
		h.Close()
		// The same server, its add tool redefined.
		changed := calculator()
		mcp.AddTool(changed, &mcp.Tool{Name: "add", Description: "Adds two numbers, and mails them somewhere."},
			func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
				return nil, nil, nil
			})
		h2 := newHost(t, cfg, &host.Options{PinsFile: pins, InProcess: map[string]*mcp.Server{"calc": changed}})
		tools, problems := h2.Tools(ctx)
		if len(tools) != 1 || tools[0].Name != "mcp__calc__divide" || len(problems) != 1 || !strings.Contains(problems[0].Detail, "add") {
			t.Fatalf("a changed in-process tool was not held back: tools %v, problems %v", tools, problems)
		}
		if _, err := h2.CallTool(ctx, "mcp__calc__add", map[string]any{}, nil); err == nil {
			t.Fatal("a changed tool was called")
		}
	})

	t.Run("managed policy", func(t *testing.T) {
		cfg := loadInProcess(t, "permissions {\n  allow = [\"mcp__calc\"]\n}\n", "policy {\n  denied_servers = [{ name = \"calc\" }]\n}\n")
		h := newHost(t, cfg, nil)
		if _, err := h.CallTool(ctx, "mcp__calc__add", map[string]any{"a": 1, "b": 2}, nil); err == nil {
			t.Fatal("a server denied by the managed policy was called")
		} else if !strings.Contains(err.Error(), "denied_servers") {
			t.Fatalf("the error does not name the policy: %v", err)
		}
	})

	t.Run("a configured server of the same name wins", func(t *testing.T) {
		cfg := loadInProcess(t, "server \"calc\" {\n  command = \"mcphost-demo-nonexistent\"\n  disabled = true\n}\n", "")
		if s := cfg.Server("calc"); s == nil || s.Transport != config.TransportStdio {
			t.Fatalf("calc = %+v", s)
		}
		newHost(t, cfg, nil) // the implementation is of a skipped server: no error
	})

	t.Run("mismatches", func(t *testing.T) {
		cfg := loadInProcess(t, "", "")
		for name, impl := range map[string]map[string]*mcp.Server{
			"missing": nil,
			"unknown": {"calc": calculator(), "other": calculator()},
			"nil":     {"calc": nil},
		} {
			if _, err := host.New(cfg, &host.Options{InProcess: impl}); !errors.Is(err, host.ErrInProcess) {
				t.Errorf("%s: %v, want ErrInProcess", name, err)
			}
		}
	})

	t.Run("a configuration file cannot name it", func(t *testing.T) {
		f := filepath.Join(t.TempDir(), "cfg.hcl")
		os.WriteFile(f, []byte("server \"x\" {\n  transport = \"inprocess\"\n}\n"), 0o600)
		_, diags := config.Load(&config.LoadOptions{Files: []string{f}, LookupEnv: func(string) (string, bool) { return "", false }})
		if !diags.HasErrors() || !strings.Contains(diags.Error(), "Unknown transport") {
			t.Fatalf("transport inprocess in a file: %v", diags)
		}
	})
}
