package gateway_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/internal/demoserver"
)

// upstreamWatch records what an HTTP upstream is sent: the protocol version
// header of each request after the initialize, and the initializes.
type upstreamWatch struct {
	mu          sync.Mutex
	initializes int
	versions    map[string][]string // header value: the methods sent with it
}

func (w *upstreamWatch) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(strings.NewReader(string(body)))
			var msg struct {
				Method string `json:"method"`
			}
			json.Unmarshal(body, &msg)
			w.mu.Lock()
			switch v := r.Header.Get("Mcp-Protocol-Version"); {
			case msg.Method == "initialize":
				w.initializes++
			case msg.Method != "" && msg.Method != "server/discover": // (the go-sdk client's probe at its newest version, before it initializes)
				if w.versions == nil {
					w.versions = map[string][]string{}
				}
				w.versions[v] = append(w.versions[v], msg.Method)
			}
			w.mu.Unlock()
		}
		next.ServeHTTP(rw, r)
	})
}

// TestNewClientOldHTTPUpstream: a streamable HTTP upstream that speaks
// 2025-11-25 only, shared by the gateway's clients. A 2026-07-28 client's
// completion/complete, prompts/get, resources/read and subscribe reach it
// in its own version (the client's protocol _meta is not forwarded: the
// go-sdk client would send its version in the header, and the server
// refuse the request with a 400), each is answered, the upstream session
// stays the one it was (no new initialize), and another client's call
// succeeds after them.
func TestNewClientOldHTTPUpstream(t *testing.T) {
	t.Parallel()
	srv := demoserver.New(&demoserver.Options{Name: "o", ProtocolVersions: []string{oldProtocol}, Passthrough: true})
	var watch upstreamWatch
	hs := httptest.NewServer(watch.wrap(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)))
	t.Cleanup(func() { hs.CloseClientConnections(); hs.Close() })
	p := ptServe(t, ptOptions{servers: []*config.Server{{Name: "o", Transport: config.TransportHTTP, URL: hs.URL, Approved: true, ConnectTimeout: 5 * time.Second}}})
	ctx := context.Background()
	if v := p.h.Serving().ProtocolVersion(ctx, "o"); v != oldProtocol {
		t.Fatalf("upstream session at %q, want %s", v, oldProtocol)
	}
	newc := p.dial(t, newProtocol, nil)
	other := p.dial(t, oldProtocol, nil)
	echo := func(cs *mcp.ClientSession, msg string) {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "mcp__o__echo", Arguments: map[string]any{"message": msg}})
		if err != nil || res.IsError || textOf(res) != msg {
			t.Fatalf("echo %q: %v %+v", msg, err, res)
		}
	}
	echo(other, "before")

	for _, tc := range []struct {
		name string
		do   func() error
	}{
		{"completion/complete", func() error {
			res, err := newc.Complete(ctx, &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/prompt", Name: "mcp__o__introduce"},
				Argument: mcp.CompleteParamsArgument{Name: "who", Value: "A"}})
			if err == nil && strings.Join(res.Completion.Values, ",") != "Ada@o,Alan@o" {
				t.Errorf("completions %q", res.Completion.Values)
			}
			return err
		}},
		{"prompts/get", func() error {
			_, err := newc.GetPrompt(ctx, &mcp.GetPromptParams{Name: "mcp__o__introduce", Arguments: map[string]string{"who": "Ada"}})
			return err
		}},
		{"resources/read", func() error {
			_, err := newc.ReadResource(ctx, &mcp.ReadResourceParams{URI: "demo://whoami"})
			return err
		}},
		{"resources/read of a template", func() error {
			_, err := newc.ReadResource(ctx, &mcp.ReadResourceParams{URI: "demo://items/apple"})
			return err
		}},
		{"tools/call", func() error {
			_, err := newc.CallTool(ctx, &mcp.CallToolParams{Name: "mcp__o__echo", Arguments: map[string]any{"message": "new"}})
			return err
		}},
		{"subscribe", func() error { return newc.Subscribe(ctx, &mcp.SubscribeParams{URI: "demo://whoami"}) }},
		{"unsubscribe", func() error { return newc.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: "demo://whoami"}) }},
	} {
		if err := tc.do(); err != nil {
			t.Errorf("%s of the 2026-07-28 client: %v", tc.name, err)
		}
		echo(other, "after "+tc.name)
	}

	watch.mu.Lock()
	defer watch.mu.Unlock()
	if watch.initializes != 1 {
		t.Errorf("the upstream was initialized %d times, want once (its connection was torn down)", watch.initializes)
	}
	for v, methods := range watch.versions {
		if v != oldProtocol {
			t.Errorf("the upstream was sent %q with Mcp-Protocol-Version %q, want %s", methods, v, oldProtocol)
		}
	}
}
