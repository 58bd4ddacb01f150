package conn

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/internal/testing/rootstest"
)

// rootsServer is a go-sdk server of 2025-11-25 (stateful streamable HTTP)
// that asks for the client's roots when the session starts and again on
// each notifications/roots/list_changed, outside any call, and reports
// what it was told on seen (URI=NAME each).
func rootsServer(t *testing.T, seen chan<- string) *config.Server {
	t.Helper()
	url := rootstest.Server(t, rootstest.AtStart|rootstest.OnChange, true, seen)
	return &config.Server{Name: "r", Transport: config.TransportHTTP, URL: url, Approved: true, ConnectTimeout: 5 * time.Second}
}

// nextSeen is what a server reported next on seen, waited for up to 10 s.
func nextSeen(t *testing.T, seen <-chan string) string {
	t.Helper()
	select {
	case s := <-seen:
		return s
	case <-time.After(10 * time.Second):
		t.Fatal("the server was not answered")
		return ""
	}
}

// TestRootsOutsideCall: a server's roots/list outside any call is answered
// by OnListRoots when it has an answer, else by the host's roots
// (Options.Roots); SetRoots sends notifications/roots/list_changed, after
// which the server is told the new roots. (Before, the answer was empty.)
func TestRootsOutsideCall(t *testing.T) {
	t.Parallel()
	t.Run("settings roots", func(t *testing.T) {
		t.Parallel()
		seen := make(chan string, 8)
		cfg := rootsServer(t, seen)
		m := NewManager([]*config.Server{cfg}, &Options{Roots: []*mcp.Root{{URI: "file:///src", Name: "src"}}})
		t.Cleanup(func() { m.Close() })
		if _, err := m.Session(context.Background(), cfg.Name); err != nil {
			t.Fatal(err)
		}
		if got := nextSeen(t, seen); got != "file:///src=src" {
			t.Fatalf("at session start the server was told %q", got)
		}
		m.SetRoots([]*mcp.Root{{URI: "file:///work"}})
		deadline := time.After(10 * time.Second)
		for got := ""; got != "file:///work="; {
			select {
			case got = <-seen: // (a list_changed per change go-sdk makes)
			case <-deadline:
				t.Fatalf("after SetRoots the server was last told %q", got)
			}
		}
	})
	t.Run("a front's answer", func(t *testing.T) {
		t.Parallel()
		seen := make(chan string, 8)
		cfg := rootsServer(t, seen)
		m := NewManager([]*config.Server{cfg}, &Options{
			Roots: []*mcp.Root{{URI: "file:///src"}},
			OnListRoots: func(_ context.Context, server string, u *User) (*mcp.ListRootsResult, error) {
				return &mcp.ListRootsResult{Roots: []*mcp.Root{{URI: "file:///client/" + server}}}, nil
			},
		})
		t.Cleanup(func() { m.Close() })
		if _, err := m.Session(context.Background(), cfg.Name); err != nil {
			t.Fatal(err)
		}
		if got := nextSeen(t, seen); got != "file:///client/r=" {
			t.Fatalf("the server was told %q, want the front's answer", got)
		}
	})
}

// TestRootsOutsideCallPerUser: a per-user connection's server asking for
// roots outside any call is answered by OnListRoots for that connection's
// user (the gateway asks that user's client).
func TestRootsOutsideCallPerUser(t *testing.T) {
	t.Parallel()
	seen := make(chan string, 8)
	cfg := rootsServer(t, seen)
	cfg.OAuth = &config.OAuth{Grant: config.GrantAuthorizationCode, PerUser: true, AllowLoopback: true}
	m := NewManager([]*config.Server{cfg}, &Options{
		OnListRoots: func(_ context.Context, server string, u *User) (*mcp.ListRootsResult, error) {
			if u == nil {
				return nil, nil
			}
			return &mcp.ListRootsResult{Roots: []*mcp.Root{{URI: "file:///home/" + u.Subject}}}, nil
		},
	})
	t.Cleanup(func() { m.Close() })
	if _, err := m.Session(WithUser(context.Background(), &User{Issuer: "https://i", Subject: "alice", Token: "t"}), cfg.Name); err != nil {
		t.Fatal(err)
	}
	if got := nextSeen(t, seen); got != "file:///home/alice=" {
		t.Fatalf("alice's connection's server was told %q", got)
	}
}

// TestClientRootsChanged: ClientRootsChanged (a front's client said its
// roots changed) sends notifications/roots/list_changed to the servers
// whose roots outside a call come from that client, and to no other: for
// no user (the stdio front's one client), the shared connections'; for a
// user, that user's own connections of per-user servers. Each server told
// lists the roots again and is answered by OnListRoots anew. (Before, no
// server was told.)
func TestClientRootsChanged(t *testing.T) {
	t.Parallel()
	var gen atomic.Int32 // (the clients' roots change with it)
	userSeen, sharedSeen := make(chan string, 8), make(chan string, 8)
	per := rootsServer(t, userSeen)
	per.OAuth = &config.OAuth{Grant: config.GrantAuthorizationCode, PerUser: true, AllowLoopback: true}
	shared := rootsServer(t, sharedSeen)
	shared.Name = "s"
	m := NewManager([]*config.Server{per, shared}, &Options{
		OnListRoots: func(_ context.Context, server string, u *User) (*mcp.ListRootsResult, error) {
			who := "sole"
			if u != nil {
				who = u.Subject
			}
			return &mcp.ListRootsResult{Roots: []*mcp.Root{{URI: fmt.Sprintf("file:///%s/%d", who, gen.Load())}}}, nil
		},
	})
	t.Cleanup(func() { m.Close() })
	alice := &User{Issuer: "https://i", Subject: "alice", Token: "t"}
	bob := &User{Issuer: "https://i", Subject: "bob", Token: "t"}
	if _, err := m.Session(context.Background(), "s"); err != nil {
		t.Fatal(err)
	}
	if got := nextSeen(t, sharedSeen); got != "file:///sole/0=" {
		t.Fatalf("at session start the shared server was told %q", got)
	}
	for _, u := range []*User{alice, bob} {
		if _, err := m.Session(WithUser(context.Background(), u), per.Name); err != nil {
			t.Fatal(err)
		}
		if got, want := nextSeen(t, userSeen), "file:///"+u.Subject+"/0="; got != want {
			t.Fatalf("at session start %s's server was told %q, want %q", u.Subject, got, want)
		}
	}
	for _, tc := range []struct {
		name string
		u    *User
		seen <-chan string // where the one server told lists the roots
		who  string
	}{
		{"the sole client", nil, sharedSeen, "sole"},
		{"alice's client", alice, userSeen, "alice"},
		{"bob's client", bob, userSeen, "bob"},
		{"the sole client again", nil, sharedSeen, "sole"},
	} {
		// (A server told wrongly lists too, on its channel: the next
		// case, or the next listing here, reads its stale answer.)
		n := gen.Add(1)
		m.ClientRootsChanged(tc.u)
		if got, want := nextSeen(t, tc.seen), fmt.Sprintf("file:///%s/%d=", tc.who, n); got != want {
			t.Fatalf("%s: a server listed %q after the notification, want %q", tc.name, got, want)
		}
	}
	select {
	case got := <-userSeen:
		t.Fatalf("a per-user server was told of the sole client's change: it listed %q", got)
	case got := <-sharedSeen:
		t.Fatalf("the shared server was told twice: it listed %q", got)
	default:
	}
}
