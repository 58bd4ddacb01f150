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
	"github.com/mcphost/mcphost/host/permissions"
)

// progressNotes is how many notifications/progress the tool "work" sends.
const progressNotes = 30

// changedHarness is a host with a per-user server "pu" (and a shared
// server "sh") whose every upstream session gets a go-sdk server of its
// own, with a prompt "whoami" that says which, and a tool "work" that
// sends progressNotes notifications/progress and answers once release is closed.
type changedHarness struct {
	t       *testing.T
	ctx     context.Context
	h       *host.Host
	cfg     *config.Config
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
				for i := range progressNotes {
					r.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: float64(i + 1), Message: fmt.Sprint("working ", i)})
					time.Sleep(time.Millisecond) // (spread over the list_changed the test sends)
				}
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
	ch.ctx, ch.h, ch.cfg = ctx, h, cfg
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

// noneChanged fails the test if c has been sent a list_changed not read
// yet (who: c's user, and why: why it should not have, for the message).
func (c *changedClient) noneChanged(t *testing.T, who, why string) {
	t.Helper()
	select {
	case m := <-c.changed:
		t.Errorf("%s got %s: %s", who, m, why)
	default:
	}
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

// TestPerUserListChangedWithProgress (review57 #9d): a per-user list_changed
// is sent as a notifications/progress that listChangedSender turns into
// the list_changed; a real notifications/progress of an in-flight call,
// sent at the same moments, still reaches the client as that progress,
// every one, and none of the list_changed as a progress.
func TestPerUserListChangedWithProgress(t *testing.T) {
	t.Parallel()
	ch := newChangedHarness(t, &config.Config{})
	_, url := ch.gateway(nil)
	c, server := ch.connect(url, "alice", oldProtocol)
	close(ch.release) // (the call answers once its progress is sent)
	params := &mcp.CallToolParams{Name: "mcp__pu__work", Arguments: map[string]any{}}
	params.SetProgressToken("tok")
	called := make(chan error, 1)
	go func() {
		_, err := c.cs.CallTool(ch.ctx, params)
		called <- err
	}()
	for i := range 20 {
		addPrompt(server, fmt.Sprint("p", i))
		time.Sleep(time.Millisecond)
	}
	if err := <-called; err != nil {
		t.Fatal(err)
	}
	if !c.await(5*time.Second, "notifications/prompts/list_changed") {
		t.Error("no prompts/list_changed")
	}
	var got []string
	deadline := time.After(5 * time.Second)
	for len(got) < progressNotes {
		select {
		case m := <-c.progress:
			got = append(got, m)
		case <-deadline:
			t.Fatalf("%d progress notifications, want %d: %q", len(got), progressNotes, got)
		}
	}
	for i, m := range got {
		if m != fmt.Sprint("working ", i) {
			t.Errorf("progress %d: %q, want %q", i, m, fmt.Sprint("working ", i))
		}
	}
	select {
	case m := <-c.progress:
		t.Errorf("a progress notification more: %q", m)
	default:
	}
}

// TestPerUserListChangedCases (review57 #9g): a per-user server's
// list_changed on alice's connection reaches every session of hers (two
// here) and no one else's; not her session on an endpoint that does not
// serve the server; under tool search, not as tools/list_changed (tools/list
// does not change, as for the servers served to all), while her
// prompts/list_changed still arrives.
func TestPerUserListChangedCases(t *testing.T) {
	t.Parallel()
	const prompts, tools = "notifications/prompts/list_changed", "notifications/tools/list_changed"
	t.Run("two sessions of one user", func(t *testing.T) {
		t.Parallel()
		ch := newChangedHarness(t, &config.Config{})
		_, url := ch.gateway(nil)
		a1, alice := ch.connect(url, "alice", oldProtocol)
		a2, alice2 := ch.connect(url, "alice", oldProtocol)
		c, carol := ch.connect(url, "carol", oldProtocol)
		if alice != alice2 || alice == carol {
			t.Fatal("want one upstream session for alice's two, another for carol's")
		}
		addPrompt(alice, "new")
		for i, s := range []*changedClient{a1, a2} {
			if !s.await(5*time.Second, prompts) {
				t.Errorf("alice's session %d: no prompts/list_changed", i+1)
			}
		}
		addPrompt(carol, "other") // (the barrier: carol's own arrives after alice's would have)
		if !c.await(5*time.Second, prompts) {
			t.Fatal("carol: no prompts/list_changed of her own")
		}
		c.noneChanged(t, "carol", "want only her own connection's")
		for i, s := range []*changedClient{a1, a2} {
			s.noneChanged(t, fmt.Sprintf("alice's session %d", i+1), "of carol's connection")
		}
	})
	t.Run("server denied by rules", func(t *testing.T) {
		t.Parallel()
		ch := newChangedHarness(t, &config.Config{})
		_, url := ch.gateway(nil)
		a, alice := ch.connect(url, "alice", oldProtocol)
		c, carol := ch.connect(url, "carol", oldProtocol)
		cfg := *ch.cfg
		cfg.Permissions = []config.PermissionRule{{Behavior: permissions.Deny, Pattern: "mcp__pu",
			For: &permissions.Principals{Subjects: []string{"alice"}}, Origin: config.Origin{Scope: config.ScopeUser, File: "u.hcl"}}}
		if _, err := ch.h.Reload(ch.ctx, &cfg, time.Second); err != nil {
			t.Fatal(err)
		}
		addPrompt(alice, "new")
		addPrompt(carol, "other") // (the barrier: after alice's)
		if !c.await(5*time.Second, prompts) {
			t.Fatal("carol: no prompts/list_changed")
		}
		time.Sleep(50 * time.Millisecond) // (alice's and carol's sessions have senders of their own)
		a.noneChanged(t, "alice", "denied pu by the rules")
	})
	t.Run("endpoint excluding the server", func(t *testing.T) {
		t.Parallel()
		ch := newChangedHarness(t, &config.Config{Endpoints: []*config.Endpoint{{Name: "dev", Servers: []string{"sh"}}}})
		_, all := ch.gateway(nil)
		_, dev := ch.gateway(&gateway.Options{Endpoint: "dev"})
		a, alice := ch.connect(all, "alice", oldProtocol)
		d, none := ch.connect(dev, "alice", oldProtocol)
		if none != nil {
			t.Fatal("the endpoint dev serves alice pu's prompt")
		}
		addPrompt(alice, "new")
		if !a.await(5*time.Second, prompts) {
			t.Fatal("alice's session on the whole gateway: no prompts/list_changed")
		}
		// (No barrier is shared by the two gateways: the endpoint's drops
		// the change as the host tells it, before the whole gateway's
		// session is told; give a send the time all the same.)
		time.Sleep(100 * time.Millisecond)
		d.noneChanged(t, "alice's session on endpoint dev", "of pu, which it does not serve")
	})
	t.Run("tool search", func(t *testing.T) {
		t.Parallel()
		ch := newChangedHarness(t, &config.Config{})
		_, url := ch.gateway(&gateway.Options{ToolSearch: true})
		a, alice := ch.connect(url, "alice", oldProtocol)
		alice.AddTool(&mcp.Tool{Name: "more", InputSchema: map[string]any{"type": "object"}}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{}, nil
		})
		addPrompt(alice, "new") // (after the tool's: the barrier)
		select {
		case m := <-a.changed:
			if m == tools {
				t.Fatalf("got %s under tool search", m)
			}
			if m != prompts {
				t.Fatalf("got %s, want %s", m, prompts)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("no prompts/list_changed under tool search")
		}
		a.noneChanged(t, "alice", "under tool search")
	})
}
