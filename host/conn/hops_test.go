package conn

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/internal/mcpmeta"
)

// metaServer asks, during its tools' calls, with requests whose _meta has
// protocol-reserved members of its own session next to others, and tells
// in the result which members of the answer's _meta reached it.
func metaServer() *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "meta"}, nil)
	ask := mcp.Meta{mcpmeta.Prefix + "relatedTask": map[string]any{"taskId": "t1"}, mcpmeta.Prefix + "clientInfo": map[string]any{"name": "up"}, "example.com/keep": "yes"}
	got := func(m mcp.Meta) *mcp.CallToolResult {
		var keys []string
		for k := range m {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strings.Join(keys, ",")}}}
	}
	mcp.AddTool(srv, &mcp.Tool{Name: "elicit"}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		res, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Meta: ask, Message: "?", RequestedSchema: map[string]any{"type": "object"}})
		if err != nil {
			return nil, nil, err
		}
		return got(res.Meta), nil, nil
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "sample"}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		res, err := req.Session.CreateMessage(ctx, &mcp.CreateMessageParams{Meta: ask, MaxTokens: 1,
			Messages: []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: "?"}}}})
		if err != nil {
			return nil, nil, err
		}
		return got(res.Meta), nil, nil
	})
	return srv
}

// metaAnswerer records the _meta of what it is asked, and answers with
// protocol-reserved members of its own session next to others.
type metaAnswerer struct{ asked chan mcp.Meta }

var answerMeta = mcp.Meta{mcpmeta.Prefix + "protocolVersion": "2026-07-28", mcpmeta.Prefix + "clientInfo": map[string]any{"name": "down"}, "example.com/back": "yes"}

func (a *metaAnswerer) Capabilities() *mcp.ClientCapabilities {
	return &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{Form: &mcp.FormElicitationCapabilities{}}, Sampling: &mcp.SamplingCapabilities{}}
}
func (a *metaAnswerer) Elicit(_ context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	a.asked <- p.Meta
	return &mcp.ElicitResult{Meta: answerMeta, Action: "decline"}, nil
}
func (a *metaAnswerer) CreateMessage(_ context.Context, p *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
	a.asked <- p.Meta
	return &mcp.CreateMessageResult{Meta: answerMeta, Role: "assistant", Model: "m", Content: &mcp.TextContent{Text: "!"}}, nil
}
func (a *metaAnswerer) ListRoots(context.Context, *mcp.ListRootsParams) (*mcp.ListRootsResult, error) {
	return nil, errUnsupported("roots")
}

// A server's own requests during a call (elicitation, sampling) reach the
// caller's client without the protocol-reserved _meta of the server's
// session with the gateway, and the client's answers reach the server
// without those of the client's session; other _meta passes both ways.
func TestServerRequestsMetaStaysOnItsHop(t *testing.T) {
	t.Parallel()
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return metaServer() }, nil))
	t.Cleanup(func() { hs.CloseClientConnections(); hs.Close() })
	m := NewManager([]*config.Server{{Name: "h", Transport: config.TransportHTTP, URL: hs.URL, Approved: true, ConnectTimeout: 5 * time.Second}},
		&Options{Capabilities: &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{Form: &mcp.FormElicitationCapabilities{}}, Sampling: &mcp.SamplingCapabilities{}}})
	t.Cleanup(func() { m.Close() })
	for _, tool := range []string{"elicit", "sample"} {
		t.Run(tool, func(t *testing.T) {
			a := &metaAnswerer{asked: make(chan mcp.Meta, 1)}
			res, err := m.Call(context.Background(), "h", &mcp.CallToolParams{Name: tool, Arguments: map[string]any{}},
				&CallOptions{Requester: a, ClientVersion: "2025-11-25"})
			if err != nil {
				t.Fatal(err)
			}
			if res.IsError || text(res) != "example.com/back" {
				t.Errorf("the server got the answer's _meta keys %q; want example.com/back alone", text(res))
			}
			asked := <-a.asked
			if asked["example.com/keep"] != "yes" {
				t.Errorf("the client was asked without the request's own _meta: %v", asked)
			}
			for k := range asked {
				if mcpmeta.IsReserved(k) {
					t.Errorf("the client was asked with the server's session's %s", k)
				}
			}
			if fmt.Sprint(answerMeta[mcpmeta.Prefix+"protocolVersion"]) != "2026-07-28" {
				t.Error("the client's answer was changed in place")
			}
		})
	}
}
