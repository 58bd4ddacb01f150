//go:build unix

package plugins

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/conn"
	"github.com/mcphost/mcphost/host/intercept"
)

// TestGuardRegexThroughTheHost: an interceptor block naming the real
// guard-regex plugin, configured and locked as a user does, checks the
// host's calls: a call whose arguments match deny_arguments is refused
// before the server sees it, a result's matches of redact_results are
// masked — on the library's path (CallTool) and on the gateway's relay
// (RelayCall; RelayStart leaves a call a plugin checks to it).
func TestGuardRegexThroughTheHost(t *testing.T) {
	dir := t.TempDir()
	block := fmt.Sprintf(`
server "local" {
  command = %q
}
interceptor "guard" {
  plugin  = "guard-regex"
  options = {
    deny_arguments = ["(?i)drop\\s+table"]
    redact_results = ["AKIA[0-9A-Z]{16}"]
  }
}
`, filepath.Join(binDir, "mcphost-demo"))
	cfgPath := lockedConfig(t, dir, block)
	cfg, diags := config.Load(&config.LoadOptions{Files: []string{cfgPath}, LookupEnv: func(k string) (string, bool) {
		if k == "HOME" {
			return dir, true
		}
		return "", false
	}})
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	h, err := host.New(cfg, &host.Options{OutputDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	ctx := context.Background()

	_, err = h.CallTool(ctx, "mcp__local__echo", map[string]any{"message": "DROP TABLE users"}, nil)
	var r *intercept.RefusedError
	if !errors.As(err, &r) || r.Kind != intercept.KindPlugin || !errors.Is(err, host.ErrDenied) || !strings.Contains(err.Error(), "deny_arguments[0]") {
		t.Fatalf("a call guard-regex denies: %v", err)
	}
	res, err := h.CallTool(ctx, "mcp__local__echo", map[string]any{"message": "key AKIAABCDEFGHIJKLMNOP here"}, nil)
	if err != nil || host.TextOf(res.Content) != "key [REDACTED] here" {
		t.Fatalf("a result guard-regex redacts: %v, %v", res, err)
	}
	stats, err := h.CallTool(ctx, "mcp__local__stats", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := json.Marshal(stats.StructuredContent); !strings.Contains(string(b), `"echo":1`) {
		t.Fatalf("the server saw %s, want the one allowed echo", b)
	}

	// The relay.
	if _, problems := h.Tools(ctx); len(problems) > 0 {
		t.Fatal(problems)
	}
	o := host.RelayOptions{ProtocolVersion: conn.NewProtocol}
	if h.Serving().RelayStart(ctx, "mcp__local__echo", json.RawMessage(`{"message":"x"}`), o, func([]byte, bool, error) {}) {
		t.Fatal("RelayStart took a call a plugin checks (on a read loop)")
	}
	resp, handled, err := h.Serving().RelayCall(ctx, "mcp__local__echo", json.RawMessage(`{"message":"AKIAABCDEFGHIJKLMNOP"}`), o)
	if !handled || err != nil || !strings.Contains(string(resp), `[REDACTED]`) || strings.Contains(string(resp), "AKIA") {
		t.Fatalf("relayed: %s, %v, %v", resp, handled, err)
	}
	if _, handled, _ := h.Serving().RelayCall(ctx, "mcp__local__echo", json.RawMessage(`{"message":"drop table x"}`), o); handled {
		t.Fatal("the relay took a call guard-regex denies")
	}
}
