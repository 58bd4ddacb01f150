//go:build unix

package plugins

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// TestServerAddXAA: `mcphost server add --xaa IDP` writes an auth "xaa"
// block that the real auth-xaa plugin's recorded schema accepts (the whole
// configuration, plugin lock and idp blocks included, is loaded before
// writing), with the client secret read from a variable at run time; an
// unknown IdP is refused and nothing is written.
func TestServerAddXAA(t *testing.T) {
	dir := t.TempDir()
	cfg := lockedConfig(t, dir, `idp "corp" {
  issuer        = "https://idp.example.com"
  client_id     = "mcphost"
  callback_port = 8765
}
`)
	before, _ := os.ReadFile(cfg)
	t.Setenv("CRM_SECRET", "canary-crm-secret")
	out, err := mcphost(t, dir, "--config", cfg, "server", "add", "--xaa", "nope", "--client-id", "crm-app", "crm", "https://crm.example.com/mcp")
	if err == nil || !strings.Contains(out, "not written") {
		t.Fatalf("an unknown idp was accepted: %v\n%s", err, out)
	}
	if now, _ := os.ReadFile(cfg); string(now) != string(before) {
		t.Fatal("a refused edit changed the file")
	}
	out, err = mcphost(t, dir, "--config", cfg, "server", "add", "--xaa", "corp", "--client-id", "crm-app", "--client-secret-env", "CRM_SECRET", "crm", "https://crm.example.com/mcp")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	src, _ := os.ReadFile(cfg)
	if !strings.Contains(string(src), "auth \"xaa\" {\n    idp           = \"corp\"\n    client_id     = \"crm-app\"\n    client_secret = env(\"CRM_SECRET\")\n  }") {
		t.Errorf("the block:\n%s", src)
	}
	if strings.Contains(string(src), "canary") {
		t.Error("the secret's value was written")
	}
	// What was written loads as the plugin's configuration.
	out, err = mcphost(t, dir, "--config", cfg, "config", "show", "--json")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	var shown struct {
		Servers []struct {
			Name       string          `json:"name"`
			AuthScheme string          `json:"auth_scheme"`
			AuthConfig json.RawMessage `json:"auth_config"`
		} `json:"servers"`
	}
	if err := json.Unmarshal([]byte(out), &shown); err != nil {
		t.Fatal(err, out)
	}
	var auth map[string]string
	if len(shown.Servers) == 1 {
		json.Unmarshal(shown.Servers[0].AuthConfig, &auth)
	}
	if len(shown.Servers) != 1 || shown.Servers[0].AuthScheme != "xaa" || auth["idp"] != "corp" || auth["client_id"] != "crm-app" {
		t.Errorf("loaded: %+v, auth %v", shown.Servers, auth)
	}
	if strings.Contains(out, "canary") {
		t.Error("config show printed the secret")
	}
}
