package gateway_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/gateway"
)

// changedHarness is a host with a per-user server "pu" (and a shared
// server "sh") whose every upstream session gets a go-sdk server of its
// own, with a prompt "whoami" that says which, and a tool "work" that
// sends a notifications/progress and answers once release is closed.
type changedHarness struct {
	t       *testing.T
	ctx     context.Context
	h       *host.Host
	mu      sync.Mutex
	servers []*mcp.Server
	release chan struct{}
}

func newChangedHarness(t *testing.T, cfg *config.Config) *changedHarness {
	t.Helper()
	ch := &changedHarness{t: t, release: make(chan struct{})}
	up := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server {
		ch.mu.Lock()
		defer ch.mu.Unlock()
		s := mcp.NewServer(&mcp.Implementation{Name: "pu", Version: "1"}, nil)
		who := fmt.Sprint(len(ch.servers))
		s.AddPrompt(&mcp.Prompt{Name: "whoami"}, func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: who}}}}, nil
		})
		s.AddTool(&mcp.Tool{Name: "work", InputSchema: map[string]any{"type": "object"}}, func(ctx context.Context, r *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if tok := r.Params.GetProgressToken(); tok != nil {
				r.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: 1, Message: "working"})
			}
			select {
			case <-ch.release:
			case <-ctx.Done():
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done"}}}, nil
		})
		ch.servers = append(ch.servers, s)
		return s
	}, nil))
	t.Cleanup(up.Close)
	sh := listsServer("sh")
	shUp := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return sh }, nil))
	t.Cleanup(shUp.Close)
	cfg.Servers = []*config.Server{perUserServer("pu", up.URL),
		{Name: "sh", Transport: config.TransportHTTP, URL: shUp.URL, Approved: true, Origin: config.Origin{Scope: config.ScopeUser, File: "u.hcl"}}}
	cfg.DefaultMode = "allow_all"
	ctx, cancel := context.WithCancel(context.Background())
	h, err := host.New(cfg, &host.Options{OutputDir: t.TempDir(), PresentAuthURL: func(context.Context, string) error { return nil }})
	if err != nil {
		t.Fatal(err)
	}
	h.ConnectAll(ctx, nil)
	t.Cleanup(func() {
		cancel()
		h.Close()
	})
	ch.ctx, ch.h = ctx, h
	return ch
}

// gateway serves a gateway of opts over HTTP to alice, bob and carol.
func (ch *changedHarness) gateway(opts *gateway.Options) (*gateway.Gateway, string) {
	g := gateway.New(ch.h, opts)
	g.Sync(ch.ctx)
	ch.t.Cleanup(func() { g.Close() })
	return g, usersServer(ch.t, g, "alice", "bob", "carol")
}

// changedClient is one client session of a user's, with the list_changed
// and progress it got.
type changedClient struct {
	cs       *mcp.ClientSession
	changed  chan string // the list_changed methods
	progress chan string // the progress messages
}

// connect opens a session of user's to url at version; server is the
// upstream server of the user's connection (nil: none, the user may not
// use pu).
func (ch *changedHarness) connect(url, user, version string) (*changedClient, *mcp.Server) {
	ch.t.Helper()
	c := &changedClient{changed: make(chan string, 100), progress: make(chan string, 100)}
	cl := mcp.NewClient(&mcp.Implementation{Name: user, Version: "1"}, &mcp.ClientOptions{
		PromptListChangedHandler: func(context.Context, *mcp.PromptListChangedRequest) {
			c.changed <- "notifications/prompts/list_changed"
		},
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { c.changed <- "notifications/tools/list_changed" },
		ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
			c.progress <- r.Params.Message
		}})
	cs, err := cl.Connect(ch.ctx, &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: bearer{user, http.DefaultTransport}}},
		&mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		ch.t.Fatal(err)
	}
	ch.t.Cleanup(func() { cs.Close() })
	c.cs = cs
	res, err := cs.GetPrompt(ch.ctx, &mcp.GetPromptParams{Name: "mcp__pu__whoami"})
	if err != nil {
		return c, nil
	}
	var i int
	fmt.Sscan(res.Messages[0].Content.(*mcp.TextContent).Text, &i)
	ch.mu.Lock()
	defer ch.mu.Unlock()
	return c, ch.servers[i]
}

// addPrompt has server add a prompt (its list_changed follows).
func addPrompt(server *mcp.Server, name string) {
	server.AddPrompt(&mcp.Prompt{Name: name}, func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		return &mcp.GetPromptResult{}, nil
	})
}

// await waits up to d for method on c.
func (c *changedClient) await(d time.Duration, method string) bool {
	deadline := time.After(d)
	for {
		select {
		case m := <-c.changed:
			if m == method {
				return true
			}
		case <-deadline:
			return false
		}
	}
}

// TestPerUserListChangedNotHeldUp (review57 #8): a per-user server's
// list_changed is passed on off the user's upstream connection, each
// session on its own: while a session of alice's is not being written to
// (a send to it blocks), her other session still gets each list_changed
// of her connection at once. (Before, the upstream connection's
// notification path sent to each session in turn, and waited on the
// blocked one.)
func TestPerUserListChangedNotHeldUp(t *testing.T) {
	t.Parallel()
	ch := newChangedHarness(t, &config.Config{})
	g, url := ch.gateway(nil)
	stuck, server := ch.connect(url, "alice", oldProtocol)
	free, _ := ch.connect(url, "alice", oldProtocol)
	unblock := make(chan struct{})
	t.Cleanup(func() { close(unblock) }) // (before the gateway closes)
	g.Server().AddSendingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if ss, ok := req.GetSession().(*mcp.ServerSession); ok && ss.ID() == stuck.cs.ID() && strings.HasPrefix(method, "notifications/") {
				<-unblock // (a client that does not read)
			}
			return next(ctx, method, req)
		}
	})
	for i := range 3 {
		addPrompt(server, fmt.Sprint("p", i))
		if !free.await(2*time.Second, "notifications/prompts/list_changed") {
			t.Fatalf("change %d: alice's other session got no prompts/list_changed within 2 s", i)
		}
	}
}
