// Package rootstest has what the tests of roots/list outside a call share
// (host, host/conn, the gateway's fronts): a go-sdk server that asks its
// client for its roots, outside any call, and reports what it was told.
package rootstest

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Ask lists the roots of ss's client outside any call, in a goroutine of
// its own (a server may not wait for its client on the session's read
// loop), bounded by wait, and sends on seen what it was told: the URIs
// joined by spaces, each as URI=NAME when names; or "error: …".
func Ask(ctx context.Context, ss *mcp.ServerSession, seen chan<- string, wait time.Duration, names bool) {
	go func() {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), wait)
		defer cancel()
		res, err := ss.ListRoots(ctx, nil)
		if err != nil {
			seen <- "error: " + err.Error()
			return
		}
		var uris []string
		for _, r := range res.Roots {
			if names {
				uris = append(uris, r.URI+"="+r.Name)
			} else {
				uris = append(uris, r.URI)
			}
		}
		seen <- strings.Join(uris, " ")
	}()
}

// When says when Server's server asks.
type When int

// The moments a Server asks.
const (
	AtStart  When = 1 << iota // when a session starts (initialized)
	OnChange                  // on each notifications/roots/list_changed
)

// Server is a go-sdk server named "rooted" that asks (Ask, 10 s) when
// says, served (Serve). It returns its URL.
func Server(t testing.TB, when When, names bool, seen chan<- string) string {
	t.Helper()
	opts := &mcp.ServerOptions{}
	if when&AtStart != 0 {
		opts.InitializedHandler = func(ctx context.Context, req *mcp.InitializedRequest) {
			Ask(ctx, req.Session, seen, 10*time.Second, names)
		}
	}
	if when&OnChange != 0 {
		opts.RootsListChangedHandler = func(ctx context.Context, req *mcp.RootsListChangedRequest) {
			Ask(ctx, req.Session, seen, 10*time.Second, names)
		}
	}
	return Serve(t, mcp.NewServer(&mcp.Implementation{Name: "rooted"}, opts))
}

// Serve serves srv over streamable HTTP, with sessions (so that it may ask
// its clients outside a call), until the test's end, when its sessions are
// closed first (a request of the server's may still wait). It returns the
// URL.
func Serve(t testing.TB, srv *mcp.Server) string {
	t.Helper()
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	t.Cleanup(func() {
		for ss := range srv.Sessions() {
			ss.Close()
		}
		hs.CloseClientConnections()
		hs.Close()
	})
	return hs.URL
}
