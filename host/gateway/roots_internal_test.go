package gateway

import (
	"context"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host/conn"
	"github.com/mcphost/mcphost/host/inbound"
)

// TestListRootsOutsideForUser: a per-user connection's roots/list outside
// any call is answered by the latest session of that user whose client
// has roots (recorded as the user's requests pass callerMiddleware); a
// user with none, or without a user, is left to the settings' roots (nil).
// A real go-sdk client and server pair stands for the downstream session.
func TestListRootsOutsideForUser(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv := mcp.NewServer(&mcp.Implementation{Name: "gateway"}, nil)
	client := mcp.NewClient(&mcp.Implementation{Name: "alice's client"}, nil)
	client.AddRoots(&mcp.Root{URI: "file:///home/alice/project", Name: "project"})
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := client.Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })

	// The client uses an endpoint only (/mcp/dev): its gateway records the
	// session in the registry the host's gateways share
	// (Options.UserClients), and /mcp's gateway, the one the host's
	// OnListRoots asks, finds it. (On the code before, each gateway had its
	// own, and alice's client at /mcp/dev was never asked.)
	shared := &UserClients{}
	dev := &Gateway{userRoots: shared}
	g := &Gateway{userRoots: shared}
	alice := &inbound.Principal{Issuer: "https://idp", Subject: "alice"}
	dev.noteUserClient(alice, &mcp.ListToolsRequest{Session: ss})
	for _, tc := range []struct {
		name string
		u    *conn.User
		want string // "": nil
	}{
		{"alice", &conn.User{Issuer: "https://idp", Subject: "alice", Token: "t"}, "file:///home/alice/project"},
		{"bob", &conn.User{Issuer: "https://idp", Subject: "bob"}, ""},
		{"shared", nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := g.ListRootsOutside(ctx, "s", tc.u)
			if err != nil {
				t.Fatal(err)
			}
			got := ""
			if res != nil && len(res.Roots) == 1 {
				got = res.Roots[0].URI
			} else if res != nil {
				got = "?"
			}
			if got != tc.want {
				t.Fatalf("answered %q, want %q", got, tc.want)
			}
		})
	}
}

// TestRootsOf: a client's notifications/roots/list_changed is passed on
// (rootsChanged) for the sole client (to the shared connections: nil
// user), and for a user's latest session whose client has roots (to that
// user's connections); not for an older session of the user, another
// user's or one without a principal. Real go-sdk sessions.
func TestRootsOf(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv := mcp.NewServer(&mcp.Implementation{Name: "gateway"}, nil)
	session := func() *mcp.ServerSession {
		st, ct := mcp.NewInMemoryTransports()
		ss, err := srv.Connect(ctx, st, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ss.Close() })
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "c"}, nil).Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.Close() })
		return ss
	}
	sole, older, latest, bobs := session(), session(), session(), session()
	g := &Gateway{userRoots: &UserClients{}}
	g.SetSoleClient(sole)
	alice := &inbound.Principal{Issuer: "https://idp", Subject: "alice"}
	bob := &inbound.Principal{Issuer: "https://idp", Subject: "bob"}
	g.noteUserClient(alice, &mcp.ListToolsRequest{Session: older})
	g.noteUserClient(alice, &mcp.ListToolsRequest{Session: latest})
	for _, tc := range []struct {
		name string
		ss   *mcp.ServerSession
		p    *inbound.Principal
		want string // the user told's subject; "" for the shared connections
		ok   bool
	}{
		{"the sole client", sole, nil, "", true},
		{"alice's latest session", latest, alice, "alice", true},
		{"alice's older session", older, alice, "", false},
		{"alice's session, bob's token", latest, bob, "", false},
		{"bob's unrecorded session", bobs, bob, "", false},
		{"no principal", latest, nil, "", false},
		{"no session", nil, nil, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u, ok := g.rootsOf(tc.ss, tc.p)
			got := ""
			if u != nil {
				got = u.Subject
			}
			if ok != tc.ok || got != tc.want {
				t.Fatalf("rootsOf = (%q, %v), want (%q, %v)", got, ok, tc.want, tc.ok)
			}
		})
	}
}
