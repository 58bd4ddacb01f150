package host_test

import (
	"context"
	"testing"
	"time"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/conn"
	"github.com/mcphost/mcphost/host/state"
	"github.com/mcphost/mcphost/internal/testing/fakeas"
	"github.com/mcphost/mcphost/internal/testing/syncbuf"
)

// TestLoginAdoptedByAnotherProcess: two hosts share a token store (as the
// gateway's replicas share a state backend). One logs in; the other, whose
// connection waits for a login (needs auth, cached), is woken by the
// announcement of the stored record and serves the server's tools with
// those credentials, with no login of its own. Without the announcement it
// keeps waiting (its needs-auth is cached); a connection that tries again
// adopts the stored record rather than failing for want of a login.
func TestLoginAdoptedByAnotherProcess(t *testing.T) {
	for _, tc := range []struct {
		name     string
		announce bool // the second host is told of the save
	}{
		{"announced", true},
		{"not announced", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			as := fakeas.New()
			defer as.Close()
			st, err := state.NewLocal(nil, "")
			if err != nil {
				t.Fatal(err)
			}
			store := state.AnnouncedTokens(st)
			a := oauthHost(t, protConfig("http", as.URL()), store, &syncbuf.Buffer{})
			b := oauthHost(t, protConfig("http", as.URL()), store, &syncbuf.Buffer{})
			if tc.announce {
				defer st.Subscribe(state.TokensChannel, func(msg []byte) { b.Serving().CredentialsStored(string(msg)) })()
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			for _, h := range []*host.Host{a, b} {
				if tools, _ := h.Tools(ctx); len(tools) != 1 || !h.IsAuthTool(ctx, "prot", "authenticate") {
					t.Fatalf("tools before login = %v, want only the authenticate pseudo-tool", tools)
				}
			}
			var opened []string
			if err := a.Login(ctx, "prot", browser(t, &opened)); err != nil {
				t.Fatalf("Login: %v", err)
			}
			tools, _ := b.Tools(ctx)
			got := b.Connections().Get("prot").State()
			if !tc.announce {
				if got != conn.StateNeedsAuth || len(tools) != 1 {
					t.Fatalf("unannounced: state %v, tools %v; want needs-auth still (cached)", got, tools)
				}
				b.Serving().LoggedInElsewhere(ctx, "prot") // what a replica does for a retry of a login it did not run
				tools, _ = b.Tools(ctx)
				got = b.Connections().Get("prot").State()
			}
			if got != conn.StateConnected || len(tools) == 0 || tools[0].Name == "mcp__prot__authenticate" {
				t.Fatalf("second host after the first's login: state %v, tools %v", got, tools)
			}
			res, err := b.CallTool(ctx, "mcp__prot__whoami", map[string]any{}, nil)
			if err != nil || host.TextOf(res.Content) != "you" {
				t.Fatalf("second host's call: %v %v", res, err)
			}
			if n := len(as.Requests("/authorize")); n != 1 {
				t.Errorf("%d authorizations, want 1 (the second host logged in itself?)", n)
			}
		})
	}
}
