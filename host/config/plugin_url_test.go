package config

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPluginTransportURLs: a plugin transport's url may have any scheme
// (the plugin chooses: tcp:// for a TCP transport), and is passed on as
// written; http and sse keep to http(s). Issue 37: `tcp://` was refused.
func TestPluginTransportURLs(t *testing.T) {
	t.Parallel()
	tests := []struct {
		transport, url string
		want           string // "" = loads, else part of the diagnostic
	}{
		{"tcp", "tcp://127.0.0.1:9000", ""},
		{"tcp", "TCP://127.0.0.1:9000", ""},
		{"tcp", "tcp://[::1]:9000", ""},
		{"tcp", "http://127.0.0.1:9000", ""}, // the plugin refuses it when it opens
		{"ws", "wss://x/mcp", ""},
		{"tcp", "localhost:9000", `"localhost:9000" has no host.`},
		{"tcp", "//127.0.0.1:9000", `"//127.0.0.1:9000" has no scheme; write it as SCHEME://HOST…, e.g. "tcp://127.0.0.1:9000".`},
		{"tcp", "tcp://user:pw@127.0.0.1:9000", "credentials in the url are not allowed"},
		{"tcp", "tcp:///nohost", `"tcp:///nohost" has no host.`},
		{"http", "tcp://127.0.0.1:9000", `"tcp://127.0.0.1:9000" has scheme "tcp"; the http transport accepts http, https.`},
		{"sse", "ws://x/sse", `"ws://x/sse" has scheme "ws"; the sse transport accepts http, https.`},
	}
	tr := newTree(t)
	pluginDir := filepath.Join(tr.root, "plugins")
	lockPath := filepath.Join(tr.root, "lock.hcl")
	var locked []*LockedPlugin
	for _, name := range []string{"tcp", "ws"} {
		bin := tr.write(filepath.Join(pluginDir, "transport-"+name), "#!/bin/sh\n")
		must(t, os.Chmod(bin, 0o755))
		locked = append(locked, &LockedPlugin{Name: "transport-" + name, Path: bin, SHA256: strings.Repeat("ab", 32), Protocol: 1,
			Transports: []string{name}, Components: []*LockedComponent{{Kind: "transport", Name: name}}})
	}
	must(t, WriteLock(lockPath, &Lock{Plugins: locked}))
	settings := fmt.Sprintf("settings {\n  plugin_dir  = %q\n  plugin_lock = %q\n}\n", pluginDir, lockPath)
	for i, tc := range tests {
		t.Run(tc.transport+" "+tc.url, func(t *testing.T) {
			path := tr.write(filepath.Join(tr.root, fmt.Sprintf("c%d.hcl", i)), settings+fmt.Sprintf("server \"s\" {\n  transport = %q\n  url       = %q\n}\n", tc.transport, tc.url))
			cfg, diags := tr.load(path)
			if tc.want == "" {
				if diags.HasErrors() {
					t.Fatalf("refused: %s", diags.Error())
				}
				if got := cfg.Server("s").URL; got != tc.url {
					t.Errorf("url = %q, want it passed as written (%q)", got, tc.url)
				}
				return
			}
			if !diags.HasErrors() || !strings.Contains(diags.Error(), tc.want) {
				t.Errorf("diagnostics %v, want one containing %q", diags, tc.want)
			}
		})
	}
}

// TestTransportFromURL: the transport `server add NAME URL` and add-json
// infer from a URL; an unknown scheme names its plugin transport.
func TestTransportFromURL(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ url, want string }{
		{"https://a/mcp", TransportHTTP},
		{"http://127.0.0.1:8931/mcp", TransportHTTP},
		{"https://a/sse", TransportSSE},
		{"https://a/sse?x=1", TransportSSE},
		{"ws://a/mcp", "ws"},
		{"WSS://a/sse", "ws"},
		{"tcp://127.0.0.1:9000", "tcp"},
		{"TCP://127.0.0.1:9000", "tcp"},
		{"my+tcp://h:1", "my+tcp"},
		{"a/sse", TransportSSE},
		{"127.0.0.1:9000", TransportHTTP},
		{"1x://h", TransportHTTP},
	} {
		if got := TransportFromURL(tc.url); got != tc.want {
			t.Errorf("TransportFromURL(%q) = %q, want %q", tc.url, got, tc.want)
		}
	}
}
