package gateway_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/audit"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/gateway"
	"github.com/mcphost/mcphost/host/gateway/streamable"
	"github.com/mcphost/mcphost/host/state"
	"github.com/mcphost/mcphost/internal/testing/syncbuf"
)

// auditGateway is a gateway over demo server a with rules and an audit log.
func auditGateway(t *testing.T, rules ...config.PermissionRule) (*gateway.Gateway, *audit.Log, *syncbuf.Buffer) {
	t.Helper()
	g, log, buf, _ := auditGatewayBlocking(t, rules...)
	return g, log, buf
}

// auditGatewayBlocking is auditGateway with an in-process server b too,
// whose tool wait (mcp__b__wait) answers once release is closed.
func auditGatewayBlocking(t *testing.T, rules ...config.PermissionRule) (*gateway.Gateway, *audit.Log, *syncbuf.Buffer, chan struct{}) {
	t.Helper()
	release := make(chan struct{})
	b := mcp.NewServer(&mcp.Implementation{Name: "b", Version: "1"}, nil)
	b.AddTool(&mcp.Tool{Name: "wait", InputSchema: map[string]any{"type": "object"}}, func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		select {
		case <-release:
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "released"}}}, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	})
	bs := config.InProcessServer("b")
	bs.Approved = true
	ctx, cancel := context.WithCancel(context.Background())
	h, err := host.New(&config.Config{Servers: []*config.Server{demo("a"), bs}, Permissions: rules, DefaultMode: "allow_all"}, &host.Options{OutputDir: t.TempDir(),
		InProcess:          map[string]*mcp.Server{"b": b},
		ClientCapabilities: &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{Form: &mcp.FormElicitationCapabilities{}}}})
	if err != nil {
		t.Fatal(err)
	}
	h.ConnectAll(ctx, nil)
	var buf syncbuf.Buffer
	log := audit.New(&buf, nil)
	g := gateway.New(h, &gateway.Options{Audit: log})
	t.Cleanup(func() { g.Close() })
	if p := g.Sync(ctx); len(p) > 0 {
		t.Fatal(p)
	}
	t.Cleanup(func() {
		cancel()
		h.Close()
		log.Close(context.Background())
	})
	return g, log, &buf, release
}

// allRecords closes the log and returns its records.
func allRecords(t *testing.T, log *audit.Log, buf *syncbuf.Buffer) []audit.Record {
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
		out = append(out, r)
	}
	return out
}

// TestRefusedRequestsAudited (issue 33, item 14): a request refused before
// any method ran — a body that fails the strict JSON scan, one over the size
// limit, on HTTP or stdio — has exactly one audit line, with its status and
// a fixed reason, and nothing of the body.
func TestRefusedRequestsAudited(t *testing.T) {
	t.Parallel()
	const canary = "BODY-CANARY-77"
	for _, tc := range []struct {
		name   string
		send   func(t *testing.T, g *gateway.Gateway, release chan struct{})
		status int
		reason string
	}{
		{"http duplicate key", func(t *testing.T, g *gateway.Gateway, _ chan struct{}) {
			srv := httptest.NewServer(streamable.New(g).Handler(nil))
			defer srv.Close()
			resp, _ := post(t, srv.URL, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"mcp__a__echo","Name":"`+canary+`"}}`, nil)
			if resp.StatusCode != http.StatusBadRequest {
				t.Fatalf("status %s", resp.Status)
			}
		}, http.StatusBadRequest, "strict JSON: duplicate or case-variant member names"},
		{"http concatenated", func(t *testing.T, g *gateway.Gateway, _ chan struct{}) {
			srv := httptest.NewServer(streamable.New(g).Handler(nil))
			defer srv.Close()
			resp, _ := post(t, srv.URL, `{"jsonrpc":"2.0","id":2,"method":"ping"}{"`+canary+`":1}`, nil)
			if resp.StatusCode != http.StatusBadRequest {
				t.Fatalf("status %s", resp.Status)
			}
		}, http.StatusBadRequest, "strict JSON: parse error"},
		{"http too large", func(t *testing.T, g *gateway.Gateway, _ chan struct{}) {
			srv := httptest.NewServer(streamable.New(g).Handler(nil))
			defer srv.Close()
			resp, _ := post(t, srv.URL, `{"jsonrpc":"2.0","id":2,"method":"ping","params":{"x":"`+canary+strings.Repeat("x", gateway.MaxMessageBytes)+`"}}`, nil)
			if resp.StatusCode != http.StatusRequestEntityTooLarge {
				t.Fatalf("status %s", resp.Status)
			}
		}, http.StatusRequestEntityTooLarge, "request body too large"},
		{"http body cut short", func(t *testing.T, g *gateway.Gateway, _ chan struct{}) {
			srv := httptest.NewServer(streamable.New(g).Handler(nil))
			defer srv.Close()
			// The client goes away (its half of the connection closed)
			// before its body's announced length.
			if resp := rawPost(t, srv.Listener.Addr().String(), `{"jsonrpc":"2.0","id":2,"method":"ping","params":{"`+canary, true); resp.StatusCode != http.StatusBadRequest {
				t.Fatalf("status %s", resp.Status)
			}
		}, http.StatusBadRequest, "request body could not be read"},
		{"http body not in time", func(t *testing.T, g *gateway.Gateway, _ chan struct{}) {
			srv := httptest.NewServer(streamable.New(g).Handler(&streamable.Options{BodyTimeout: 100 * time.Millisecond}))
			defer srv.Close()
			if resp := rawPost(t, srv.Listener.Addr().String(), `{"jsonrpc":"2.0","id":2,"method":"ping","params":{"`+canary, false); resp.StatusCode != http.StatusBadRequest {
				t.Fatalf("status %s", resp.Status)
			}
		}, http.StatusBadRequest, "request body not read in time"},
		{"stdio duplicate key", func(t *testing.T, g *gateway.Gateway, _ chan struct{}) {
			w, r := servePipes(t, g)
			io.WriteString(w, `{"jsonrpc":"2.0","id":2,"method":"ping","id":3,"params":{"`+canary+`":1}}`+"\n")
			line := make([]byte, 4096)
			if n, err := r.Read(line); err != nil || !strings.Contains(string(line[:n]), "-32600") {
				t.Fatalf("answer %q %v", line[:n], err)
			}
		}, 0, "strict JSON: duplicate or case-variant member names"},
		{"stdio not JSON-RPC", func(t *testing.T, g *gateway.Gateway, _ chan struct{}) {
			w, r := servePipes(t, g)
			io.WriteString(w, `{"jsonrpc":"1.0","id":2,"method":"ping","params":{"`+canary+`":1}}`+"\n")
			line := make([]byte, 4096)
			if n, err := r.Read(line); err != nil || !strings.Contains(string(line[:n]), "-32600") {
				t.Fatalf("answer %q %v", line[:n], err)
			}
		}, 0, "not a JSON-RPC 2.0 message"},
		{"stdio duplicate id", func(t *testing.T, g *gateway.Gateway, release chan struct{}) {
			w, r := servePipes(t, g)
			br := bufio.NewReader(r)
			io.WriteString(w, strings.Replace(initialize, "2025-06-18", "2025-11-25", 1)+"\n")
			br.ReadString('\n')
			io.WriteString(w, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n")
			// Id 5 is in flight until release is closed.
			io.WriteString(w, `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"mcp__b__wait","arguments":{}}}`+"\n")
			io.WriteString(w, `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"mcp__a__echo","arguments":{"message":"`+canary+`"}}}`+"\n")
			if line, err := br.ReadString('\n'); err != nil || !strings.Contains(line, "already in flight") {
				t.Fatalf("answer %q %v, want already in flight", line, err)
			}
			close(release)
			if line, err := br.ReadString('\n'); err != nil || !strings.Contains(line, `"result"`) || !strings.Contains(line, "released") {
				t.Fatalf("answer %q %v, want the waiting call's result", line, err)
			}
		}, 0, "a request with this id is in flight"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			g, log, buf, release := auditGatewayBlocking(t)
			tc.send(t, g, release)
			var recs []audit.Record
			for _, r := range allRecords(t, log, buf) {
				if r.Event != audit.EventToolCall || r.Tool != "mcp__b__wait" { // (the call in flight has its own)
					recs = append(recs, r)
				}
			}
			if len(recs) != 1 {
				t.Fatalf("%d audit lines, want 1: %+v", len(recs), recs)
			}
			if r := recs[0]; r.Event != audit.EventRefused || r.Status != tc.status || r.Reason != tc.reason || r.Outcome != audit.OutcomeError {
				t.Errorf("audit line %+v, want refused, status %d, reason %q", r, tc.status, tc.reason)
			}
			if strings.Contains(buf.String(), canary) {
				t.Error("the audit line holds the body")
			}
		})
	}
}

// failingPuts is a shared state whose writes fail once failing is set: a
// replica whose state (Redis) has gone away. (A wrapper, not a stopped
// redis-server: the gateway must first start on the state, then lose it
// for one request, and only its writes matter here.)
type failingPuts struct {
	state.Backend
	failing atomic.Bool
}

func (s *failingPuts) Put(ctx context.Context, key string, value []byte, ttl time.Duration) error {
	if s.failing.Load() {
		return errors.New("the shared state is gone")
	}
	return s.Backend.Put(ctx, key, value, ttl)
}

// TestSessionOpenFailureAudited: an initialize whose session cannot be
// opened (its record not written to the shared state) is answered 503 and
// has one audit line, a refusal with that status.
func TestSessionOpenFailureAudited(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	h, err := host.New(&config.Config{Servers: []*config.Server{demo("a")}, DefaultMode: "allow_all"}, &host.Options{OutputDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	local, err := state.NewLocal(nil, "")
	if err != nil {
		t.Fatal(err)
	}
	st := &failingPuts{Backend: local}
	var buf syncbuf.Buffer
	log := audit.New(&buf, nil)
	g := gateway.New(h, &gateway.Options{Audit: log, State: st})
	t.Cleanup(func() { g.Close() })
	t.Cleanup(func() {
		cancel()
		h.Close()
		log.Close(context.Background())
	})
	h.ConnectAll(ctx, nil)
	if p := g.Sync(ctx); len(p) > 0 {
		t.Fatal(p)
	}
	srv := httptest.NewServer(streamable.New(g).Handler(nil))
	defer srv.Close()
	st.failing.Store(true)
	if resp, body := post(t, srv.URL, initialize, nil); resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("initialize: %s %s, want 503", resp.Status, body)
	}
	recs := allRecords(t, log, &buf)
	if len(recs) != 1 {
		t.Fatalf("%d audit lines, want 1: %+v", len(recs), recs)
	}
	if r := recs[0]; r.Event != audit.EventRefused || r.Status != http.StatusServiceUnavailable || r.Reason != "session could not be opened" || r.Outcome != audit.OutcomeError {
		t.Errorf("audit line %+v, want refused, 503", r)
	}
}

// rawPost sends a POST to addr announcing a 1,000-byte body and sending
// only part, then (closeWrite) closes its half of the connection or
// (!closeWrite) waits, and returns the gateway's answer.
func rawPost(t *testing.T, addr, part string, closeWrite bool) *http.Response {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "POST / HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 1000\r\n\r\n%s", part)
	if closeWrite {
		c.(*net.TCPConn).CloseWrite()
	}
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp
}

// TestAskDecisionAudited (issue 33, item 14): each round of a call of an
// ask tool has one audit line recording the decision the gate applied
// (decided once, by the gate; not decided again for the line): the first,
// answered with the gateway's question, "ask"; the retry carrying the
// client's answer "allow" (approved by the client) or "deny" (declined).
// (For a client before 2026-07-28 the go-sdk server asks by
// elicitation/create and runs the call's handler again with the answer:
// two rounds of one request.)
func TestAskDecisionAudited(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		version  string
		answer   string
		decision string
		outcome  string
		reason   string
	}{
		{"approved", newProtocol, "allow", audit.DecisionAllow, audit.OutcomeOK, "approved by the client"},
		{"declined", newProtocol, "deny", audit.DecisionDeny, audit.OutcomeDenied, "declined by the client"},
		{"approved by elicitation/create", oldProtocol, "allow", audit.DecisionAllow, audit.OutcomeOK, "approved by the client"},
		{"declined by elicitation/create", oldProtocol, "deny", audit.DecisionDeny, audit.OutcomeDenied, "declined by the client"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			g, log, buf := auditGateway(t, askEcho)
			w, r := servePipes(t, g)
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "ask"}, &mcp.ClientOptions{
				ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
					return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"decision": tc.answer}}, nil
				}}).Connect(context.Background(), &mcp.IOTransport{Reader: r, Writer: w}, &mcp.ClientSessionOptions{ProtocolVersion: tc.version})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "mcp__a__echo", Arguments: map[string]any{"message": "m"}}); err != nil {
				t.Fatal(err)
			}
			cs.Close()
			recs := allRecords(t, log, buf)
			if len(recs) != 2 {
				t.Fatalf("%d audit lines for the call and its retry, want 2: %+v", len(recs), recs)
			}
			if r := recs[0]; r.Decision != audit.DecisionAsk || r.Outcome != audit.OutcomeDenied || r.Reason != "approval asked of the client" || !strings.Contains(r.Rule, `ask "mcp__a__echo"`) {
				t.Errorf("the question's line: %+v", r)
			}
			if r := recs[1]; r.Decision != tc.decision || r.Outcome != tc.outcome || r.Reason != tc.reason || !strings.Contains(r.Rule, `ask "mcp__a__echo"`) {
				t.Errorf("the retry's line: decision %q, outcome %q, reason %q, rule %q; want %q, %q, %q and the ask rule", r.Decision, r.Outcome, r.Reason, r.Rule, tc.decision, tc.outcome, tc.reason)
			}
		})
	}
}

// TestUndecidedCallAudited: a tool call that ends before the gate decides
// (here: its request state is not the gateway's) has decision "none", not
// an empty one.
func TestUndecidedCallAudited(t *testing.T) {
	t.Parallel()
	g, log, buf := auditGateway(t, askEcho)
	w, r := servePipes(t, g)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "undecided"}, nil).Connect(context.Background(),
		&mcp.IOTransport{Reader: r, Writer: w}, &mcp.ClientSessionOptions{ProtocolVersion: newProtocol})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "mcp__a__echo", Arguments: map[string]any{"message": "m"},
		RequestState: "bm90IHRoZSBnYXRld2F5J3M"}); err == nil || !strings.Contains(err.Error(), "invalid requestState") {
		t.Fatalf("the call: %v, want an invalid requestState error", err)
	}
	cs.Close()
	recs := allRecords(t, log, buf)
	if len(recs) != 1 {
		t.Fatalf("%d audit lines, want 1: %+v", len(recs), recs)
	}
	if r := recs[0]; r.Decision != audit.DecisionNone || r.Rule != "" || r.Outcome != audit.OutcomeError || r.Tool != "mcp__a__echo" {
		t.Errorf("audit line %+v, want decision %q, outcome error", r, audit.DecisionNone)
	}
}
