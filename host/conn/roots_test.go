package conn

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
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

// newEraRootsServer is a go-sdk server of 2026-07-28 (stateless
// streamable HTTP; the go-sdk serves that version over HTTP only so)
// counting on got the notifications/roots/list_changed it is sent (none
// should be: a server of that version asks for no roots outside a call).
func newEraRootsServer(t *testing.T, got *atomic.Int32) *config.Server {
	t.Helper()
	srv := mcp.NewServer(&mcp.Implementation{Name: "new"}, nil)
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{Stateless: true})
	return rootsCountingServer(t, "n", h, got, func(*http.Request) bool { return true })
}

// rootsCountingServer serves h as the HTTP server name, counting in got
// the notifications/roots/list_changed it is sent; before h handles one,
// held is called (it may wait), and h does not when held returns false.
func rootsCountingServer(t *testing.T, name string, h http.Handler, got *atomic.Int32, held func(*http.Request) bool) *config.Server {
	t.Helper()
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			if bytes.Contains(body, []byte(notificationRootsListChanged)) {
				got.Add(1)
				if !held(r) {
					return
				}
			}
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(func() { hs.CloseClientConnections(); hs.Close() })
	return &config.Server{Name: name, Transport: config.TransportHTTP, URL: hs.URL, Approved: true, ConnectTimeout: 5 * time.Second}
}

// TestClientRootsChanged: ClientRootsChanged (a front's client said its
// roots changed) sends notifications/roots/list_changed to the servers
// whose roots outside a call come from that client, and to no other: for
// no user (the stdio front's one client), the shared connections' of
// versions before 2026-07-28 (a 2026-07-28 one is sent none); for a user,
// that user's own connections of per-user servers. Each server told lists
// the roots again and is answered by OnListRoots anew. (Before, no server
// was told.)
func TestClientRootsChanged(t *testing.T) {
	t.Parallel()
	var gen atomic.Int32 // (the clients' roots change with it)
	userSeen, sharedSeen := make(chan string, 8), make(chan string, 8)
	per := rootsServer(t, userSeen)
	per.OAuth = &config.OAuth{Grant: config.GrantAuthorizationCode, PerUser: true, AllowLoopback: true}
	shared := rootsServer(t, sharedSeen)
	shared.Name = "s"
	var newEraGot atomic.Int32
	newer := newEraRootsServer(t, &newEraGot)
	m := NewManager([]*config.Server{per, shared, newer}, &Options{
		OnListRoots: func(_ context.Context, server string, u *User) (*mcp.ListRootsResult, error) {
			who := "sole"
			if u != nil {
				who = u.Subject
			}
			return &mcp.ListRootsResult{Roots: []*mcp.Root{{URI: fmt.Sprintf("file:///%s/%d", who, gen.Load())}}}, nil
		},
	})
	t.Cleanup(func() { m.Close() })
	// The per-user server's listings, by whose they are (the answer names
	// the user): a listing on the wrong user's channel shows that user's
	// connection was told of another's change.
	seenBy := map[string]chan string{"alice": make(chan string, 8), "bob": make(chan string, 8)}
	go func() {
		for s := range userSeen {
			who, _, _ := strings.Cut(strings.TrimPrefix(s, "file:///"), "/")
			if c := seenBy[who]; c != nil {
				c <- s
			}
		}
	}()
	alice := &User{Issuer: "https://i", Subject: "alice", Token: "t"}
	bob := &User{Issuer: "https://i", Subject: "bob", Token: "t"}
	if _, err := m.Session(context.Background(), "s"); err != nil {
		t.Fatal(err)
	}
	if got := nextSeen(t, sharedSeen); got != "file:///sole/0=" {
		t.Fatalf("at session start the shared server was told %q", got)
	}
	cs, err := m.Session(context.Background(), newer.Name)
	if err != nil {
		t.Fatal(err)
	}
	if v := cs.InitializeResult().ProtocolVersion; v != NewProtocol {
		t.Fatalf("the new server's session is of %s, want %s", v, NewProtocol)
	}
	for _, u := range []*User{alice, bob} {
		if _, err := m.Session(WithUser(context.Background(), u), per.Name); err != nil {
			t.Fatal(err)
		}
		if got, want := nextSeen(t, seenBy[u.Subject]), "file:///"+u.Subject+"/0="; got != want {
			t.Fatalf("at session start %s's server was told %q, want %q", u.Subject, got, want)
		}
	}
	// (A server told wrongly lists too, on its channel: the next case of
	// that channel reads its stale answer; the last cases of each channel
	// follow all the others.)
	for _, tc := range []struct {
		name string
		u    *User
		seen <-chan string // where the one server told lists the roots
		who  string
	}{
		{"the sole client", nil, sharedSeen, "sole"},
		{"alice's client", alice, seenBy["alice"], "alice"},
		{"bob's client", bob, seenBy["bob"], "bob"},
		{"alice's client again", alice, seenBy["alice"], "alice"},
		{"the sole client again", nil, sharedSeen, "sole"},
		{"bob's client again", bob, seenBy["bob"], "bob"},
		{"alice's client last", alice, seenBy["alice"], "alice"},
		{"the sole client last", nil, sharedSeen, "sole"},
	} {
		n := gen.Add(1)
		m.ClientRootsChanged(tc.u)
		if got, want := nextSeen(t, tc.seen), fmt.Sprintf("file:///%s/%d=", tc.who, n); got != want {
			t.Fatalf("%s: a server listed %q after the notification, want %q", tc.name, got, want)
		}
	}
	m.Close() // (waits for every notification's send)
	if n := newEraGot.Load(); n != 0 {
		t.Errorf("the 2026-07-28 server was sent notifications/roots/list_changed %d times", n)
	}
}

// blockingRootsServer is a go-sdk server of 2025-11-25 (stateful
// streamable HTTP) behind an HTTP handler that holds each POST carrying
// notifications/roots/list_changed until release is closed (or the
// request ends), counting them on got: so that a send of the
// notification waits as long as the test wants. (The go-sdk server queues
// notifications for its handlers and answers the POST at once: a blocking
// RootsListChangedHandler would not hold the sender.)
func blockingRootsServer(t *testing.T, release <-chan struct{}, got *atomic.Int32) *config.Server {
	t.Helper()
	srv := mcp.NewServer(&mcp.Implementation{Name: "held"}, nil)
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	return rootsCountingServer(t, "held", h, got, func(r *http.Request) bool {
		select {
		case <-release:
			return true
		case <-r.Context().Done():
			return false
		}
	})
}

// TestClientRootsChangedCoalesces: a client reporting its roots changed
// 1000 times while its server takes its time over the notification starts
// no goroutine per report: at most one notification is in flight to the
// server and one queued; the server is sent at most 2. (Before, each
// report started 2 goroutines, each waiting for the server, and the
// server was sent 1000.)
func TestClientRootsChangedCoalesces(t *testing.T) {
	release := make(chan struct{})
	var got atomic.Int32
	cfg := blockingRootsServer(t, release, &got)
	m := NewManager([]*config.Server{cfg}, &Options{
		OnListRoots: func(context.Context, string, *User) (*mcp.ListRootsResult, error) {
			return &mcp.ListRootsResult{}, nil
		},
	})
	t.Cleanup(func() { m.Close() })
	if _, err := m.Session(context.Background(), cfg.Name); err != nil {
		t.Fatal(err)
	}
	if n := reportThousand(t, m, release, &got, "reports", func(int) { m.ClientRootsChanged(nil) }); n > 2 {
		t.Errorf("the server was sent %d notifications, want at most 2", n)
	}
}

// reportThousand calls report 1000 times (what: its name, for the
// message) while m's server, blocked until release, counts the
// notifications it is sent in got; it fails the test if the server is
// sent none in 10 s or the calls left more than 20 goroutines running,
// then releases the server, closes m (which waits for the sends) and
// returns how many notifications the server was sent.
func reportThousand(t *testing.T, m *Manager, release chan struct{}, got *atomic.Int32, what string, report func(i int)) int32 {
	t.Helper()
	before := runtime.NumGoroutine()
	for i := range 1000 {
		report(i)
	}
	// (the first notification reaches the server)
	for deadline := time.Now().Add(10 * time.Second); got.Load() == 0; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the server was sent no notification")
		}
	}
	if n := runtime.NumGoroutine(); n > before+20 {
		t.Errorf("%d goroutines after 1000 %s, %d before", n, what, before)
	}
	close(release)
	m.Close()
	return got.Load()
}

// TestClientRootsChangedRacesClose: ClientRootsChanged and SetRoots while
// the Manager closes start no goroutine Close does not wait for (run with
// -race: before, the WaitGroup's Add could race Close's Wait).
func TestClientRootsChangedRacesClose(t *testing.T) {
	t.Parallel()
	// (a server that does not ask back: one asking a closing client
	// waits out its own 10 s before its session ends)
	url := rootstest.Server(t, 0, true, nil)
	cfg := &config.Server{Name: "r", Transport: config.TransportHTTP, URL: url, Approved: true, ConnectTimeout: 5 * time.Second}
	m := NewManager([]*config.Server{cfg}, &Options{
		OnListRoots: func(context.Context, string, *User) (*mcp.ListRootsResult, error) {
			return &mcp.ListRootsResult{}, nil
		},
	})
	if _, err := m.Session(context.Background(), cfg.Name); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Go(func() {
			for j := range 200 {
				m.ClientRootsChanged(nil)
				m.SetRoots([]*mcp.Root{{URI: fmt.Sprintf("file:///%d/%d", i, j)}})
			}
		})
	}
	m.Close()
	wg.Wait()
}

// TestSetRootsCoalesces: 1000 SetRoots while a server takes its time over
// the notification start at most one pass over the clients and queue one
// (which takes the latest roots): no goroutine per call. (Before, each
// call started a goroutine, each waiting for the one before.)
func TestSetRootsCoalesces(t *testing.T) {
	release := make(chan struct{})
	var got atomic.Int32
	cfg := blockingRootsServer(t, release, &got)
	m := NewManager([]*config.Server{cfg}, &Options{Roots: []*mcp.Root{{URI: "file:///0"}}})
	t.Cleanup(func() { m.Close() })
	if _, err := m.Session(context.Background(), cfg.Name); err != nil {
		t.Fatal(err)
	}
	report := func(i int) { m.SetRoots([]*mcp.Root{{URI: fmt.Sprintf("file:///%d", i+1)}}) }
	// (go-sdk notifies on each change of a client's roots: a pass sends
	// up to 2)
	if n := reportThousand(t, m, release, &got, "SetRoots", report); n > 4 {
		t.Errorf("the server was sent %d notifications, want at most 4", n)
	}
}
