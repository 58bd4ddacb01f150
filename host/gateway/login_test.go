package gateway_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host"
	hauth "github.com/mcphost/mcphost/host/auth"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/gateway"
	"github.com/mcphost/mcphost/host/gateway/stdio"
	"github.com/mcphost/mcphost/internal/testing/fakeas"
)

// oauthGateway serves a host with one OAuth-protected server ("prot",
// behind a real authorization server on 127.0.0.1) over stdio.
func oauthGateway(t *testing.T, as *fakeas.Server, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	return oauthGatewayWith(t, as, opts, nil)
}

// oauthGatewayWith is oauthGateway with the gateway's options.
func oauthGatewayWith(t *testing.T, as *fakeas.Server, opts *mcp.ClientOptions, gopts *gateway.Options) *mcp.ClientSession {
	t.Helper()
	dir := t.TempDir()
	p := filepath.Join(dir, "mcphost.hcl")
	hcl := fmt.Sprintf("server \"prot\" {\n  transport = \"http\"\n  url = %q\n  oauth {\n    allow_loopback = true\n  }\n}\npermissions {\n  allow = [\"mcp__prot__*\"]\n}\n", as.URL())
	if err := os.WriteFile(p, []byte(hcl), 0o600); err != nil {
		t.Fatal(err)
	}
	lookup := func(k string) (string, bool) {
		if k == "MCPHOST_CONFIG_DIR" || k == "HOME" {
			return dir, true
		}
		return "", false
	}
	cfg, diags := config.Load(&config.LoadOptions{LookupEnv: lookup, WorkDir: dir, Files: []string{p}})
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	ctx, cancel := context.WithCancel(context.Background())
	h, err := host.New(cfg, &host.Options{LookupEnv: lookup, OutputDir: t.TempDir(), TokenStore: &hauth.FileStore{Dir: filepath.Join(dir, "tokens")},
		// The host's own "browser" must never be used by serve: the
		// downstream client shows the URL.
		PresentAuthURL: func(context.Context, string) error { t.Error("the host presented the URL itself"); return nil }})
	if err != nil {
		t.Fatal(err)
	}
	h.ConnectAll(ctx, nil)
	g := gateway.New(h, gopts)
	t.Cleanup(func() { g.Close() })
	g.Sync(ctx)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan struct{})
	go func() {
		defer close(done)
		stdio.Serve(ctx, g, inR, outW)
	}()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "login-test"}, opts).Connect(ctx, &mcp.IOTransport{Reader: outR, Writer: inW}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cs.Close()
		cancel()
		inW.Close()
		outR.Close()
		<-done
		h.Close()
	})
	return cs
}

// follow is the downstream user's browser: it follows the authorization
// URL to the AS, which redirects to the host's loopback callback.
func follow(ctx context.Context, u string) {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if resp, err := http.DefaultClient.Do(req); err == nil {
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
}

// TestLoginThroughURLElicitation: a downstream client calls the
// authenticate pseudo-tool; the authorization URL reaches it as a URL-mode
// elicitation, its user completes the login, and the server's real tools
// replace the pseudo-tool.
func TestLoginThroughURLElicitation(t *testing.T) {
	as := fakeas.New()
	defer as.Close()
	urls := make(chan string, 1)
	cs := oauthGateway(t, as, &mcp.ClientOptions{
		Capabilities: &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{URL: &mcp.URLElicitationCapabilities{}}},
		ElicitationHandler: func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			if req.Params.Mode != "url" {
				return &mcp.ElicitResult{Action: "decline"}, nil
			}
			urls <- req.Params.URL
			follow(ctx, req.Params.URL)
			return &mcp.ElicitResult{Action: "accept"}, nil
		},
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	lt, err := cs.ListTools(ctx, nil)
	if err != nil || len(lt.Tools) != 1 || lt.Tools[0].Name != "mcp__prot__authenticate" {
		t.Fatalf("tools before login: %v %v", lt, err)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "mcp__prot__authenticate", Arguments: map[string]any{}})
	if err != nil || res.IsError || !strings.Contains(host.TextOf(res.Content), "mcp__prot__whoami") {
		t.Fatalf("authenticate: %v %v %q", res, err, host.TextOf(res.Content))
	}
	select {
	case u := <-urls:
		if !strings.HasPrefix(u, as.AS.URL+"/authorize?") {
			t.Errorf("elicited URL %q is not the authorization URL", u)
		}
	default:
		t.Fatal("the client was never asked")
	}
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "mcp__prot__whoami", Arguments: map[string]any{}})
	if err != nil || host.TextOf(res.Content) != "you" {
		t.Fatalf("whoami after login: %v %v", res, err)
	}
}

// TestLoginWithoutURLElicitation: a client that cannot show a URL
// elicitation gets the URL as text; once its user completes the login, the
// tools are there.
func TestLoginWithoutURLElicitation(t *testing.T) {
	as := fakeas.New()
	defer as.Close()
	cs := oauthGateway(t, as, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "mcp__prot__authenticate", Arguments: map[string]any{}})
	if err != nil || res.IsError {
		t.Fatalf("authenticate: %v %v", res, err)
	}
	text := host.TextOf(res.Content)
	i := strings.Index(text, as.AS.URL+"/authorize?")
	if i < 0 {
		t.Fatalf("no authorization URL in %q", text)
	}
	follow(ctx, strings.Fields(text[i:])[0])
	for {
		res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "mcp__prot__whoami", Arguments: map[string]any{}})
		if err == nil && !res.IsError {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("whoami never became available: %v %v", res, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestLoginToolSearch: with --tool-search, what a login tells the client
// speaks of search_tools, not of listing the tools (tools/list holds only
// the mode's two tools): the URL as text, and the result of the finished
// login; the server's tools are then found and called.
func TestLoginToolSearch(t *testing.T) {
	t.Run("text", func(t *testing.T) {
		as := fakeas.New()
		defer as.Close()
		cs := oauthGatewayWith(t, as, nil, &gateway.Options{ToolSearch: true})
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if f := search(t, cs, map[string]any{"query": "authenticate log in", "server": "prot"}); !slices.Contains(f.names(), "mcp__prot__authenticate") {
			t.Fatalf("the authenticate tool is not found: %v", f.names())
		}
		res := callFound(t, cs, "mcp__prot__authenticate", map[string]any{})
		text := host.TextOf(res.Content)
		if res.IsError || !strings.Contains(text, gateway.SearchToolName) || strings.Contains(text, "list the tools") {
			t.Errorf("authenticate through call_tool: %q (isError %v), want it to speak of %s", text, res.IsError, gateway.SearchToolName)
		}
		i := strings.Index(text, as.AS.URL+"/authorize?")
		if i < 0 {
			t.Fatalf("no authorization URL in %q", text)
		}
		follow(ctx, strings.Fields(text[i:])[0])
		for !slices.Contains(search(t, cs, map[string]any{"query": "whoami", "server": "prot"}).names(), "mcp__prot__whoami") {
			if ctx.Err() != nil {
				t.Fatal("whoami is never found")
			}
			time.Sleep(50 * time.Millisecond)
		}
		if res := callFound(t, cs, "mcp__prot__whoami", map[string]any{}); res.IsError || host.TextOf(res.Content) != "you" {
			t.Errorf("whoami after login: %q", host.TextOf(res.Content))
		}
	})
	t.Run("URL elicitation", func(t *testing.T) {
		as := fakeas.New()
		defer as.Close()
		cs := oauthGatewayWith(t, as, &mcp.ClientOptions{
			Capabilities: &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{URL: &mcp.URLElicitationCapabilities{}}},
			ElicitationHandler: func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				follow(ctx, req.Params.URL)
				return &mcp.ElicitResult{Action: "accept"}, nil
			},
		}, &gateway.Options{ToolSearch: true})
		res := callFound(t, cs, "mcp__prot__authenticate", map[string]any{})
		text := host.TextOf(res.Content)
		if res.IsError || !strings.Contains(text, "mcp__prot__whoami") || !strings.Contains(text, gateway.SearchToolName) {
			t.Errorf("authenticate through call_tool: %q (isError %v), want the tools and %s", text, res.IsError, gateway.SearchToolName)
		}
		if res := callFound(t, cs, "mcp__prot__whoami", map[string]any{}); res.IsError || host.TextOf(res.Content) != "you" {
			t.Errorf("whoami after login: %q", host.TextOf(res.Content))
		}
	})
	// The login ends, and the watch loop's Sync drops the pseudo-tool from
	// the index, before the client retries call_tool with its answer: the
	// retry still gets the login's outcome.
	t.Run("retry after the index changed", func(t *testing.T) {
		as := fakeas.New()
		defer as.Close()
		var cs *mcp.ClientSession
		cs = oauthGatewayWith(t, as, &mcp.ClientOptions{
			Capabilities: &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{URL: &mcp.URLElicitationCapabilities{}}},
			ElicitationHandler: func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				follow(ctx, req.Params.URL)
				ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
				defer cancel()
				// (Not search: t.Fatal is for the test's goroutine.)
				for {
					res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: gateway.SearchToolName, Arguments: map[string]any{"query": "authenticate whoami", "server": "prot"}})
					if err != nil {
						t.Errorf("search_tools: %v", err)
						break
					}
					if !strings.Contains(host.TextOf(res.Content), "mcp__prot__authenticate") {
						break // gone from the index
					}
					if ctx.Err() != nil {
						t.Error("the pseudo-tool never leaves the index")
						break
					}
					time.Sleep(20 * time.Millisecond)
				}
				return &mcp.ElicitResult{Action: "accept"}, nil
			},
		}, &gateway.Options{ToolSearch: true})
		res := callFound(t, cs, "mcp__prot__authenticate", map[string]any{})
		if text := host.TextOf(res.Content); res.IsError || !strings.Contains(text, "Logged in to prot") {
			t.Errorf("the retried authenticate call: %q (isError %v)", text, res.IsError)
		}
	})
}
