package conn

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/internal/demoserver"
)

// answerer is a caller whose client answers elicitations (accepting with
// answer) and records what it was asked. With hold set, it waits for hold
// to close first, after telling asked.
type answerer struct {
	name   string
	answer string
	hold   chan struct{}
	asked  chan *mcp.ElicitParams
}

func newAnswerer(name, answer string) *answerer {
	return &answerer{name: name, answer: answer, asked: make(chan *mcp.ElicitParams, 10)}
}

func (a *answerer) Capabilities() *mcp.ClientCapabilities {
	return &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{Form: &mcp.FormElicitationCapabilities{}}}
}
func (a *answerer) Elicit(ctx context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	a.asked <- p
	if a.hold != nil {
		select {
		case <-a.hold:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	if a.answer == "" {
		return &mcp.ElicitResult{Action: "decline"}, nil
	}
	return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"answer": a.answer}}, nil
}
func (a *answerer) CreateMessage(context.Context, *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
	return nil, errUnsupported("sampling")
}
func (a *answerer) ListRoots(context.Context, *mcp.ListRootsParams) (*mcp.ListRootsResult, error) {
	return nil, errUnsupported("roots")
}

// gatewayCaps are the client capabilities a gateway offers servers of
// versions before 2026-07-28 (what its clients may answer).
var gatewayCaps = &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{Form: &mcp.FormElicitationCapabilities{}}}

// httpDemo is the demo server (with -passthrough) over streamable HTTP on
// loopback, as a server of both protocol eras would serve it on one
// endpoint: 2026-07-28 requests statelessly (the go-sdk serves that version
// over HTTP only so), earlier versions with sessions, where the server may
// send requests of its own. (The go-sdk has no one handler for both.)
func httpDemo(t *testing.T, name string) *config.Server {
	srv := demoserver.New(&demoserver.Options{Name: name, Passthrough: true})
	stateful := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	stateless := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{Stateless: true})
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Mcp-Protocol-Version") >= NewProtocol {
			stateless.ServeHTTP(w, r)
			return
		}
		stateful.ServeHTTP(w, r)
	}))
	t.Cleanup(func() { hs.CloseClientConnections(); hs.Close() })
	return &config.Server{Name: name, Transport: config.TransportHTTP, URL: hs.URL, Approved: true, ConnectTimeout: 5 * time.Second}
}

func text(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// TestLegacySession: the demo server's ask_old elicits by a request of its
// own, which the go-sdk refuses on the 2026-07-28 session mcphost opens.
// With legacy_session (on by default), a caller of 2025-11-25 gets its
// answer asked through a second session of that version (for a stdio
// server, a second process, which ends with the Manager); with
// legacy_session = false, nothing else is started.
func TestLegacySession(t *testing.T) {
	t.Parallel()
	withLegacy := func(s *config.Server) *config.Server { s.LegacySession = new(true); return s }
	withoutLegacy := func(s *config.Server) *config.Server { s.LegacySession = new(false); return s }
	for _, tc := range []struct {
		name      string
		cfg       *config.Server
		works     bool // a 2025-11-25 caller's ask_old is answered
		processes int  // stdio processes started (-1: remote)
	}{
		{"remote", httpDemo(t, "h"), true, -1}, // legacy_session: on by default
		{"remote with legacy_session", withLegacy(httpDemo(t, "h")), true, -1},
		{"remote with legacy_session = false", withoutLegacy(httpDemo(t, "h")), false, -1},
		{"stdio", demo("d", "-passthrough"), true, 2},
		{"stdio with legacy_session", withLegacy(demo("d", "-passthrough")), true, 2},
		{"stdio with legacy_session = false", withoutLegacy(demo("d", "-passthrough")), false, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var mu sync.Mutex
			var pids []int
			m := NewManager([]*config.Server{tc.cfg}, &Options{Capabilities: gatewayCaps, OnProcessStart: func(_ string, pid int) {
				mu.Lock()
				pids = append(pids, pid)
				mu.Unlock()
			}})
			t.Cleanup(func() { m.Close() })
			ctx := context.Background()
			ask := func(version string, r Requester) (*mcp.CallToolResult, error) {
				return m.Call(ctx, tc.cfg.Name, &mcp.CallToolParams{Name: "ask_old", Arguments: map[string]any{"question": "name?"}},
					&CallOptions{Requester: r, ClientVersion: version})
			}
			// This host's own calls use the server's session (2026-07-28),
			// where ask_old cannot ask.
			if res, err := ask("", newAnswerer("host", "x")); err == nil && !res.IsError {
				t.Fatalf("ask_old answered on the 2026-07-28 session: %s", text(res))
			}
			for range 2 {
				alice := newAnswerer("alice", "yes")
				res, err := ask("2025-11-25", alice)
				worked := err == nil && !res.IsError && text(res) == "answer: yes (mood: calm)"
				if worked != tc.works {
					t.Fatalf("2025-11-25 caller: result %q, error %v; want answered: %v", resultText(res), err, tc.works)
				}
			}
			mu.Lock()
			n := len(pids)
			started := append([]int(nil), pids...)
			mu.Unlock()
			if tc.processes >= 0 && n != tc.processes {
				t.Fatalf("%d processes started, want %d", n, tc.processes)
			}
			// The second process is shown in the server's status.
			if st := m.Status()[0]; tc.processes == 2 && (st.LegacyPID != started[1] || st.PID != started[0]) {
				t.Fatalf("status shows pid %d and second pid %d, want %d and %d", st.PID, st.LegacyPID, started[0], started[1])
			} else if tc.processes < 2 && st.LegacyPID != 0 {
				t.Fatalf("status shows a second pid %d", st.LegacyPID)
			}
			m.Close()
			for _, pid := range started {
				waitDead(t, pid, 5*time.Second)
			}
		})
	}
}

// TestLegacySessionOneClientAtATime: on the second session of a stdio
// server its requests name no call, so a call goes there only while no
// other client's call is in flight on it: a call of another client waits
// (and fails clearly when its deadline comes first; after legacyWait the
// first session serves it), then goes there and is asked there by the
// server's request. (Before, it went to the first session at once, where a
// tool that asks by a request fails.)
func TestLegacySessionOneClientAtATime(t *testing.T) {
	t.Parallel()
	cfg := demo("d", "-passthrough")
	cfg.LegacyPool = 1 // (one second session: TestLegacySessionPool has more)
	// (A shorter wait than the default: the test waits it out once.)
	const wait = 500 * time.Millisecond
	m := NewManager([]*config.Server{cfg}, &Options{Capabilities: gatewayCaps, LegacyWait: wait}) // legacy_session: on by default
	t.Cleanup(func() { m.Close() })
	ctx := context.Background()
	call := func(ctx context.Context, tool string, r Requester) (*mcp.CallToolResult, error) {
		return m.Call(ctx, cfg.Name, &mcp.CallToolParams{Name: tool, Arguments: map[string]any{}}, &CallOptions{Requester: r, ClientVersion: "2025-11-25"})
	}

	alice := newAnswerer("alice", "from alice")
	alice.hold = make(chan struct{})
	var release sync.Once
	t.Cleanup(func() { release.Do(func() { close(alice.hold) }) }) // a failed check must not leave alice's call waiting
	done := make(chan string, 1)
	go func() {
		res, err := call(ctx, "ask_old", alice)
		if err != nil {
			done <- err.Error()
			return
		}
		done <- text(res)
	}()
	select {
	case <-alice.asked: // alice's call waits for her answer on the second session
	case <-time.After(10 * time.Second):
		t.Fatal("alice was not asked")
	}

	// bob's call waits for alice's; its deadline ends the wait, clearly.
	bob := newAnswerer("bob", "from bob")
	short, cancel := context.WithTimeout(ctx, wait/5)
	_, err := call(short, "ask_old", bob)
	cancel()
	if err == nil || !strings.Contains(err.Error(), "another client's call is in flight") || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("bob's call while alice's is in flight, with a short deadline: %v; want the wait's error", err)
	}
	if len(bob.asked) != 0 {
		t.Fatal("bob was asked by a request on the second session while alice's call was in flight there")
	}

	// Not forever: after legacyWait the first session serves bob's call,
	// where ask asks by an input-required result (and ask_old would fail).
	res, err := call(ctx, "ask", bob)
	if err != nil || res.InputRequests == nil || len(bob.asked) != 0 {
		t.Fatalf("bob's call after waiting %s: %q, %v; want the first session's input-required result", wait, resultText(res), err)
	}

	// A call of bob's that waits long enough goes there once alice's ends.
	bobDone := make(chan string, 1)
	go func() {
		res, err := call(ctx, "ask_old", bob)
		if err != nil {
			bobDone <- err.Error()
			return
		}
		bobDone <- text(res)
	}()
	release.Do(func() { close(alice.hold) })
	if got := <-done; got != "answer: from alice (mood: calm)" {
		t.Fatalf("alice's call: %q", got)
	}
	if got := <-bobDone; got != "answer: from bob (mood: calm)" || len(bob.asked) != 1 {
		t.Fatalf("bob's call after alice's: %q (asked %d times)", got, len(bob.asked))
	}
}

// enumsServer elicits the form of the official suite's SEP-1330 scenario,
// as go-sdk's reference server sends it: a titled multi-select whose items
// carry "type": "string" next to anyOf, which the go-sdk client refuses.
func enumsServer() *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "enums"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "pick"}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		er, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Message: "pick", RequestedSchema: map[string]any{
			"type": "object",
			"properties": map[string]any{
				"titledMulti": map[string]any{
					"type": "array",
					"items": map[string]any{
						"type":  "string",
						"anyOf": []map[string]any{{"const": "v1", "title": "One"}, {"const": "v2", "title": "Two"}},
					},
				},
			},
		}})
		if err != nil {
			return nil, nil, err
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "action " + er.Action}}}, nil, nil
	})
	return srv
}

// TestElicitationSchemaReachesTheCaller: an elicitation whose schema the
// go-sdk client would refuse reaches the caller's client unchanged (it is
// the client's to judge; the official suite's elicitation-sep1330-enums
// failed through the gateway), over streamable HTTP and SSE.
func TestElicitationSchemaReachesTheCaller(t *testing.T) {
	t.Parallel()
	streamable := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return enumsServer() }, nil))
	sse := httptest.NewServer(mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return enumsServer() }, nil))
	t.Cleanup(func() {
		for _, s := range []*httptest.Server{streamable, sse} {
			s.CloseClientConnections()
			s.Close()
		}
	})
	for _, cfg := range []*config.Server{
		{Name: "h", Transport: config.TransportHTTP, URL: streamable.URL, Approved: true, ConnectTimeout: 5 * time.Second},
		{Name: "s", Transport: config.TransportSSE, URL: sse.URL, Approved: true, ConnectTimeout: 5 * time.Second},
	} {
		t.Run(cfg.Transport, func(t *testing.T) {
			t.Parallel()
			m := NewManager([]*config.Server{cfg}, &Options{Capabilities: gatewayCaps})
			t.Cleanup(func() { m.Close() })
			carol := newAnswerer("carol", "") // declines
			res, err := m.Call(context.Background(), cfg.Name, &mcp.CallToolParams{Name: "pick", Arguments: map[string]any{}},
				&CallOptions{Requester: carol, ClientVersion: "2025-11-25"})
			if err != nil {
				t.Fatal(err)
			}
			if text(res) != "action decline" {
				t.Fatalf("result %q; want the caller's decline", text(res))
			}
			p := <-carol.asked
			b, _ := json.Marshal(p.RequestedSchema)
			if !strings.Contains(string(b), `"anyOf":[{"const":"v1","title":"One"}`) {
				t.Fatalf("the caller was asked with schema %s", b)
			}
			if _, found := p.Meta[schemaKey]; found {
				t.Fatalf("the caller sees mcphost's %s", schemaKey)
			}
		})
	}
}

// TestCheckContent: an accepted answer is checked against its schema, and
// gets the schema's defaults, as the go-sdk client would do.
func TestCheckContent(t *testing.T) {
	t.Parallel()
	schema := map[string]any{
		"type": "object",
		"properties": map[string]any{
			"answer": map[string]any{"type": "string"},
			"mood":   map[string]any{"type": "string", "default": "calm"},
		},
		"required": []any{"answer"},
	}
	for _, tc := range []struct {
		name    string
		schema  any
		res     *mcp.ElicitResult
		invalid bool
		want    map[string]any
	}{
		{"defaults filled", schema, &mcp.ElicitResult{Action: "accept", Content: map[string]any{"answer": "a"}}, false, map[string]any{"answer": "a", "mood": "calm"}},
		{"given value kept", schema, &mcp.ElicitResult{Action: "accept", Content: map[string]any{"answer": "a", "mood": "sad"}}, false, map[string]any{"answer": "a", "mood": "sad"}},
		{"required missing", schema, &mcp.ElicitResult{Action: "accept", Content: map[string]any{"mood": "sad"}}, true, nil},
		{"wrong type", schema, &mcp.ElicitResult{Action: "accept", Content: map[string]any{"answer": 3.0}}, true, nil},
		{"declined: not checked", schema, &mcp.ElicitResult{Action: "decline"}, false, nil},
		{"no schema", nil, &mcp.ElicitResult{Action: "accept", Content: map[string]any{"x": 1.0}}, false, map[string]any{"x": 1.0}},
		{"unreadable schema: passed as is", "not a schema", &mcp.ElicitResult{Action: "accept", Content: map[string]any{"x": 1.0}}, false, map[string]any{"x": 1.0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := checkContent(&mcp.ElicitParams{RequestedSchema: tc.schema}, tc.res)
			var rpc *jsonrpc.Error
			if tc.invalid != (err != nil) || (err != nil && (!errors.As(err, &rpc) || rpc.Code != jsonrpc.CodeInvalidParams)) {
				t.Fatalf("error %v; want invalid params: %v", err, tc.invalid)
			}
			if tc.want != nil {
				got, _ := json.Marshal(tc.res.Content)
				want, _ := json.Marshal(tc.want)
				if string(got) != string(want) {
					t.Fatalf("content %s, want %s", got, want)
				}
			}
		})
	}
}

// FuzzHideSchema: whatever an elicitation/create's params, hiding its schema
// and putting it back (as the handler does) gives the schema it was sent
// with, and a value a server put under schemaKey never becomes the schema.
func FuzzHideSchema(f *testing.F) {
	f.Add(`{"message":"m","requestedSchema":{"type":"object"}}`)
	f.Add(`{"message":"m","requestedSchema":{"type":"object"},"_meta":{"a":1}}`)
	f.Add(`{"message":"m","_meta":{"dev.mcphost/requestedSchema":{"forged":true}}}`)
	f.Add(`{"mode":"url","url":"https://x","elicitationId":"1","requestedSchema":{}}`)
	f.Add(`{"requestedSchema":null,"_meta":null}`)
	f.Add(`[]`)
	f.Fuzz(func(t *testing.T, params string) {
		var before mcp.ElicitParams
		if json.Unmarshal([]byte(params), &before) != nil {
			return
		}
		id, _ := jsonrpc.MakeID(float64(1))
		req := &jsonrpc.Request{ID: id, Method: "elicitation/create", Params: json.RawMessage(params)}
		out, _ := hideSchema(req)
		var after mcp.ElicitParams
		if err := json.Unmarshal(out.Params, &after); err != nil {
			t.Fatalf("hidden params do not decode: %v (%s)", err, out.Params)
		}
		restoreSchema(&after)
		if _, found := after.Meta[schemaKey]; found {
			t.Fatalf("%s left in _meta: %s", schemaKey, out.Params)
		}
		if before.Mode == "" || before.Mode == "form" {
			want, _ := json.Marshal(before.RequestedSchema)
			got, _ := json.Marshal(after.RequestedSchema)
			if string(got) != string(want) {
				t.Fatalf("schema %s after restore, want %s (params %s)", got, want, params)
			}
		}
	})
}

func resultText(res *mcp.CallToolResult) string {
	if res == nil {
		return "<none>"
	}
	return text(res)
}

// rooted is a caller whose client has roots.
type rooted struct {
	*answerer
	roots []string
	none  bool // the client has no roots capability
}

func (r *rooted) Capabilities() *mcp.ClientCapabilities {
	if r.none {
		return &mcp.ClientCapabilities{}
	}
	return &mcp.ClientCapabilities{RootsV2: &mcp.RootCapabilities{}}
}

func (r *rooted) ListRoots(context.Context, *mcp.ListRootsParams) (*mcp.ListRootsResult, error) {
	res := &mcp.ListRootsResult{Roots: []*mcp.Root{}}
	for _, u := range r.roots {
		res.Roots = append(res.Roots, &mcp.Root{URI: u})
	}
	return res, nil
}

// TestRootsReachTheCaller: a server's roots/list of its own (protocol
// versions before 2026-07-28; here on legacy_session's second session) is
// answered by the caller's client, not by the host's go-sdk client (which
// has no roots); a caller whose client has no roots gets the refusal.
func TestRootsReachTheCaller(t *testing.T) {
	t.Parallel()
	cfg := demo("d", "-passthrough")
	cfg.LegacySession = new(true)
	m := NewManager([]*config.Server{cfg}, &Options{Capabilities: &mcp.ClientCapabilities{RootsV2: &mcp.RootCapabilities{}}})
	t.Cleanup(func() { m.Close() })
	for _, tc := range []struct {
		name   string
		caller *rooted
		want   string // the result's text; "": an error result
	}{
		{"two roots", &rooted{answerer: newAnswerer("alice", ""), roots: []string{"file:///alice", "file:///shared"}}, "roots: file:///alice file:///shared"},
		{"no roots", &rooted{answerer: newAnswerer("bob", "")}, "roots: "},
		{"no roots capability", &rooted{answerer: newAnswerer("carol", ""), none: true}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := m.Call(context.Background(), cfg.Name, &mcp.CallToolParams{Name: "roots_old", Arguments: map[string]any{}},
				&CallOptions{Requester: tc.caller, ClientVersion: "2025-11-25"})
			if err != nil {
				t.Fatal(err)
			}
			got := text(res)
			if tc.want == "" {
				if !res.IsError || !strings.Contains(got, "roots/list") {
					t.Fatalf("result %q (error: %v); want the refusal", got, res.IsError)
				}
				return
			}
			if res.IsError || got != tc.want {
				t.Fatalf("result %q (error: %v); want %q", got, res.IsError, tc.want)
			}
		})
	}
}

// TestLegacySessionToolsCompared: while the second session lists the same
// tools as the first, a call there is verified against the first session's
// generation (the registry's listing); once they differ (here a tool added
// on the second session only, whose list_changed discards the comparison),
// Verify is told generation 0 and checks the call itself.
func TestLegacySessionToolsCompared(t *testing.T) {
	t.Parallel()
	cfg := demo("d", "-passthrough")
	cfg.LegacySession = new(true)
	m := NewManager([]*config.Server{cfg}, &Options{Capabilities: gatewayCaps})
	t.Cleanup(func() { m.Close() })
	ctx := context.Background()
	call := func(tool string, args map[string]any) uint64 {
		t.Helper()
		var seen uint64
		verified := false
		res, err := m.Call(ctx, cfg.Name, &mcp.CallToolParams{Name: tool, Arguments: args}, &CallOptions{
			ClientVersion: LegacyProtocol,
			Requester:     newAnswerer("alice", ""),
			Verify: func(_ context.Context, cs *mcp.ClientSession, gen uint64) error {
				if v := cs.InitializeResult().ProtocolVersion; v != LegacyProtocol {
					return fmt.Errorf("call sent on a session of %s", v)
				}
				seen, verified = gen, true
				return nil
			}})
		if err != nil || res.IsError || !verified {
			t.Fatalf("%s: result %q, error %v, verified %v", tool, resultText(res), err, verified)
		}
		return seen
	}
	got := call("echo", map[string]any{"message": "hi"})
	if first := m.Generation(context.Background(), cfg.Name); got != first || first == 0 {
		t.Fatalf("same tools: verified as generation %d, want the first session's %d", got, m.Generation(context.Background(), cfg.Name))
	}
	call("add_tool", map[string]any{"name": "only_there"})
	l := &m.Get(cfg.Name).legacy
	deadline := time.Now().Add(10 * time.Second)
	for {
		l.mu.Lock()
		forgotten := l.cmp == nil
		l.mu.Unlock()
		if forgotten {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the second session's list_changed did not discard the comparison")
		}
		time.Sleep(10 * time.Millisecond)
	}
	for range 2 { // the second time from the recorded comparison
		if got := call("echo", map[string]any{"message": "hi"}); got != 0 {
			t.Fatalf("different tools: verified as generation %d, want 0", got)
		}
	}
	l.mu.Lock()
	k := l.cmp[l.c]
	l.mu.Unlock()
	if k == nil || k.same {
		t.Fatalf("comparison recorded: %+v, want a mismatch", k)
	}
}

// TestLegacySessionRefused: a server that speaks no version before
// 2026-07-28 answers the second session's initialize with its own version
// (go-sdk servers answer any initialize with an earlier version, so this one
// answers initialize itself); that session is closed, the call and every
// later one of an older client go to the first session, and no second
// session is opened again.
func TestLegacySessionRefused(t *testing.T) {
	t.Parallel()
	srv := demoserver.New(&demoserver.Options{Name: "new-only", Passthrough: true})
	stateless := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{Stateless: true})
	var mu sync.Mutex
	initializes := 0
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && r.Header.Get("Mcp-Protocol-Version") < NewProtocol {
			var req struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
			}
			if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.Method != "initialize" {
				http.Error(w, "only initialize is served to earlier versions", http.StatusBadRequest)
				return
			}
			mu.Lock()
			initializes++
			mu.Unlock()
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":%q,"capabilities":{"tools":{}},"serverInfo":{"name":"new-only","version":"1"}}}`, req.ID, NewProtocol)
			return
		}
		if r.Method != http.MethodPost {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		stateless.ServeHTTP(w, r)
	}))
	t.Cleanup(func() { hs.CloseClientConnections(); hs.Close() })
	cfg := &config.Server{Name: "n", Transport: config.TransportHTTP, URL: hs.URL, Approved: true, ConnectTimeout: 5 * time.Second, LegacySession: new(true)}
	m := NewManager([]*config.Server{cfg}, &Options{Capabilities: gatewayCaps})
	t.Cleanup(func() { m.Close() })
	for i := range 3 {
		var version string
		res, err := m.Call(context.Background(), cfg.Name, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "hi"}}, &CallOptions{
			ClientVersion: LegacyProtocol, Requester: newAnswerer("alice", ""),
			Verify: func(_ context.Context, cs *mcp.ClientSession, _ uint64) error {
				version = cs.InitializeResult().ProtocolVersion
				return nil
			}})
		if err != nil || res.IsError {
			t.Fatalf("call %d: result %q, error %v", i, resultText(res), err)
		}
		if version != NewProtocol {
			t.Fatalf("call %d went to a session of %s", i, version)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if initializes != 1 {
		t.Fatalf("the second session was initialized %d times, want once (then never again)", initializes)
	}
	if lc := m.Get(cfg.Name).legacy.conn(); lc == nil || !m.Get(cfg.Name).legacy.none {
		t.Fatal("the refusal was not recorded")
	}
}

// TestSessionVersionRefused: a server that refuses an initialize (as one of
// 2026-07-28 only may) is connected at the newest version when the
// Manager's ProtocolVersion (the stdio gateway's client's era) is earlier,
// rather than not at all.
func TestSessionVersionRefused(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, flag, want string
	}{
		{"a server of both eras", "", "2025-11-25"},
		{"a server that refuses initialize", "-no-initialize", "2026-07-28"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var args []string
			if tc.flag != "" {
				args = append(args, tc.flag)
			}
			s := demo("d", args...)
			var mu sync.Mutex
			var pids []int
			m := NewManager([]*config.Server{s}, &Options{ProtocolVersion: "2025-11-25", OnProcessStart: func(_ string, pid int) {
				mu.Lock()
				pids = append(pids, pid)
				mu.Unlock()
			}})
			t.Cleanup(func() { m.Close() })
			cs, err := m.Session(context.Background(), "d")
			if err != nil {
				t.Fatal(err)
			}
			if v := cs.InitializeResult().ProtocolVersion; v != tc.want {
				t.Errorf("session at %s, want %s", v, tc.want)
			}
			// The refused attempt's process is gone: one server runs.
			mu.Lock()
			defer mu.Unlock()
			for _, pid := range pids[:len(pids)-1] {
				if alive(pid) {
					t.Errorf("the process of a refused attempt (%d) still runs", pid)
				}
			}
		})
	}
}

// TestLegacySessionRaw: once a 2025-11-25 client's call has opened the
// second session (and found its tools the first session's), that era's
// calls take the raw path there, where the server's requests reach the
// caller; while another client's call is in flight on it (stdio), a raw
// call is not taken (nothing sent: the go-sdk path waits). Before,
// 2025-11-25 calls to a server with a second session never took the raw
// path.
func TestLegacySessionRaw(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		cfg    func(t *testing.T) *config.Server
		shared bool // calls of several clients share the second session
	}{
		{"stdio", func(*testing.T) *config.Server { return demo("d", "-passthrough") }, false},
		{"remote", func(t *testing.T) *config.Server { return httpDemo(t, "h") }, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg := tc.cfg(t)
			m := NewManager([]*config.Server{cfg}, &Options{Capabilities: gatewayCaps})
			t.Cleanup(func() { m.Close() })
			ctx := context.Background()
			raw := func(ctx context.Context, r Requester) ([]byte, bool, error) {
				return m.CallRaw(ctx, cfg.Name, RawCall{Tool: "ask_old", Args: []byte(`{"question":"raw?"}`), ProtocolVersion: LegacyProtocol,
					Gen: m.Generation(ctx, cfg.Name), Requester: r, Asks: true})
			}
			// Nothing open yet: the go-sdk path opens the second session.
			if _, handled, err := raw(ctx, newAnswerer("carol", "x")); handled || err != nil {
				t.Fatalf("before the second session is open: handled %v, error %v", handled, err)
			}
			if res, err := m.Call(ctx, cfg.Name, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "hi"}},
				&CallOptions{ClientVersion: LegacyProtocol, Requester: newAnswerer("carol", "x")}); err != nil || res.IsError {
				t.Fatalf("opening call: %v %v", resultText(res), err)
			}
			carol := newAnswerer("carol", "raw answer")
			resp, handled, err := raw(ctx, carol)
			if err != nil || !handled || !strings.Contains(string(resp), "answer: raw answer (mood: calm)") || len(carol.asked) != 1 {
				t.Fatalf("raw call on the second session: %s, handled %v, error %v, asked %d", resp, handled, err, len(carol.asked))
			}

			// Another client's call in flight there.
			alice := newAnswerer("alice", "a")
			alice.hold = make(chan struct{})
			var release sync.Once
			t.Cleanup(func() { release.Do(func() { close(alice.hold) }) })
			done := make(chan error, 1)
			go func() {
				_, err := m.Call(ctx, cfg.Name, &mcp.CallToolParams{Name: "ask_old", Arguments: map[string]any{}}, &CallOptions{ClientVersion: LegacyProtocol, Requester: alice})
				done <- err
			}()
			<-alice.asked
			bob := newAnswerer("bob", "b")
			resp, handled, err = raw(ctx, bob)
			if tc.shared {
				if err != nil || !handled || !strings.Contains(string(resp), "answer: b") {
					t.Fatalf("raw call beside another client's: %s, handled %v, error %v", resp, handled, err)
				}
			} else if handled || err != nil || len(bob.asked) != 0 {
				t.Fatalf("raw call while another client's is in flight: handled %v, error %v, asked %d; want not taken", handled, err, len(bob.asked))
			}
			release.Do(func() { close(alice.hold) })
			if err := <-done; err != nil {
				t.Fatal(err)
			}
		})
	}
}
