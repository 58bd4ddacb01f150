package gateway_test

import (
	"cmp"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
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
	name  string // its name ("": a), in its answers to reads
	skill string // the URI of the skill it lists ("": docs://guide/SKILL.md)

	mu    sync.Mutex
	read  []string
	lists int // the skills/list requests it answered
}

// listed returns the number of skills/list requests it answered.
func (s *readAnySkillServer) listed() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lists
}

func (s *readAnySkillServer) reads() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.read...)
}

func (s *readAnySkillServer) serve(t *testing.T) string {
	name, skill := cmp.Or(s.name, "a"), cmp.Or(s.skill, "docs://guide/SKILL.md")
	dir := strings.TrimSuffix(skill, "/SKILL.md")
	skillName := dir[strings.LastIndexByte(dir, '/')+1:]
	srv := mcp.NewServer(&mcp.Implementation{Name: name}, &mcp.ServerOptions{
		Capabilities: &mcp.ServerCapabilities{Resources: &mcp.ResourceCapabilities{}, Extensions: map[string]any{registry.ExtensionSkills: map[string]any{}}}})
	_ = mcp.AddReceivingCustomMethod(srv, registry.MethodListSkills, func(context.Context, *mcp.ServerSession, *registry.ListSkillsParams) (*registry.ListSkillsResult, error) {
		s.mu.Lock()
		s.lists++
		s.mu.Unlock()
		return &registry.ListSkillsResult{ResultType: "complete", Skills: []*registry.Skill{{
			URI: skill, Frontmatter: json.RawMessage(`{"name":"` + skillName + `","description":"a guide"}`), Resources: json.RawMessage(`"dynamic"`)}}}, nil
	})
	srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if rr, ok := req.(*mcp.ReadResourceRequest); ok && method == "resources/read" {
				s.mu.Lock()
				s.read = append(s.read, rr.Params.URI)
				s.mu.Unlock()
				return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: rr.Params.URI, Text: "read by " + name}}}, nil
			}
			return next(ctx, method, req)
		}
	})
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	t.Cleanup(func() { hs.CloseClientConnections(); hs.Close() })
	return hs.URL
}

// httpServerAt is the approved HTTP server name at url.
func httpServerAt(name, url string) *config.Server {
	return &config.Server{Name: name, Transport: config.TransportHTTP, URL: url, Approved: true, ConnectTimeout: 5 * time.Second}
}

// dialBare serves servers under bare naming, synced without problems, and
// dials the gateway with dial (a skillFronts') at the newest protocol.
func dialBare(t *testing.T, dial func(*testing.T, *ptGateway, string) *mcp.ClientSession, servers ...*config.Server) *mcp.ClientSession {
	t.Helper()
	p := ptServe(t, ptOptions{naming: config.NamingBare, servers: servers})
	if len(p.problems) > 0 {
		t.Fatalf("sync: %v", p.problems)
	}
	return dial(t, p, newProtocol)
}

// onBareFronts runs f on each skill front (in turn) with a session of a
// gateway under bare naming of a, a readAnySkillServer (one for all
// fronts), and demo("c").
func onBareFronts(t *testing.T, f func(t *testing.T, a *readAnySkillServer, cs *mcp.ClientSession)) {
	a := &readAnySkillServer{}
	url := a.serve(t)
	for _, front := range skillFronts {
		t.Run(front.name, func(t *testing.T) {
			f(t, a, dialBare(t, front.dial, httpServerAt("a", url), demo("c")))
		})
	}
}

// TestSkillsBareReadsOnlySkillFiles: under bare naming with one skill
// server, a resources/read of a URI no server lists goes to the skill
// server only when it may be one of its skills' files — a skill:// URI, or
// one under the directory of a skill it lists; any other is the gateway's
// usual "resource not found", and never reaches the skill server. On the
// code before, every unlisted read went to the one skill server.
func TestSkillsBareReadsOnlySkillFiles(t *testing.T) {
	t.Parallel()
	onBareFronts(t, func(t *testing.T, a *readAnySkillServer, cs *mcp.ClientSession) {
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

// TestSkillsBareReadsListOnce: under bare naming, reads of a URI no server
// lists are told apart from skill files by the skill server's latest
// listing, kept (here for the 30 s default: the listing gives no ttlMs):
// 20 reads cause at most one skills/list. On the old code each read
// listed the server's skills again (20).
func TestSkillsBareReadsListOnce(t *testing.T) {
	t.Parallel()
	onBareFronts(t, func(t *testing.T, a *readAnySkillServer, cs *mcp.ClientSession) {
		before := a.listed()
		for range 20 {
			if _, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "https://example.com/x"}); err == nil {
				t.Fatal("read https://example.com/x: no error, want not found")
			}
		}
		if n := a.listed() - before; n > 1 {
			t.Errorf("20 reads listed the skill server's skills %d times, want at most 1", n)
		}
	})
}

// TestSkillsBareSkillReadsGoToTheirServer: under bare naming, a read of a
// skill:// URI no server lists goes to the skill server whose listed
// skill directories hold it (b lists skill://b/SKILL.md: skill://b/ref.md
// is b's), never to another that would answer it too; one no server's
// directories hold still goes to every skill server. On the old code every
// skill:// read went to every skill server: a and b both answered, and
// the read was not found (none chosen).
func TestSkillsBareSkillReadsGoToTheirServer(t *testing.T) {
	t.Parallel()
	a := &readAnySkillServer{}
	b := &readAnySkillServer{name: "b", skill: "skill://b/SKILL.md"}
	urlA, urlB := a.serve(t), b.serve(t)
	cs := dialBare(t, skillFronts[0].dial, httpServerAt("a", urlA), httpServerAt("b", urlB))
	res, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "skill://b/ref.md"})
	if err != nil || len(res.Contents) != 1 || res.Contents[0].Text != "read by b" {
		t.Errorf("read skill://b/ref.md: %+v %v, want b's answer", res, err)
	}
	if got := a.reads(); len(got) != 0 {
		t.Errorf("a was asked %q, want nothing", got)
	}
	// (No server's directory: every skill server asked, both answer,
	// none chosen.)
	if _, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "skill://other/x.md"}); err == nil {
		t.Error("read skill://other/x.md: no error, want not found (several servers can)")
	}
	if got := a.reads(); len(got) != 1 {
		t.Errorf("a was asked %q, want skill://other/x.md", got)
	}
}
