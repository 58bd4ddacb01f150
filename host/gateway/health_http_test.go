package gateway_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/gateway"
	"github.com/mcphost/mcphost/host/gateway/streamable"
)

// TestHealthEndpointsGuardHost: /healthz, /readyz and a handler guarded
// like /metrics refuse a foreign Host on a loopback connection (DNS
// rebinding), as /mcp does, and /readyz shows no absolute path.
func TestHealthEndpointsGuardHost(t *testing.T) {
	t.Parallel()
	h, err := host.New(&config.Config{DefaultMode: "allow_all"}, &host.Options{OutputDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	g := gateway.New(h, nil)
	t.Cleanup(func() { g.Close() })
	g.Sync(context.Background())
	mux := http.NewServeMux()
	streamable.New(g).MountHealth(mux, &streamable.HealthOptions{Reload: func() streamable.ReloadStatus {
		return streamable.ReloadStatus{Outcome: streamable.ReloadRejected, Errors: []string{
			"/home/alice/.config/mcphost/config.hcl:3:5: Invalid gateway url",
			`plugin directory "/opt/mcphost/plugins" is writable by others`,
		}}
	}})
	mux.Handle("/metrics", streamable.GuardHost(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "metrics\n") })))
	srv := httptest.NewServer(mux) // on 127.0.0.1
	t.Cleanup(srv.Close)

	tests := []struct {
		path, host string
		want       int
	}{
		{"/healthz", "", http.StatusOK},
		{"/healthz", "evil.example", http.StatusForbidden},
		{"/healthz", "localhost:8080", http.StatusOK},
		{"/readyz", "", http.StatusOK},
		{"/readyz", "evil.example:80", http.StatusForbidden},
		{"/readyz", "-", http.StatusOK}, // no Host: an HTTP/1.0 load balancer check
		{"/metrics", "", http.StatusOK},
		{"/metrics", "evil.example", http.StatusForbidden},
	}
	for _, tc := range tests {
		t.Run(tc.path+" "+tc.host, func(t *testing.T) {
			req, _ := http.NewRequest(http.MethodGet, srv.URL+tc.path, nil)
			var resp *http.Response
			var err error
			switch tc.host {
			case "":
				resp, err = http.DefaultClient.Do(req)
			case "-":
				resp, err = http10(srv.Listener.Addr().String(), tc.path)
			default:
				req.Host = tc.host
				resp, err = http.DefaultClient.Do(req)
			}
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tc.want {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tc.want, body)
			}
			if tc.path == "/readyz" && tc.want == http.StatusOK {
				for _, abs := range []string{"/home/alice", "/opt/mcphost"} {
					if strings.Contains(string(body), abs) {
						t.Errorf("/readyz shows %q: %s", abs, body)
					}
				}
				if !strings.Contains(string(body), "config.hcl:3:5: Invalid gateway url") || !strings.Contains(string(body), `\"plugins\" is writable`) {
					t.Errorf("/readyz lost the errors' base names: %s", body)
				}
			}
		})
	}
}

// http10 sends "GET path HTTP/1.0" without a Host header to addr, as
// HAProxy's option httpchk does, and reads the response.
func http10(addr, path string) (*http.Response, error) {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	if _, err := fmt.Fprintf(c, "GET %s HTTP/1.0\r\n\r\n", path); err != nil {
		return nil, err
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		return nil, err
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body = io.NopCloser(strings.NewReader(string(body)))
	return resp, err
}
