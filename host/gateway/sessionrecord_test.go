package gateway_test

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host/state"
	"github.com/mcphost/mcphost/internal/sealbox"
)

// recordWrites is a shared state that keeps the last value written under
// each session record key (sess:…), as a reader of Redis would see it.
type recordWrites struct {
	state.Backend
	mu    sync.Mutex
	last  map[string][]byte
	order []string // the keys, in the order first written
}

func (r *recordWrites) Put(ctx context.Context, key string, value []byte, ttl time.Duration) error {
	if strings.HasPrefix(key, "sess:") {
		r.mu.Lock()
		if _, ok := r.last[key]; !ok {
			r.order = append(r.order, key)
		}
		r.last[key] = bytes.Clone(value)
		r.mu.Unlock()
	}
	return r.Backend.Put(ctx, key, value, ttl)
}

// TestSessionRecordSealed: a 2025-11-25 session's record in the shared
// state (its log level, the resources it subscribed to) is sealed and
// bound to the session: a reader of Redis learns neither, and a record
// written in clear (or for another session) is no record — the session is
// not rebuilt from it.
func TestSessionRecordSealed(t *testing.T) {
	t.Parallel()
	local, err := state.NewLocal(nil, "")
	if err != nil {
		t.Fatal(err)
	}
	st := &recordWrites{Backend: local, last: map[string][]byte{}}
	gws := replicas(t, 3, sealbox.Random(), st)
	rt := &steered{token: "anyone"} // (the replicas check no token)
	for _, g := range gws {
		rt.urls = append(rt.urls, g.url)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "rec"}, nil).Connect(ctx,
		&mcp.StreamableClientTransport{Endpoint: gws[0].url + "/", HTTPClient: &http.Client{Transport: rt}, MaxRetries: -1},
		&mcp.ClientSessionOptions{ProtocolVersion: oldProtocol})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	const uri = "demo://readme"
	if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: uri}); err != nil {
		t.Fatal(err)
	}
	if err := cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "critical"}); err != nil {
		t.Fatal(err)
	}
	// Another replica rebuilds the session from its id and its record.
	rt.target.Store(1)
	if _, err := cs.ListTools(ctx, nil); err != nil {
		t.Fatalf("on another replica: %v", err)
	}

	st.mu.Lock()
	var key string
	var val []byte
	for k, v := range st.last {
		key, val = k, v
	}
	n := len(st.last)
	st.mu.Unlock()
	if n != 1 {
		t.Fatalf("%d session records written; want 1", n)
	}
	for _, clear := range []string{uri, "critical", `"subs"`, `"by"`} {
		if bytes.Contains(val, []byte(clear)) {
			t.Errorf("the session's record shows %q in clear: %q", clear, val)
		}
	}

	// A party with access to the state writes the record in clear (as
	// earlier versions did): a replica that does not hold the session
	// finds no record, and the session is not found there.
	forged := []byte(`{"seen":` + "1" + `,"by":"0123456789abcdef","subs":["demo://whoami"]}`)
	if err := local.Put(ctx, key, forged, time.Hour); err != nil {
		t.Fatal(err)
	}
	rt.target.Store(2)
	_, err = cs.ListTools(ctx, nil)
	if !errors.Is(err, mcp.ErrSessionMissing) {
		t.Fatalf("a session rebuilt from a record in clear: err = %v; want session not found", err)
	}
	if testing.Verbose() {
		t.Logf("refused: %v", err)
	}
}

// TestSessionRecordBoundToSession: a session's sealed record put under
// another session's key (by a party with access to the shared state) is
// no record of that session: a replica that does not hold it does not
// rebuild it.
func TestSessionRecordBoundToSession(t *testing.T) {
	t.Parallel()
	local, err := state.NewLocal(nil, "")
	if err != nil {
		t.Fatal(err)
	}
	st := &recordWrites{Backend: local, last: map[string][]byte{}}
	gws := replicas(t, 2, sealbox.Random(), st)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	connect := func() (*mcp.ClientSession, *steered, string) {
		t.Helper()
		rt := &steered{token: "anyone", urls: []string{gws[0].url, gws[1].url}}
		st.mu.Lock()
		before := len(st.order)
		st.mu.Unlock()
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "rec"}, nil).Connect(ctx,
			&mcp.StreamableClientTransport{Endpoint: gws[0].url + "/", HTTPClient: &http.Client{Transport: rt}, MaxRetries: -1},
			&mcp.ClientSessionOptions{ProtocolVersion: oldProtocol})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.Close() })
		st.mu.Lock()
		defer st.mu.Unlock()
		if len(st.order) != before+1 {
			t.Fatalf("%d session records after a new session; want %d", len(st.order), before+1)
		}
		return cs, rt, st.order[before]
	}
	_, _, keyA := connect()
	csB, rtB, keyB := connect()
	st.mu.Lock()
	sealedA := st.last[keyA]
	st.mu.Unlock()
	if err := local.Put(ctx, keyB, sealedA, time.Hour); err != nil {
		t.Fatal(err)
	}
	rtB.target.Store(1)
	if _, err := csB.ListTools(ctx, nil); !errors.Is(err, mcp.ErrSessionMissing) {
		t.Fatalf("a session rebuilt from another session's record: err = %v; want session not found", err)
	}
}
