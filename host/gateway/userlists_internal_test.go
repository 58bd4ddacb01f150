package gateway

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host/conn"
	"github.com/mcphost/mcphost/host/inbound"
)

// TestListChangedSenderOutermost (review57 #13): every sending middleware
// of the go-sdk server other than listChangedSender sees a per-user
// list_changed as the list_changed it is, not as the
// notifications/progress userListChanged sends it as; a kind naming no
// list is logged and not sent. (Before, listChangedSender was the
// innermost: the others saw a progress without progressToken, and an
// unknown kind was dropped silently.)
func TestListChangedSenderOutermost(t *testing.T) {
	var logs bytes.Buffer
	g := &Gateway{log: hclog.New(&hclog.LoggerOptions{Output: &logs, Level: hclog.Warn})}
	ms := g.sendingMiddlewares()
	var seen []string // what each middleware was called with, in order
	var sent []string // what reached the connection
	handler := func(_ context.Context, method string, _ mcp.Request) (mcp.Result, error) {
		sent = append(sent, method)
		return nil, nil
	}
	var h mcp.MethodHandler = handler
	for i := len(ms) - 1; i >= 0; i-- { // (as the go-sdk: the first is the outermost)
		inner := ms[i](h)
		h = func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			seen = append(seen, method)
			return inner(ctx, method, req)
		}
	}
	var ss *mcp.ServerSession
	send := func(kind string) {
		ctx := context.WithValue(context.Background(), listChangedKey{}, kind)
		if _, err := h(ctx, "notifications/progress", &mcp.ServerRequest[*mcp.ProgressNotificationParams]{Session: ss, Params: &mcp.ProgressNotificationParams{}}); err != nil {
			t.Fatal(err)
		}
	}
	send("notifications/prompts/list_changed")
	if len(seen) != len(ms) || seen[0] != "notifications/progress" {
		t.Fatalf("middlewares called with %q", seen)
	}
	for i, m := range seen[1:] {
		if m != "notifications/prompts/list_changed" {
			t.Errorf("sending middleware %d of %d saw %q, want notifications/prompts/list_changed", i+2, len(ms), m)
		}
	}
	if len(sent) != 1 || sent[0] != "notifications/prompts/list_changed" {
		t.Errorf("sent %q, want the list_changed", sent)
	}
	seen, sent = nil, nil
	send("notifications/bogus/list_changed")
	if len(sent) != 0 {
		t.Errorf("an unknown kind: sent %q, want nothing", sent)
	}
	if !strings.Contains(logs.String(), "notifications/bogus/list_changed") {
		t.Errorf("an unknown kind not logged: %q", logs.String())
	}
}

// TestUserSessionsIndex: the sessions here are indexed by the user of
// their latest request (a per-user list_changed asks those only, not
// every session); a session seen as another user moves; one that ends is
// forgotten.
func TestUserSessionsIndex(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "s", Version: "1"}, nil)
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	defer hs.Close()
	ctx := context.Background()
	var clients []*mcp.ClientSession
	for range 3 {
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: hs.URL}, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer cs.Close()
		clients = append(clients, cs)
	}
	byID := map[string]*mcp.ServerSession{}
	for ss := range srv.Sessions() {
		byID[ss.ID()] = ss
	}
	session := func(i int) *mcp.ServerSession { return byID[clients[i].ID()] }
	alice, bob := &inbound.Principal{Issuer: "i", Subject: "alice"}, &inbound.Principal{Issuer: "i", Subject: "bob"}
	id := func(p *inbound.Principal) string { return (&conn.User{Issuer: p.Issuer, Subject: p.Subject}).ID() }
	var u userSessions
	u.seen(session(0), alice)
	u.seen(session(1), alice)
	u.seen(session(1), alice)
	u.seen(session(2), bob)
	count := func(p *inbound.Principal) int { return len(u.sessionsOf(id(p))) }
	if count(alice) != 2 || count(bob) != 1 {
		t.Fatalf("alice's %d, bob's %d, want 2 and 1", count(alice), count(bob))
	}
	u.seen(session(1), bob)
	if count(alice) != 1 || count(bob) != 2 {
		t.Fatalf("after session 1 seen as bob: alice's %d, bob's %d, want 1 and 2", count(alice), count(bob))
	}
	clients[0].Close()
	deadline := time.Now().Add(5 * time.Second)
	for count(alice) != 0 {
		if time.Now().After(deadline) {
			t.Fatal("an ended session is still indexed")
		}
		time.Sleep(10 * time.Millisecond)
	}
}
