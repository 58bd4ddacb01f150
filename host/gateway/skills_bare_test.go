package gateway_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/registry"
)

// readAnySkillServer is a skill server (it declares the Skills extension
// and lists one skill, under docs://guide/) that answers a read of any
// URI, listed or not, and records the URIs it was asked: what reaches it
// is what the gateway routed to it. A go-sdk server with a middleware: no
// demo server answers reads of URIs it has no resource for.
type readAnySkillServer struct {
	mu   sync.Mutex
	read []string
}

func (s *readAnySkillServer) reads() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.read...)
}

func (s *readAnySkillServer) serve(t *testing.T) string {
	srv := mcp.NewServer(&mcp.Implementation{Name: "a"}, &mcp.ServerOptions{
		Capabilities: &mcp.ServerCapabilities{Resources: &mcp.ResourceCapabilities{}, Extensions: map[string]any{registry.ExtensionSkills: map[string]any{}}}})
	_ = mcp.AddReceivingCustomMethod(srv, registry.MethodListSkills, func(context.Context, *mcp.ServerSession, *registry.ListSkillsParams) (*registry.ListSkillsResult, error) {
		return &registry.ListSkillsResult{ResultType: "complete", Skills: []*registry.Skill{{
			URI: "docs://guide/SKILL.md", Frontmatter: json.RawMessage(`{"name":"guide","description":"a guide"}`), Resources: json.RawMessage(`"dynamic"`)}}}, nil
	})
	srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if rr, ok := req.(*mcp.ReadResourceRequest); ok && method == "resources/read" {
				s.mu.Lock()
				s.read = append(s.read, rr.Params.URI)
				s.mu.Unlock()
				return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: rr.Params.URI, Text: "read by a"}}}, nil
			}
			return next(ctx, method, req)
		}
	})
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	t.Cleanup(func() { hs.CloseClientConnections(); hs.Close() })
	return hs.URL
}

// TestSkillsBareReadsOnlySkillFiles: under bare naming with one skill
// server, a resources/read of a URI no server lists goes to the skill
// server only when it may be one of its skills' files — a skill:// URI, or
// one under the directory of a skill it lists; any other is the gateway's
// usual "resource not found", and never reaches the skill server. On the
// code before, every unlisted read went to the one skill server.
func TestSkillsBareReadsOnlySkillFiles(t *testing.T) {
	t.Parallel()
	a := &readAnySkillServer{}
	url := a.serve(t)
	for _, front := range skillFronts {
		t.Run(front.name, func(t *testing.T) {
			p := ptServe(t, ptOptions{naming: config.NamingBare, servers: []*config.Server{
				{Name: "a", Transport: config.TransportHTTP, URL: url, Approved: true, ConnectTimeout: 5 * time.Second}, demo("c")}})
			if len(p.problems) > 0 {
				t.Fatalf("sync: %v", p.problems)
			}
			cs := front.dial(t, p, newProtocol)
			for _, tc := range []struct {
				uri    string
				routed bool
			}{
				{"skill://hidden/SKILL.md", true},
				{"docs://guide/references/more.md", true}, // (under the listed skill's directory)
				{"https://example.com/other", false},
				{"docs://elsewhere/x.md", false},
				{"file:///etc/passwd", false},
			} {
				before := len(a.reads())
				res, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: tc.uri})
				got := a.reads()[before:]
				if tc.routed {
					if err != nil || len(res.Contents) != 1 || res.Contents[0].Text != "read by a" || len(got) != 1 {
						t.Errorf("read %s: %+v %v (the server was asked %q), want the skill server's answer", tc.uri, res, err, got)
					}
					continue
				}
				if err == nil || len(got) != 0 {
					t.Errorf("read %s: %+v %v (the server was asked %q), want not found, the skill server not asked", tc.uri, res, err, got)
				}
			}
		})
	}
}
