package gateway_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/audit"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/gateway"
	"github.com/mcphost/mcphost/host/gateway/streamable"
	"github.com/mcphost/mcphost/host/telemetry"
	"github.com/mcphost/mcphost/internal/testing/syncbuf"
)

// TestOneDecisionPerCall (issue 34): one tools/call is decided once by the
// permission rules, whichever paths it takes — the relay's try on stdio
// (RelayStart, then RelayCall), the relay passing it on to the go-sdk
// server, the full path — and that decision is what the call's span tree
// (one mcphost.permission.decide span), the decision metric (counted
// once) and the audit line (its decision) record. Before, each path that
// tried the call decided again: two decision spans for a call the relay
// passed on, three spans and three counts for a stdio call the relay
// could neither start nor make.
func TestOneDecisionPerCall(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		transport string // "stdio" or "http"
		version   string // the client's protocol version
		server    *config.Server
		tool      string
		rules     []config.PermissionRule
		meta      mcp.Meta // the call's _meta (a progress token: the go-sdk path alone)
		elicit    bool     // the client answers elicitations: the demo's ask tool, the gateway's question (allow)
		decline   bool     // the client answers the gateway's question deny
		outcome   string   // the decision, as span and metric record it
		lines     []string // the decisions of the audit lines (nil: outcome, one line)
		relayed   bool
	}{
		{name: "stdio relayed", transport: "stdio", version: oldProtocol, server: demo("a"), tool: "mcp__a__echo", outcome: "allow", relayed: true},
		{name: "http relayed", transport: "http", version: oldProtocol, server: demo("a"), tool: "mcp__a__echo", outcome: "allow", relayed: true},
		// An ask: the relay's gate refuses it (no one to ask there), the
		// go-sdk server's call asks (here: cannot, the client does not
		// elicit).
		{name: "stdio ask passed on", transport: "stdio", version: oldProtocol, server: demo("a"), tool: "mcp__a__echo", rules: []config.PermissionRule{askEcho}, outcome: "ask"},
		{name: "http ask passed on", transport: "http", version: oldProtocol, server: demo("a"), tool: "mcp__a__echo", rules: []config.PermissionRule{askEcho}, outcome: "ask"},
		// Asked by the go-sdk path alone (a progress token), approved by
		// the client: the question's round and the approved one, which
		// the go-sdk server runs in one request (elicitation/create).
		{name: "stdio ask approved", transport: "stdio", version: oldProtocol, server: demo("a"), tool: "mcp__a__echo", rules: []config.PermissionRule{askEcho}, meta: mcp.Meta{"progressToken": "p"}, elicit: true, outcome: "ask", lines: []string{"ask", "allow"}},
		{name: "http ask approved", transport: "http", version: oldProtocol, server: demo("a"), tool: "mcp__a__echo", rules: []config.PermissionRule{askEcho}, meta: mcp.Meta{"progressToken": "p"}, elicit: true, outcome: "ask", lines: []string{"ask", "allow"}},
		// Declined by the client: the retry's line records the decision
		// the call took (the ask rule), declined — not the question's
		// ask again, nor one taken anew for the line.
		{name: "stdio ask declined", transport: "stdio", version: oldProtocol, server: demo("a"), tool: "mcp__a__echo", rules: []config.PermissionRule{askEcho}, meta: mcp.Meta{"progressToken": "p"}, elicit: true, decline: true, outcome: "ask", lines: []string{"ask", "deny"}},
		{name: "http ask declined", transport: "http", version: oldProtocol, server: demo("a"), tool: "mcp__a__echo", rules: []config.PermissionRule{askEcho}, meta: mcp.Meta{"progressToken": "p"}, elicit: true, decline: true, outcome: "ask", lines: []string{"ask", "deny"}},
		// Allowed, sent by the relay, whose first round needs input the
		// client cannot read as a result: made again on the go-sdk path.
		// (On the server's first session, of 2026-07-28: legacy_session =
		// false.)
		{name: "stdio input required passed on", transport: "stdio", version: oldProtocol, server: withoutLegacy(demo("p", "-passthrough")), tool: "mcp__p__ask", elicit: true, outcome: "allow"},
		// Allowed, of a version the relay does not speak to that server:
		// neither started (RelayStart) nor made (RelayCall) by the relay.
		{name: "stdio not relayable", transport: "stdio", version: oldProtocol, server: demo("o", "-protocol", "2025-06-18"), tool: "mcp__o__echo", outcome: "allow"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rec := newTelRecorder(t)
			ctx, cancel := context.WithCancel(context.Background())
			h, err := host.New(&config.Config{Servers: []*config.Server{tc.server}, Permissions: tc.rules, DefaultMode: "allow_all"}, &host.Options{OutputDir: t.TempDir(), Telemetry: rec.tel,
				ClientCapabilities: &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{Form: &mcp.FormElicitationCapabilities{}}}})
			if err != nil {
				t.Fatal(err)
			}
			var buf syncbuf.Buffer
			log := audit.New(&buf, nil)
			t.Cleanup(func() {
				cancel()
				h.Close()
				log.Close(context.Background())
			})
			h.ConnectAll(ctx, nil)
			g := gateway.New(h, &gateway.Options{Telemetry: rec.tel, Audit: log})
			if p := g.Sync(ctx); len(p) > 0 {
				t.Fatal(p)
			}
			var opts *mcp.ClientOptions
			if tc.elicit {
				opts = &mcp.ClientOptions{ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
					if strings.HasPrefix(req.Params.Message, "Allow the tool") {
						if tc.decline {
							return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"decision": "deny"}}, nil
						}
						return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"decision": "allow"}}, nil
					}
					return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"answer": "yes"}}, nil
				}}
			}
			var tr mcp.Transport
			if tc.transport == "stdio" {
				w, r := servePipes(t, g)
				tr = &mcp.IOTransport{Reader: r, Writer: w}
			} else {
				srv := httptest.NewServer(streamable.New(g).Handler(nil))
				t.Cleanup(func() {
					srv.CloseClientConnections()
					srv.Close()
				})
				tr = &mcp.StreamableClientTransport{Endpoint: srv.URL, HTTPClient: &http.Client{}}
			}
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "one-decision"}, opts).Connect(ctx, tr, &mcp.ClientSessionOptions{ProtocolVersion: tc.version})
			if err != nil {
				t.Fatal(err)
			}
			args := map[string]any{"message": "m"}
			if tc.tool == "mcp__p__ask" {
				args = map[string]any{"question": "q?"}
			}
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tc.tool, Arguments: args, Meta: tc.meta})
			if err != nil {
				t.Fatal(err)
			}
			if wantErr := tc.outcome == "ask" && (!tc.elicit || tc.decline); res.IsError != wantErr {
				t.Fatalf("isError %v: %s", res.IsError, textOf(res))
			}
			if relayed := g.RelayedCalls(); relayed != map[bool]uint64{true: 1}[tc.relayed] {
				t.Errorf("%d calls relayed, want relayed %v", relayed, tc.relayed)
			}
			rec.waitServer(t, "tools/call "+tc.tool) // (a relayed call's span ends after its answer)
			cs.Close()

			var decisions []string
			for _, s := range rec.ended(t) {
				if s.Name == telemetry.DecisionSpanName {
					decisions = append(decisions, attrs(s.Attributes)["mcphost.outcome"])
				}
			}
			if len(decisions) != 1 || decisions[0] != tc.outcome {
				t.Errorf("decision spans with outcomes %v, want one: %s", decisions, tc.outcome)
			}
			if counted := decisionCounts(t, rec); len(counted) != 1 || counted[tc.outcome] != 1 {
				t.Errorf("decisions counted %v, want %s once", counted, tc.outcome)
			}
			var lines []string
			for _, r := range allRecords(t, log, &buf) {
				if r.Event != audit.EventToolCall {
					continue
				}
				lines = append(lines, r.Decision)
				if r.Decision == audit.DecisionDeny && (r.Reason != "declined by the client" || !strings.Contains(r.Rule, `ask "mcp__a__echo"`)) {
					t.Errorf("the declined retry's line: reason %q, rule %q; want declined by the client, the ask rule", r.Reason, r.Rule)
				}
			}
			want := tc.lines
			if want == nil {
				want = []string{tc.outcome}
			}
			if !slices.Equal(lines, want) {
				t.Errorf("audit lines of the call with decisions %v, want %v", lines, want)
			}
		})
	}
}

// decisionCounts is the decision metric's count by outcome.
func decisionCounts(t *testing.T, rec *telRecorder) map[string]int64 {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := rec.reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	out := map[string]int64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != telemetry.MetricDecisions {
				continue
			}
			sum, ok := m.Data.(metricdata.Sum[int64])
			if !ok {
				t.Fatalf("%s is a %T", m.Name, m.Data)
			}
			for _, p := range sum.DataPoints {
				out[attrs(p.Attributes.ToSlice())["mcphost.outcome"]] += p.Value
			}
		}
	}
	return out
}
