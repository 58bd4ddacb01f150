package conn

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host/config"
)

// holdingRequester answers every request of the server as name, after hold
// is closed (nil: at once); asked gets each request's method.
type holdingRequester struct {
	name  string
	hold  chan struct{}
	asked chan string
}

func (r *holdingRequester) wait(ctx context.Context, method string) error {
	r.asked <- method
	if r.hold == nil {
		return nil
	}
	select {
	case <-r.hold:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (r *holdingRequester) Capabilities() *mcp.ClientCapabilities {
	return &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{Form: &mcp.FormElicitationCapabilities{}},
		Sampling: &mcp.SamplingCapabilities{}, Roots: struct {
			ListChanged bool `json:"listChanged,omitempty"`
		}{ListChanged: true}}
}

func (r *holdingRequester) Elicit(ctx context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	if err := r.wait(ctx, "elicitation/create"); err != nil {
		return nil, err
	}
	return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"answer": r.name}}, nil
}

func (r *holdingRequester) CreateMessage(ctx context.Context, p *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
	if err := r.wait(ctx, "sampling/createMessage"); err != nil {
		return nil, err
	}
	return &mcp.CreateMessageResult{Model: "m", Role: "assistant", Content: &mcp.TextContent{Text: r.name}}, nil
}

func (r *holdingRequester) ListRoots(ctx context.Context, p *mcp.ListRootsParams) (*mcp.ListRootsResult, error) {
	if err := r.wait(ctx, "roots/list"); err != nil {
		return nil, err
	}
	return &mcp.ListRootsResult{Roots: []*mcp.Root{{URI: "file:///" + r.name}}}, nil
}

// askingServer is a server of 2025-11-25 over streamable HTTP whose tools
// each put one request of its own to the client during the call.
func askingServer(t *testing.T) *config.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "asking"}, &mcp.ServerOptions{SupportedProtocolVersions: []string{"2025-11-25"}})
	tool := func(name string, ask func(context.Context, *mcp.ServerSession) (string, error)) {
		srv.AddTool(&mcp.Tool{Name: name, InputSchema: map[string]any{"type": "object"}}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			s, err := ask(ctx, req.Session)
			if err != nil {
				return nil, err
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}, nil
		})
	}
	tool("elicit", func(ctx context.Context, ss *mcp.ServerSession) (string, error) {
		er, err := ss.Elicit(ctx, &mcp.ElicitParams{Mode: "form", Message: "who?", RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{"answer": map[string]any{"type": "string"}}}})
		if err != nil {
			return "", err
		}
		return fmt.Sprint(er.Content["answer"]), nil
	})
	tool("sample", func(ctx context.Context, ss *mcp.ServerSession) (string, error) {
		res, err := ss.CreateMessage(ctx, &mcp.CreateMessageParams{MaxTokens: 5, Messages: []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: "who?"}}}})
		if err != nil {
			return "", err
		}
		return res.Content.(*mcp.TextContent).Text, nil
	})
	tool("roots", func(ctx context.Context, ss *mcp.ServerSession) (string, error) {
		res, err := ss.ListRoots(ctx, &mcp.ListRootsParams{})
		if err != nil {
			return "", err
		}
		if len(res.Roots) != 1 {
			return "", fmt.Errorf("%d roots", len(res.Roots))
		}
		return res.Roots[0].URI, nil
	})
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	t.Cleanup(func() { hs.CloseClientConnections(); hs.Close() })
	return &config.Server{Name: "asking", Transport: config.TransportHTTP, URL: hs.URL, Approved: true, ConnectTimeout: 5 * time.Second}
}

// TestServerRequestsRoutedByStream: a streamable HTTP server of 2025-11-25
// puts a request of its own (elicitation, sampling, roots) on the response
// stream of the call it belongs to. While alice's call waits for her
// answer, bob's call to the same server is asked at once and answered by
// him (before, it was refused as ambiguous: calls of two clients in
// flight), and alice still answers her own.
func TestServerRequestsRoutedByStream(t *testing.T) {
	t.Parallel()
	cfg := askingServer(t)
	m := NewManager([]*config.Server{cfg}, &Options{Capabilities: &mcp.ClientCapabilities{
		Elicitation: &mcp.ElicitationCapabilities{Form: &mcp.FormElicitationCapabilities{}}, Sampling: &mcp.SamplingCapabilities{}}})
	t.Cleanup(func() { m.Close() })
	for _, tc := range []struct{ tool, method, alice, bob string }{
		{"elicit", "elicitation/create", "alice", "bob"},
		{"sample", "sampling/createMessage", "alice", "bob"},
		{"roots", "roots/list", "file:///alice", "file:///bob"},
	} {
		t.Run(tc.tool, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			call := func(r Requester) (string, error) {
				res, err := m.Call(ctx, cfg.Name, &mcp.CallToolParams{Name: tc.tool, Arguments: map[string]any{}}, &CallOptions{Requester: r, ClientVersion: "2025-11-25"})
				if err != nil {
					return "", err
				}
				if res.IsError {
					return "", fmt.Errorf("tool error: %s", text(res))
				}
				return text(res), nil
			}
			alice := &holdingRequester{name: "alice", hold: make(chan struct{}), asked: make(chan string, 4)}
			release := sync.OnceFunc(func() { close(alice.hold) })
			defer release() // (a failed check must not leave alice's call waiting)
			bob := &holdingRequester{name: "bob", asked: make(chan string, 4)}
			done := make(chan string, 1)
			go func() {
				got, err := call(alice)
				if err != nil {
					got = err.Error()
				}
				done <- got
			}()
			select {
			case <-alice.asked:
			case <-ctx.Done():
				t.Fatal("alice was not asked")
			}
			got, err := call(bob)
			if err != nil || got != tc.bob {
				t.Fatalf("bob's call while alice's waits for her: %q %v, want %q", got, err, tc.bob)
			}
			if m := <-bob.asked; m != tc.method || len(alice.asked) != 0 {
				t.Errorf("bob asked %q, alice %d more times", m, len(alice.asked))
			}
			release()
			if got := <-done; got != tc.alice {
				t.Errorf("alice's call: %q, want %q", got, tc.alice)
			}
		})
	}
}
