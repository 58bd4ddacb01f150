package gateway_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/audit"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/gateway"
	"github.com/mcphost/mcphost/host/gateway/streamable"
	"github.com/mcphost/mcphost/host/permissions"
	"github.com/mcphost/mcphost/internal/testing/fakeas"
	"github.com/mcphost/mcphost/internal/testing/syncbuf"
)

// hiddenGateway is a gateway over demo server a whose tools block leaves
// out "large", where the rules deny alice "crash", and over "prot", an
// OAuth server whose logins are per user (alice has none: her view of it
// is its authenticate pseudo-tool, its "whoami" hidden), with an audit log.
func hiddenGateway(t *testing.T) (*gateway.Gateway, *audit.Log, *syncbuf.Buffer) {
	t.Helper()
	return hiddenGatewayWith(t, gateway.Options{})
}

// hiddenGatewayWith is hiddenGateway with gateway options (Audit is set).
func hiddenGatewayWith(t *testing.T, gopts gateway.Options) (*gateway.Gateway, *audit.Log, *syncbuf.Buffer) {
	t.Helper()
	return hiddenGatewayProt(t, gopts, nil)
}

// hiddenGatewayProt is hiddenGatewayWith with prot's tools block.
func hiddenGatewayProt(t *testing.T, gopts gateway.Options, protTools *config.ToolFilter) (*gateway.Gateway, *audit.Log, *syncbuf.Buffer) {
	t.Helper()
	a := demo("a")
	a.Tools = &config.ToolFilter{Exclude: []string{"large"}}
	as := fakeas.New()
	t.Cleanup(as.Close)
	prot := &config.Server{Name: "prot", Transport: config.TransportHTTP, URL: as.URL(), OAuth: &config.OAuth{PerUser: true, AllowLoopback: true}, Origin: config.Origin{Scope: config.ScopeUser, File: "u.hcl"}, Approved: true,
		Tools: protTools}
	deny := config.PermissionRule{Behavior: permissions.Deny, Pattern: "mcp__a__crash",
		For: &permissions.Principals{Subjects: []string{"alice"}}, Origin: config.Origin{Scope: config.ScopeUser, File: "u.hcl"}}
	ctx, cancel := context.WithCancel(context.Background())
	h, err := host.New(&config.Config{Servers: []*config.Server{a, prot}, Permissions: []config.PermissionRule{deny}, DefaultMode: "allow_all"},
		&host.Options{OutputDir: t.TempDir(), PresentAuthURL: func(context.Context, string) error { return nil }})
	if err != nil {
		t.Fatal(err)
	}
	h.ConnectAll(ctx, nil)
	var buf syncbuf.Buffer
	log := audit.New(&buf, nil)
	gopts.Audit = log
	g := gateway.New(h, &gopts)
	t.Cleanup(func() { g.Close() })
	g.Sync(ctx) // (prot's problem: it needs a login)
	t.Cleanup(func() {
		cancel()
		h.Close()
		log.Close(context.Background())
	})
	return g, log, &buf
}

// answerOf is the JSON-RPC message of an HTTP answer: the body, or the
// data of its one event.
func answerOf(body string) string {
	for _, line := range strings.Split(body, "\n") {
		if d, ok := strings.CutPrefix(line, "data: "); ok {
			return strings.TrimSpace(d)
		}
	}
	return strings.TrimSpace(body)
}

// auditLines closes the log and returns its tools/call records.
func auditLines(t *testing.T, log *audit.Log, buf *syncbuf.Buffer) []audit.Record {
	t.Helper()
	if err := log.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	var out []audit.Record
	for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		if line == "" {
			continue
		}
		var r audit.Record
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("audit line %q: %v", line, err)
		}
		if r.Event == audit.EventToolCall {
			out = append(out, r)
		}
	}
	return out
}

// TestHiddenToolAnsweredAsUnknown (issue 33, items 9 and 14): a call of a
// tool hidden from the caller — denied to it by the rules, or left out by
// its server's tools block — gets byte for byte the answer (JSON-RPC code
// and message, HTTP status) of a call of a name that names nothing, on
// every path: the relay's and the go-sdk server's, over stdio and HTTP, for
// clients of 2025-11-25 and 2026-07-28; a per-user server's tool missing
// from the caller's own view, or from the server, too. That answer is the go-sdk's for an
// unknown tool (-32602). Each call has one audit line: a hidden tool's with
// the rule that hid it, an unknown name's with decision "unknown".
func TestHiddenToolAnsweredAsUnknown(t *testing.T) {
	t.Parallel()
	const missing = "mcp__a__no_such_tool"
	for _, tc := range []struct {
		name   string
		hidden []string // hidden from the caller (or, on a per-user server, missing)
		meta   string   // the request's params._meta members
		call   func(t *testing.T, g *gateway.Gateway, body, name string) rpcAnswer
	}{
		{name: "http 2025-11-25 relay", hidden: []string{"mcp__a__crash", "mcp__a__large", "mcp__prot__whoami", "mcp__prot__no_such_tool"}, call: httpSessionCall()},
		{name: "http 2025-11-25 go-sdk", hidden: []string{"mcp__a__crash", "mcp__a__large", "mcp__prot__whoami", "mcp__prot__no_such_tool"}, meta: `"progressToken":"p"`, call: httpSessionCall()},
		{name: "http 2026-07-28 relay", hidden: []string{"mcp__a__crash", "mcp__a__large", "mcp__prot__whoami", "mcp__prot__no_such_tool"},
			meta: `"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}`, call: httpStatelessCall},
		{name: "http 2026-07-28 go-sdk", hidden: []string{"mcp__a__crash", "mcp__a__large", "mcp__prot__whoami", "mcp__prot__no_such_tool"},
			meta: `"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"progressToken":"p"`, call: httpStatelessCall},
		// (stdio has no gateway users: the rules hide nothing there.)
		{name: "stdio relay", hidden: []string{"mcp__a__large"}, call: stdioCall()},
		{name: "stdio go-sdk", hidden: []string{"mcp__a__large"}, meta: `"progressToken":"p"`, call: stdioCall()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			g, log, buf := hiddenGateway(t)
			want := tc.call(t, g, callBody(7, missing, tc.meta), missing)
			if !strings.Contains(want.body, `"code":-32602`) || !strings.Contains(want.body, fmt.Sprintf(`unknown tool \"%s\"`, missing)) {
				t.Fatalf("a missing tool's answer: %d %s, want -32602 unknown tool", want.status, want.body)
			}
			for _, name := range tc.hidden {
				got := tc.call(t, g, callBody(7, name, tc.meta), name)
				if got.status != want.status || strings.ReplaceAll(got.body, name, missing) != want.body {
					t.Errorf("hidden %s: %d %s\nmissing:      %d %s", name, got.status, got.body, want.status, want.body)
				}
			}
			recs := auditLines(t, log, buf)
			if len(recs) != 1+len(tc.hidden) {
				t.Fatalf("%d audit lines for %d calls: %+v", len(recs), 1+len(tc.hidden), recs)
			}
			for _, r := range recs {
				wantDecision, wantOutcome := audit.DecisionUnknown, audit.OutcomeNotFound
				if r.Tool == "mcp__a__crash" {
					wantDecision, wantOutcome = audit.DecisionDeny, audit.OutcomeDenied
				}
				if r.Decision != wantDecision || r.Outcome != wantOutcome {
					t.Errorf("audit line of %s: decision %q, outcome %q; want %q, %q", r.Tool, r.Decision, r.Outcome, wantDecision, wantOutcome)
				}
			}
		})
	}
}

// TestHiddenToolThroughToolSearch: under --tool-search, call_tool of a
// tool hidden from the caller answers as call_tool of a name never found.
func TestHiddenToolThroughToolSearch(t *testing.T) {
	t.Parallel()
	g, _, _ := hiddenGatewayWith(t, gateway.Options{ToolSearch: true})
	call := httpSessionCall()
	search := func(name string) rpcAnswer {
		return call(t, g, fmt.Sprintf(`{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":%q,"arguments":{"name":%q,"arguments":{}}}}`, gateway.CallToolName, name), gateway.CallToolName)
	}
	want := search("mcp__a__no_such_tool")
	if !strings.Contains(want.body, `no tool \"mcp__a__no_such_tool\"`) {
		t.Fatalf("call_tool of a missing tool: %d %s", want.status, want.body)
	}
	for _, name := range []string{"mcp__a__crash", "mcp__a__large"} {
		got := search(name)
		if got.status != want.status || strings.ReplaceAll(got.body, name, "mcp__a__no_such_tool") != want.body {
			t.Errorf("call_tool of hidden %s: %d %s\nof a missing one:  %d %s", name, got.status, got.body, want.status, want.body)
		}
	}
}

// callBody is a tools/call request.
func callBody(id int, name, meta string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":{}%s}}`, id, name, map[bool]string{true: `,"_meta":{` + meta + `}`}[meta != ""])
}

// rpcAnswer is an answer's HTTP status (0 on stdio) and JSON-RPC message.
type rpcAnswer struct {
	status int
	body   string
}

// aliceServer serves g over HTTP with inbound OAuth, alice its one user.
func aliceServer(t *testing.T, g *gateway.Gateway) string {
	t.Helper()
	return usersServer(t, g, "alice")
}

// usersServer is aliceServer where each of users is a user (the bearer
// token of each is its name).
func usersServer(t *testing.T, g *gateway.Gateway, users ...string) string {
	t.Helper()
	srv := httptest.NewServer(streamable.New(g).Handler(&streamable.Options{OAuth: &streamable.InboundOAuth{Verify: gateway.UsersVerifier(users...), Resource: "http://gateway.example/mcp"}}))
	t.Cleanup(func() {
		srv.CloseClientConnections()
		srv.Close()
	})
	return srv.URL
}

// httpSessionCall returns a caller over one 2025-11-25 session of alice's,
// opened on first use.
func httpSessionCall() func(t *testing.T, g *gateway.Gateway, body, name string) rpcAnswer {
	var url, sid string
	return func(t *testing.T, g *gateway.Gateway, body, name string) rpcAnswer {
		t.Helper()
		auth := map[string]string{"Authorization": "Bearer alice"}
		if url == "" {
			url = aliceServer(t, g)
			resp, _ := post(t, url, strings.Replace(initialize, "2025-06-18", "2025-11-25", 1), auth)
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("initialize: %s", resp.Status)
			}
			sid = resp.Header.Get("Mcp-Session-Id")
			post(t, url, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, map[string]string{"Authorization": "Bearer alice", "Mcp-Session-Id": sid, "Mcp-Protocol-Version": "2025-11-25"})
		}
		resp, answer := post(t, url, body, map[string]string{"Authorization": "Bearer alice", "Mcp-Session-Id": sid, "Mcp-Protocol-Version": "2025-11-25"})
		return rpcAnswer{resp.StatusCode, answerOf(answer)}
	}
}

// httpStatelessCall calls as a 2026-07-28 client of alice's.
func httpStatelessCall(t *testing.T, g *gateway.Gateway, body, name string) rpcAnswer {
	t.Helper()
	resp, answer := post(t, aliceServer(t, g), body, map[string]string{"Authorization": "Bearer alice",
		"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": name})
	return rpcAnswer{resp.StatusCode, answerOf(answer)}
}

// stdioCall returns a caller over one stdio connection, initialized on
// first use.
func stdioCall() func(t *testing.T, g *gateway.Gateway, body, name string) rpcAnswer {
	var w io.WriteCloser
	var r *bufio.Reader
	return func(t *testing.T, g *gateway.Gateway, body, _ string) rpcAnswer {
		t.Helper()
		send := func(line string) {
			if _, err := io.WriteString(w, line+"\n"); err != nil {
				t.Fatal(err)
			}
		}
		recv := func() string {
			type res struct {
				line string
				err  error
			}
			ch := make(chan res, 1)
			go func() {
				l, err := r.ReadString('\n')
				ch <- res{l, err}
			}()
			select {
			case got := <-ch:
				if got.err != nil {
					t.Fatal(got.err)
				}
				return strings.TrimSpace(got.line)
			case <-time.After(10 * time.Second):
				t.Fatal("no answer on stdio")
			}
			return ""
		}
		if w == nil {
			var out io.ReadCloser
			w, out = servePipes(t, g)
			r = bufio.NewReader(out)
			send(strings.Replace(initialize, "2025-06-18", "2025-11-25", 1))
			recv()
			send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		}
		send(body)
		return rpcAnswer{0, recv()}
	}
}
