package conn

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host/config"
)

// gatedHandler holds the POSTs whose body contains hold until release is
// closed, telling held of each. (A wrapper around a go-sdk server's
// handler: no server can be told to be slow at reading a notification or
// an initialize.)
func gatedHandler(next http.Handler, hold string, held chan<- struct{}, release <-chan struct{}) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			b, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(b))
			if strings.Contains(string(b), hold) {
				select {
				case held <- struct{}{}:
				default:
				}
				<-release
			}
		}
		next.ServeHTTP(w, r)
	})
}

func gatedRootsServer(t *testing.T, hold string, held chan<- struct{}, release <-chan struct{}) (*mcp.Server, *httptest.Server) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "rooted"}, nil)
	hs := httptest.NewServer(gatedHandler(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil), hold, held, release))
	t.Cleanup(func() { hs.CloseClientConnections(); hs.Close() })
	return srv, hs
}

// SetRoots returns at once though a server is slow to take its
// notifications/roots/list_changed: the notification is sent without
// holding the roots' lock, which a connect (adopt) takes.
func TestSetRootsDoesNotWaitForServers(t *testing.T) {
	held, release := make(chan struct{}, 1), make(chan struct{})
	_, hs := gatedRootsServer(t, "notifications/roots/list_changed", held, release)
	cfg := &config.Server{Name: "r", Transport: config.TransportHTTP, URL: hs.URL, Approved: true, ConnectTimeout: 5 * time.Second}
	m := NewManager([]*config.Server{cfg}, &Options{ProtocolVersion: LegacyProtocol, Roots: []*mcp.Root{{URI: "file:///a"}}})
	t.Cleanup(func() { close(release); m.Close() })
	if _, err := m.Session(context.Background(), "r"); err != nil {
		t.Fatal(err)
	}
	m.SetRoots([]*mcp.Root{{URI: "file:///b"}})
	<-held // (the notification is being sent, and held)
	done := make(chan struct{})
	go func() {
		m.SetRoots([]*mcp.Root{{URI: "file:///c"}})
		m.rootClients.adopt(mcp.NewClient(&mcp.Implementation{Name: "x"}, nil), "", false)()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("SetRoots (or a connect's adopt) waited for a server's notification")
	}
}

// A session whose connect was in flight when the roots changed is told
// the new ones: its client is tracked from before the connect.
func TestSetRootsDuringConnect(t *testing.T) {
	held, release := make(chan struct{}, 1), make(chan struct{})
	srv, hs := gatedRootsServer(t, `"method":"initialize"`, held, release)
	cfg := &config.Server{Name: "r", Transport: config.TransportHTTP, URL: hs.URL, Approved: true, ConnectTimeout: 5 * time.Second}
	m := NewManager([]*config.Server{cfg}, &Options{ProtocolVersion: LegacyProtocol, Roots: []*mcp.Root{{URI: "file:///old"}}})
	t.Cleanup(func() { m.Close() })
	ctx := context.Background()
	connected := make(chan error, 1)
	go func() {
		_, err := m.Session(ctx, "r")
		connected <- err
	}()
	<-held
	m.SetRoots([]*mcp.Root{{URI: "file:///new"}})
	close(release)
	if err := <-connected; err != nil {
		t.Fatal(err)
	}
	var got []string
	for deadline := time.Now().Add(5 * time.Second); ; {
		got = got[:0]
		for ss := range srv.Sessions() {
			res, err := ss.ListRoots(ctx, nil)
			if err != nil {
				// (The client's standalone stream, which carries the
				// server's request, may not be open yet just after the
				// connect: asked again until the deadline.)
				got = append(got, "error: "+err.Error())
				continue
			}
			for _, r := range res.Roots {
				got = append(got, r.URI)
			}
		}
		if strings.Join(got, " ") == "file:///new" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the server was told roots %q, want file:///new", got)
		}
		time.Sleep(10 * time.Millisecond) // (the notification pass runs after SetRoots returns)
	}
}
