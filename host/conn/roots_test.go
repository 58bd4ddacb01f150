package conn

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host/config"
)

// rootsServer is a go-sdk server of 2025-11-25 (stateful streamable HTTP)
// that asks for the client's roots when the session starts and again on
// each notifications/roots/list_changed, outside any call, and reports
// what it was told on seen.
func rootsServer(t *testing.T, seen chan<- string) *config.Server {
	t.Helper()
	ask := func(ctx context.Context, ss *mcp.ServerSession) {
		go func() { // (not on the session's read loop)
			ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
			defer cancel()
			res, err := ss.ListRoots(ctx, nil)
			if err != nil {
				seen <- "error: " + err.Error()
				return
			}
			var uris []string
			for _, r := range res.Roots {
				uris = append(uris, r.URI+"="+r.Name)
			}
			seen <- strings.Join(uris, " ")
		}()
	}
	srv := mcp.NewServer(&mcp.Implementation{Name: "rooted"}, &mcp.ServerOptions{
		InitializedHandler:      func(ctx context.Context, req *mcp.InitializedRequest) { ask(ctx, req.Session) },
		RootsListChangedHandler: func(ctx context.Context, req *mcp.RootsListChangedRequest) { ask(ctx, req.Session) },
	})
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	t.Cleanup(func() {
		for ss := range srv.Sessions() { // (a request of the server's may still wait)
			ss.Close()
		}
		hs.CloseClientConnections()
		hs.Close()
	})
	return &config.Server{Name: "r", Transport: config.TransportHTTP, URL: hs.URL, Approved: true, ConnectTimeout: 5 * time.Second}
}

// TestRootsOutsideCall: a server's roots/list outside any call is answered
// by OnListRoots when it has an answer, else by the host's roots
// (Options.Roots); SetRoots sends notifications/roots/list_changed, after
// which the server is told the new roots. (Before, the answer was empty.)
func TestRootsOutsideCall(t *testing.T) {
	t.Parallel()
	next := func(t *testing.T, seen <-chan string) string {
		t.Helper()
		select {
		case s := <-seen:
			return s
		case <-time.After(10 * time.Second):
			t.Fatal("the server was not answered")
			return ""
		}
	}
	t.Run("settings roots", func(t *testing.T) {
		t.Parallel()
		seen := make(chan string, 8)
		cfg := rootsServer(t, seen)
		m := NewManager([]*config.Server{cfg}, &Options{Roots: []*mcp.Root{{URI: "file:///src", Name: "src"}}})
		t.Cleanup(func() { m.Close() })
		if _, err := m.Session(context.Background(), cfg.Name); err != nil {
			t.Fatal(err)
		}
		if got := next(t, seen); got != "file:///src=src" {
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
		if got := next(t, seen); got != "file:///client/r=" {
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
	select {
	case got := <-seen:
		if got != "file:///home/alice=" {
			t.Fatalf("alice's connection's server was told %q", got)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("not answered")
	}
}
