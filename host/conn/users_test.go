package conn

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host/config"
)

// TestUserConns: a per-user server is reached through one connection per
// gateway user (WithUser), each its own session; without a user, through
// the server's own; a server that is not per user is shared by all. The
// per-user connections are bounded: past MaxUserConns the least recently
// used is closed for good, and its user gets a new one.
func TestUserConns(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "up"}, nil)
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	hs := httptest.NewServer(h)
	defer hs.Close()
	perUser := &config.Server{Name: "mine", Transport: config.TransportHTTP, URL: hs.URL, Approved: true, ConnectTimeout: 5 * time.Second,
		OAuth: &config.OAuth{Grant: config.GrantAuthorizationCode, PerUser: true, AllowLoopback: true}}
	shared := &config.Server{Name: "ours", Transport: config.TransportHTTP, URL: hs.URL, Approved: true, ConnectTimeout: 5 * time.Second}
	m := NewManager([]*config.Server{perUser, shared}, &Options{MaxUserConns: 2})
	defer m.Close()

	users := []*User{{Issuer: "https://i", Subject: "alice", Token: "t-a"}, {Issuer: "https://i", Subject: "bob", Token: "t-b"}, {Issuer: "https://i", Subject: "carol", Token: "t-c"}}
	ctx := context.Background()
	session := func(u *User, server string) *mcp.ClientSession {
		t.Helper()
		cs, err := m.Session(WithUser(ctx, u), server)
		if err != nil {
			t.Fatalf("%v on %s: %v", u, server, err)
		}
		return cs
	}
	own := session(nil, "mine")
	a, b := session(users[0], "mine"), session(users[1], "mine")
	if a == b || a == own || b == own {
		t.Fatal("users share a per-user server's session")
	}
	if session(users[0], "mine") != a {
		t.Error("alice's second request got another session")
	}
	if session(users[0], "ours") != session(users[1], "ours") {
		t.Error("a shared server's session differs between users")
	}
	if m.For(WithUser(ctx, users[1]), "mine").User().Token != "t-b" {
		t.Error("bob's connection does not have his token")
	}
	// Bob's newer token replaces the old one.
	newer := *users[1]
	newer.Token = "t-b2"
	if m.For(WithUser(ctx, &newer), "mine").User().Token != "t-b2" {
		t.Error("bob's connection kept his old token")
	}

	aliceConn := m.For(WithUser(ctx, users[0]), "mine")
	aliceConn.user.used.Store(1)   // alice's last use: the oldest
	c := session(users[2], "mine") // a third user: alice's connection goes
	if n := len(m.userConns("mine")); n != 2 {
		t.Errorf("%d per-user connections held, want 2", n)
	}
	if _, err := aliceConn.Session(ctx); !errors.Is(err, ErrClosed) {
		t.Errorf("alice's evicted connection: %v, want ErrClosed", err)
	}
	if again := session(users[0], "mine"); again == a || again == c {
		t.Error("alice's new connection reuses a session")
	}
	if st := m.Status()[0]; st.Name != "mine" || st.Users != 2 {
		t.Errorf("status: %+v", st)
	}
}
