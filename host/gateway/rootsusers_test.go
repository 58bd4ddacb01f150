package gateway

import (
	"context"
	"testing"
	"testing/synctest"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A user's session is forgotten when it ends: a per-user server asking for
// roots outside any call is not sent to a closed session (and the entry
// does not outlive it).
func TestUserClientsForgetEndedSession(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		srv := mcp.NewServer(&mcp.Implementation{Name: "gw"}, nil)
		st, ct := mcp.NewInMemoryTransports()
		ss, err := srv.Connect(ctx, st, nil)
		if err != nil {
			t.Fatal(err)
		}
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "c"}, nil).Connect(ctx, ct, nil)
		if err != nil {
			t.Fatal(err)
		}
		var u UserClients
		u.seen("alice", ss)
		u.seen("alice", ss) // (every request of the session: one watcher)
		if u.get("alice") != ss {
			t.Fatal("the session was not recorded")
		}
		cs.Close()
		ss.Wait()
		synctest.Wait()
		if got := u.get("alice"); got != nil {
			t.Fatal("the ended session is still the user's")
		}
		u.mu.Lock()
		n := len(u.watched)
		u.mu.Unlock()
		if n != 0 {
			t.Fatalf("%d sessions still watched", n)
		}
	})
}
