package gateway_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/gateway"
	"github.com/mcphost/mcphost/host/gateway/streamable"
	"github.com/mcphost/mcphost/host/permissions"
	"github.com/mcphost/mcphost/host/state"
	"github.com/mcphost/mcphost/internal/demoserver"
	"github.com/mcphost/mcphost/internal/sealbox"
	"github.com/mcphost/mcphost/internal/testing/fakeas"
)

// roundRobin sends each request to the next of urls, in turn (a balancer
// with no affinity), and counts where each went.
type roundRobin struct {
	urls []string
	next atomic.Uint64
	hits []atomic.Int64
}

func (rr *roundRobin) RoundTrip(r *http.Request) (*http.Response, error) {
	i := int(rr.next.Add(1)-1) % len(rr.urls)
	rr.hits[i].Add(1)
	r = r.Clone(r.Context())
	u := *r.URL
	target := strings.TrimPrefix(rr.urls[i], "http://")
	u.Host, r.Host = target, target
	r.URL = &u
	return http.DefaultTransport.RoundTrip(r)
}

// steered sends every request to the replica the test chose (target), as
// user token's.
type steered struct {
	urls   []string
	token  string
	target atomic.Int64
}

func (st *steered) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	u := *r.URL
	addr := strings.TrimPrefix(st.urls[st.target.Load()], "http://")
	u.Host, r.Host = addr, addr
	r.URL = &u
	r.Header.Set("Authorization", "Bearer "+st.token)
	return http.DefaultTransport.RoundTrip(r)
}

// newRoundRobin balances over gws.
func newRoundRobin(gws []*ptGateway) *roundRobin {
	rr := &roundRobin{hits: make([]atomic.Int64, len(gws))}
	for _, p := range gws {
		rr.urls = append(rr.urls, p.url)
	}
	return rr
}

// loginReplicas starts two replicas of a server behind as (its OAuth
// logins by loopback), sharing keys and a local state whose token saves
// are announced, and a balancer over them.
func loginReplicas(t *testing.T, as *fakeas.Server) ([]*ptGateway, *roundRobin) {
	t.Helper()
	keys := sealbox.Random()
	st, err := state.NewLocal(nil, "")
	if err != nil {
		t.Fatal(err)
	}
	prot := &config.Server{Name: "prot", Transport: "http", URL: as.URL(), OAuth: &config.OAuth{AllowLoopback: true}, Approved: true, ConnectTimeout: 10 * time.Second}
	var gws []*ptGateway
	for range 2 {
		gws = append(gws, ptServe(t, ptOptions{servers: []*config.Server{prot}, tokens: state.AnnouncedTokens(st), gopts: &gateway.Options{Keys: keys, State: st}}))
	}
	return gws, newRoundRobin(gws)
}

// replicas starts n gateways sharing keys and state, as replicas behind a
// balancer.
func replicas(t *testing.T, n int, keys *sealbox.Keys, st state.Backend) []*ptGateway {
	t.Helper()
	var out []*ptGateway
	for range n {
		out = append(out, ptServe(t, ptOptions{servers: []*config.Server{demo("a", "-passthrough")}, gopts: &gateway.Options{Keys: keys, State: st}}))
	}
	return out
}

// TestSessionsAcrossReplicas: a session of a client before 2026-07-28 is
// served by whichever replica its request reaches (none is sticky): its
// calls, relayed or not, its log level set on one replica and honoured by
// the others, and its end (DELETE) on one seen by all. An id sealed with
// other keys is no session anywhere.
func TestSessionsAcrossReplicas(t *testing.T) {
	t.Parallel()
	keys := sealbox.Random()
	st, err := state.NewLocal(nil, "")
	if err != nil {
		t.Fatal(err)
	}
	gws := replicas(t, 3, keys, st)
	rr := newRoundRobin(gws)
	ctx := context.Background()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "rr"}, nil).Connect(ctx,
		&mcp.StreamableClientTransport{Endpoint: gws[0].url + "/", HTTPClient: &http.Client{Transport: rr}, DisableStandaloneSSE: true},
		&mcp.ClientSessionOptions{ProtocolVersion: oldProtocol})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	for i := range 9 {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "mcp__a__echo", Arguments: map[string]any{"message": "hi"}})
		if err != nil || res.IsError || textOf(res) != "hi" {
			t.Fatalf("call %d: %v %+v", i, err, res)
		}
	}
	for i := range rr.hits {
		if rr.hits[i].Load() == 0 {
			t.Fatalf("replica %d got no request: %v", i, rr.urls)
		}
	}
	var relayed uint64
	for _, p := range gws {
		relayed += p.g.RelayedCalls()
	}
	if relayed != 9 {
		t.Errorf("%d calls relayed, want 9 (a rebuilt session's calls are relayed too)", relayed)
	}

	// A log level set on one replica: each replica then takes the go-sdk
	// path for the session's calls (their log messages go on the call's
	// stream), and forwards the messages at that level.
	if err := cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "warning"}); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		before := relayed
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "mcp__a__echo", Arguments: map[string]any{"message": "x"}})
		if err != nil || res.IsError {
			t.Fatalf("call %d after setLevel: %v %+v", i, err, res)
		}
		relayed = 0
		for _, p := range gws {
			relayed += p.g.RelayedCalls()
		}
		if relayed != before {
			t.Errorf("call %d after setLevel was relayed (a replica missed the level)", i)
		}
	}

	sid := cs.ID()
	if len(sid) > 1024 {
		t.Errorf("session id of %d bytes", len(sid))
	}
	cs.Close() // DELETE, on one replica
	for i, p := range gws {
		resp, _ := post(t, p.url, `{"jsonrpc":"2.0","id":5,"method":"ping"}`, map[string]string{"Mcp-Session-Id": sid, "Mcp-Protocol-Version": oldProtocol})
		if resp.StatusCode != http.StatusNotFound {
			t.Errorf("replica %d after DELETE: %s, want 404", i, resp.Status)
		}
	}

	// A session of a gateway with other keys is no session here.
	other := replicas(t, 1, sealbox.Random(), st)[0]
	resp, _ := post(t, other.url, initialize, nil)
	foreign := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != http.StatusOK || foreign == "" {
		t.Fatalf("initialize: %s", resp.Status)
	}
	resp, _ = post(t, gws[0].url, `{"jsonrpc":"2.0","id":5,"method":"ping"}`, map[string]string{"Mcp-Session-Id": foreign})
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("a session sealed with other keys: %s, want 404", resp.Status)
	}
}

// TestAnswersAcrossReplicas: a call that asks its client (elicitation)
// runs on the replica its POST reached; the client's answer, POSTed on the
// session, reaches another replica (round robin), which passes it on: the
// call completes, by the relay path (its own request ids) and by the
// go-sdk path (a session with a log level; ids of the go-sdk session).
func TestAnswersAcrossReplicas(t *testing.T) {
	t.Parallel()
	keys := sealbox.Random()
	st, err := state.NewLocal(nil, "")
	if err != nil {
		t.Fatal(err)
	}
	gws := replicas(t, 2, keys, st)
	rr := newRoundRobin(gws)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "rr"}, &mcp.ClientOptions{ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"answer": "yes"}}, nil
	}}).Connect(ctx,
		&mcp.StreamableClientTransport{Endpoint: gws[0].url + "/", HTTPClient: &http.Client{Transport: rr}, DisableStandaloneSSE: true},
		&mcp.ClientSessionOptions{ProtocolVersion: oldProtocol})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	for _, path := range []string{"relay", "go-sdk"} {
		if path == "go-sdk" {
			if err := cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "error"}); err != nil {
				t.Fatal(err)
			}
		}
		for i := range 4 { // (the call and its answer alternate between the two replicas)
			before := rr.next.Load()
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "mcp__a__ask", Arguments: map[string]any{"question": "ok?"}})
			if err != nil || res.IsError || textOf(res) != "answer: yes" {
				t.Fatalf("%s, call %d: %v %+v", path, i, err, res)
			}
			if n := rr.next.Load() - before; n != 2 {
				t.Fatalf("%s, call %d: %d requests, want the call and its answer", path, i, n)
			}
		}
	}
}

// TestLoginAcrossReplicas: a 2026-07-28 client calls an authenticate
// pseudo-tool on one replica, which starts the login; its retry (the
// login's answer) reaches the other replica, which waits for the login the
// first runs and answers with the server's tools; then both replicas serve
// the server with that one login (the second adopts the stored
// credentials, told of them by the shared state).
func TestLoginAcrossReplicas(t *testing.T) {
	t.Parallel()
	as := fakeas.New()
	defer as.Close()
	gws, rr := loginReplicas(t, as)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var asked atomic.Int64
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "rr"}, &mcp.ClientOptions{
		Capabilities: &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{URL: &mcp.URLElicitationCapabilities{}}},
		ElicitationHandler: func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			asked.Add(1)
			follow(ctx, req.Params.URL)
			return &mcp.ElicitResult{Action: "accept"}, nil
		},
	}).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: gws[0].url + "/", HTTPClient: &http.Client{Transport: rr}}, &mcp.ClientSessionOptions{ProtocolVersion: newProtocol})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	// The call and its retry go to different replicas (two, in turn).
	before := rr.next.Load()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "mcp__prot__authenticate", Arguments: map[string]any{}})
	if err != nil || res.IsError || !strings.Contains(textOf(res), "mcp__prot__whoami") {
		t.Fatalf("authenticate, its retry on the other replica: %v %+v %q", err, res, textOf(res))
	}
	if n := rr.next.Load() - before; n != 2 || asked.Load() != 1 {
		t.Fatalf("%d requests, %d logins; want the call and its retry, one login", n, asked.Load())
	}
	for i := range 4 {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "mcp__prot__whoami", Arguments: map[string]any{}})
		if err != nil || res.IsError || textOf(res) != "you" {
			t.Fatalf("whoami %d after the login: %v %+v", i, err, res)
		}
	}
	if n := len(as.Requests("/authorize")); n != 1 {
		t.Errorf("%d authorizations, want 1", n)
	}
}

// TestSubscriptionsAcrossReplicas: a 2025-11-25 client's subscription,
// made on whichever replica its request reaches, is in place on the
// replica holding its standalone stream (GET): each update of the resource
// (the upstream, one HTTP server all replicas use, told through a tool
// call that reaches any replica) reaches the client exactly once; after
// its unsubscription, none does.
func TestSubscriptionsAcrossReplicas(t *testing.T) {
	t.Parallel()
	upstream := httptest.NewServer(mcp.NewStreamableHTTPHandler(func() func(*http.Request) *mcp.Server {
		srv := demoserver.New(&demoserver.Options{Name: "a", Passthrough: true})
		return func(*http.Request) *mcp.Server { return srv }
	}(), nil))
	t.Cleanup(upstream.Close)
	keys := sealbox.Random()
	st, err := state.NewLocal(nil, "")
	if err != nil {
		t.Fatal(err)
	}
	a := &config.Server{Name: "a", Transport: "http", URL: upstream.URL, Approved: true, ConnectTimeout: 10 * time.Second}
	var gws []*ptGateway
	for range 3 {
		gws = append(gws, ptServe(t, ptOptions{servers: []*config.Server{a}, gopts: &gateway.Options{Keys: keys, State: st}}))
	}
	rr := newRoundRobin(gws)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	updates := make(chan string, 64)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "rr"}, &mcp.ClientOptions{
		ResourceUpdatedHandler: func(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) { updates <- req.Params.URI },
	}).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: gws[0].url + "/", HTTPClient: &http.Client{Transport: rr}}, &mcp.ClientSessionOptions{ProtocolVersion: oldProtocol})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	touch := func(uri string) {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "mcp__a__touch", Arguments: map[string]any{"uri": uri}})
		if err != nil || res.IsError {
			t.Fatalf("touch %s: %v %+v", uri, err, res)
		}
	}
	next := func(wait time.Duration) (string, bool) {
		select {
		case u := <-updates:
			return u, true
		case <-time.After(wait): // (waiting for a notification that may not come)
			return "", false
		}
	}
	const readme, whoami = "demo://readme", "demo://whoami"
	if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: readme}); err != nil {
		t.Fatal(err)
	}
	// Replayed on the other replicas within milliseconds: the first
	// update may precede it on the replica holding the stream.
	got := false
	for range 20 {
		touch(readme)
		if _, got = next(200 * time.Millisecond); got {
			break
		}
	}
	if !got {
		t.Fatal("no update of the subscribed resource reached the client")
	}
	for drained := false; !drained; { // (a late one of the first touches)
		_, got := next(100 * time.Millisecond)
		drained = !got
	}
	// Every update, its touch on any replica, reaches the client once.
	const n = 6
	for i := range n {
		touch(readme)
		if u, ok := next(5 * time.Second); !ok || u != readme {
			t.Fatalf("update %d: %q %v", i, u, ok)
		}
	}
	if u, ok := next(100 * time.Millisecond); ok {
		t.Fatalf("an update of %q more than once", u)
	}
	// Unsubscribed on one replica: on none, once the others have replayed
	// the unsubscription (within milliseconds; until then an update of a
	// touch on a replica that has not yet may still come, as an update
	// sent just before an unsubscription may reach a client after it).
	// Each round touches the resource on every replica (the calls go round
	// robin), then waits for updates; a round without any ends the wait,
	// and updates that keep coming for 5 s fail the test.
	if err := cs.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: readme}); err != nil {
		t.Fatal(err)
	}
	quiet := false
	for deadline := time.Now().Add(5 * time.Second); !quiet && time.Now().Before(deadline); {
		for range len(gws) {
			touch(readme)
		}
		quiet = true
		for {
			if _, got := next(300 * time.Millisecond); !got {
				break
			}
			quiet = false
		}
	}
	if !quiet {
		t.Fatalf("updates of %s kept coming 5 s after its unsubscription", readme)
	}
	// A later subscription of the session works too: like the first, it is
	// replayed on the replica holding the stream in the background, after
	// the subscribe was answered, so the update of a touch made at once may
	// be missed there (the client's next request can outrun that replay);
	// touches are repeated until one's update comes, then each comes once.
	if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: whoami}); err != nil {
		t.Fatal(err)
	}
	got = false
	for deadline := time.Now().Add(5 * time.Second); !got && time.Now().Before(deadline); {
		touch(whoami)
		var u string
		if u, got = next(200 * time.Millisecond); got && u != whoami {
			t.Fatalf("an update of %q after its unsubscription", u)
		}
	}
	if !got {
		t.Fatal("no update of the second subscription")
	}
	for drained := false; !drained; { // (a late one of the first touches)
		u, got := next(100 * time.Millisecond)
		if got && u != whoami {
			t.Fatalf("an update of %q after its unsubscription", u)
		}
		drained = !got
	}
	for i := range 3 {
		touch(whoami)
		if u, ok := next(5 * time.Second); !ok || u != whoami {
			t.Fatalf("update %d of the second subscription: %q %v", i, u, ok)
		}
	}
	if u, ok := next(100 * time.Millisecond); ok {
		t.Fatalf("an update of %q more than once", u)
	}
}

// TestReplayDoesNotBlockDelivery: a subscription replayed on another
// replica subscribes upstream there; an upstream that takes its time (here:
// every subscribe after the first waits until the test ends) holds up that
// replay only — not the delivery of the shared state's messages, which with
// the local backend runs on the publisher's goroutine, so the client's own
// subscribe (and every answer, cancellation and level change) would wait
// on the other replica's upstream.
func TestReplayDoesNotBlockDelivery(t *testing.T) {
	t.Parallel()
	release := make(chan struct{}) // closed before the session ends (deferred after its Close)
	var subscribes atomic.Int64
	srv := mcp.NewServer(&mcp.Implementation{Name: "slow"}, &mcp.ServerOptions{
		SubscribeHandler: func(ctx context.Context, _ *mcp.SubscribeRequest) error {
			if subscribes.Add(1) > 1 {
				select {
				case <-release:
				case <-ctx.Done():
				}
			}
			return nil
		},
		UnsubscribeHandler: func(context.Context, *mcp.UnsubscribeRequest) error { return nil },
	})
	srv.AddResource(&mcp.Resource{URI: "slow://r", Name: "r"}, func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: "slow://r", Text: "r"}}}, nil
	})
	upstream := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	t.Cleanup(upstream.Close)
	keys := sealbox.Random()
	st, err := state.NewLocal(nil, "")
	if err != nil {
		t.Fatal(err)
	}
	cfg := &config.Server{Name: "slow", Transport: "http", URL: upstream.URL, Approved: true, ConnectTimeout: 10 * time.Second}
	var gws []*ptGateway
	for range 2 {
		gws = append(gws, ptServe(t, ptOptions{servers: []*config.Server{cfg}, gopts: &gateway.Options{Keys: keys, State: st}}))
	}
	rr := newRoundRobin(gws)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "rr"}, nil).Connect(ctx,
		&mcp.StreamableClientTransport{Endpoint: gws[0].url + "/", HTTPClient: &http.Client{Transport: rr}, DisableStandaloneSSE: true},
		&mcp.ClientSessionOptions{ProtocolVersion: oldProtocol})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	defer close(release)
	for range 2 { // both replicas hold the session
		if err := cs.Ping(ctx, nil); err != nil {
			t.Fatal(err)
		}
	}
	sctx, scancel := context.WithTimeout(ctx, 5*time.Second)
	defer scancel()
	if err := cs.Subscribe(sctx, &mcp.SubscribeParams{URI: "slow://r"}); err != nil {
		t.Fatalf("subscribe, replayed on the other replica whose upstream subscribe waits: %v", err)
	}
	for i := range 4 { // and the session goes on, on both replicas
		if err := cs.SetLoggingLevel(sctx, &mcp.SetLoggingLevelParams{Level: []mcp.LoggingLevel{"info", "error"}[i%2]}); err != nil {
			t.Fatalf("setLevel %d: %v", i, err)
		}
	}
}

// TestReplayedSubscriptionChecked: a session's subscriptions, made on
// replica A whose rules allow them, are replayed on replica B when it
// rebuilds the session — those B's own rules allow its principal (B's may
// differ: a reload there came first). A subscription refused there does
// not hold up the others: each session subscribes to one resource of a
// server B denies to alice and to one of a server B allows her, and B
// replays them in any order. Once B's rules are reloaded without the
// deny, what it set aside is subscribed. The upstreams count the
// subscriptions they are asked for, by resource: one per replica
// subscribed.
func TestReplayedSubscriptionChecked(t *testing.T) {
	t.Parallel()
	const sessions = 12
	var subscribes sync.Map // URI → *atomic.Int64
	upstream := func(name string) *config.Server {
		srv := mcp.NewServer(&mcp.Implementation{Name: name}, &mcp.ServerOptions{
			SubscribeHandler: func(_ context.Context, req *mcp.SubscribeRequest) error {
				n, _ := subscribes.LoadOrStore(req.Params.URI, new(atomic.Int64))
				n.(*atomic.Int64).Add(1)
				return nil
			},
			UnsubscribeHandler: func(context.Context, *mcp.UnsubscribeRequest) error { return nil },
		})
		for i := range sessions + 1 {
			uri := fmt.Sprintf("%s://r%d", name, i)
			srv.AddResource(&mcp.Resource{URI: uri, Name: fmt.Sprint("r", i)}, func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
				return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, Text: "r"}}}, nil
			})
		}
		hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
		t.Cleanup(hs.Close)
		return &config.Server{Name: name, Transport: "http", URL: hs.URL, Approved: true, ConnectTimeout: 10 * time.Second}
	}
	servers := []*config.Server{upstream("res"), upstream("oth")}
	count := func(uri string) int64 {
		n, ok := subscribes.Load(uri)
		if !ok {
			return 0
		}
		return n.(*atomic.Int64).Load()
	}
	st, err := state.NewLocal(nil, "")
	if err != nil {
		t.Fatal(err)
	}
	verify := gateway.UsersVerifier("alice", "bob")
	denyAlice := config.PermissionRule{Behavior: permissions.Deny, Pattern: "mcp__res",
		For: &permissions.Principals{Subjects: []string{"alice"}}, Origin: config.Origin{Scope: config.ScopeUser, File: "u.hcl"}}
	keys := sealbox.Random()
	var gws []*ptGateway
	for _, rules := range [][]config.PermissionRule{nil, {denyAlice}} {
		gws = append(gws, ptServe(t, ptOptions{servers: servers, rules: rules,
			http:  &streamable.Options{OAuth: &streamable.InboundOAuth{Verify: verify, Resource: "http://gateway.example/mcp"}},
			gopts: &gateway.Options{Keys: keys, State: st}}))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// session i subscribes on A to res://ri and oth://ri, then reaches B.
	session := func(i int, user string) {
		t.Helper()
		router := &steered{urls: []string{gws[0].url, gws[1].url}, token: user}
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "sub"}, nil).Connect(ctx,
			&mcp.StreamableClientTransport{Endpoint: gws[0].url + "/", HTTPClient: &http.Client{Transport: router}, DisableStandaloneSSE: true},
			&mcp.ClientSessionOptions{ProtocolVersion: oldProtocol})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.Close() })
		for _, uri := range []string{fmt.Sprintf("res://r%d", i), fmt.Sprintf("oth://r%d", i)} {
			if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: uri}); err != nil {
				t.Fatalf("%s subscribes to %s on A: %v", user, uri, err)
			}
		}
		router.target.Store(1)
		if err := cs.Ping(ctx, nil); err != nil { // B rebuilds the session, and replays
			t.Fatal(err)
		}
		gws[1].f.WaitReplays()
	}
	for i := range sessions {
		session(i, "alice")
		if got := count(fmt.Sprintf("res://r%d", i)); got != 1 {
			t.Errorf("alice's res://r%d: %d upstream subscriptions, want 1 (A's; B denies it to her)", i, got)
		}
		if got := count(fmt.Sprintf("oth://r%d", i)); got != 2 {
			t.Errorf("alice's oth://r%d: %d upstream subscriptions, want 2 (A's and B's)", i, got)
		}
	}
	session(sessions, "bob")
	for _, uri := range []string{fmt.Sprintf("res://r%d", sessions), fmt.Sprintf("oth://r%d", sessions)} {
		if got := count(uri); got != 2 {
			t.Errorf("bob's %s: %d upstream subscriptions, want 2 (A's and B's)", uri, got)
		}
	}
	// B's rules reloaded without the deny: the subscriptions it set aside
	// are tried again, and made.
	if _, err := gws[1].h.Reload(ctx, &config.Config{Servers: servers, DefaultMode: "allow_all"}, time.Second); err != nil {
		t.Fatal(err)
	}
	for i := range sessions {
		uri := fmt.Sprintf("res://r%d", i)
		for count(uri) < 2 && ctx.Err() == nil {
			time.Sleep(10 * time.Millisecond) // (polling for the replay the reload led to)
		}
		if got := count(uri); got != 2 {
			t.Fatalf("alice's %s after B's reload: %d upstream subscriptions, want 2", uri, got)
		}
	}
}

// TestLoginRetryIsItsOwnAcrossReplicas: a user's first login ran on
// replica A (call and retry there); after a logout, the same user's second
// login starts on B and fails (the browser brings back a code the
// authorization server did not issue), and its retry reaches A: the retry
// reports the second login's failure, not the first one's success that A
// still remembers.
func TestLoginRetryIsItsOwnAcrossReplicas(t *testing.T) {
	t.Parallel()
	as := fakeas.New()
	defer as.Close()
	gws, rr := loginReplicas(t, as)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var spoil atomic.Bool
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "rr"}, &mcp.ClientOptions{
		Capabilities: &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{URL: &mcp.URLElicitationCapabilities{}}},
		ElicitationHandler: func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			if spoil.Load() {
				followSpoiled(ctx, t, req.Params.URL)
			} else {
				follow(ctx, req.Params.URL)
			}
			rr.next.Store(0) // the retry reaches A
			return &mcp.ElicitResult{Action: "accept"}, nil
		},
	}).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: gws[0].url + "/", HTTPClient: &http.Client{Transport: rr}}, &mcp.ClientSessionOptions{ProtocolVersion: newProtocol})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	rr.next.Store(0) // the first login's call on A
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "mcp__prot__authenticate", Arguments: map[string]any{}})
	if err != nil || res.IsError {
		t.Fatalf("first login, on A: %v %q", err, textOf(res))
	}
	// Logged out (on both replicas, which expose the authenticate tool
	// again), the user logs in again.
	for _, p := range gws {
		p.h.Logout(ctx, "prot")
		p.g.Sync(ctx)
	}
	spoil.Store(true)
	rr.next.Store(1) // the second login's call on B
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "mcp__prot__authenticate", Arguments: map[string]any{}})
	if err != nil || !res.IsError || !strings.Contains(textOf(res), "invalid_grant") {
		t.Fatalf("second login, on B, failing; its retry on A: %v %+v %q; want its failure", err, res, textOf(res))
	}
	if n := len(as.Requests("/authorize")); n != 2 {
		t.Errorf("%d authorizations, want 2", n)
	}
}

// followSpoiled completes a login in the browser with a code the
// authorization server did not issue: the login fails (invalid_grant).
func followSpoiled(ctx context.Context, t *testing.T, u string) {
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	resp, err := noRedirect.Do(req)
	if err != nil {
		t.Error(err)
		return
	}
	resp.Body.Close()
	callback := resp.Header.Get("Location")
	if !strings.Contains(callback, "code=") {
		t.Errorf("the authorization server redirected to %q", callback)
		return
	}
	follow(ctx, strings.Replace(callback, "code=", "code=spoiled", 1))
}

// streamCutter sends a session's POSTs and DELETEs to the first replica
// and its standalone stream (GET) to the replica the test chose (getTo);
// cut ends the open stream as a replica going away would.
type streamCutter struct {
	urls   []string
	getTo  atomic.Int64
	opened chan struct{} // a GET was answered 200

	mu     sync.Mutex
	stream io.Closer // the open GET's body
}

func (sc *streamCutter) RoundTrip(r *http.Request) (*http.Response, error) {
	i := 0
	if r.Method == http.MethodGet {
		i = int(sc.getTo.Load())
	}
	r = r.Clone(r.Context())
	u := *r.URL
	addr := strings.TrimPrefix(sc.urls[i], "http://")
	u.Host, r.Host = addr, addr
	r.URL = &u
	resp, err := http.DefaultTransport.RoundTrip(r)
	if err == nil && r.Method == http.MethodGet && resp.StatusCode == http.StatusOK {
		sc.mu.Lock()
		sc.stream = resp.Body
		sc.mu.Unlock()
		sc.opened <- struct{}{}
	}
	return resp, err
}

// cut ends the open GET's stream: the client reads an error and opens it
// again.
func (sc *streamCutter) cut() {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	sc.stream.Close()
}

// reopenClient connects a 2025-11-25 client to gws through a new
// streamCutter, waits for its first standalone stream, and returns the
// client, the cutter and the URIs of the updates it gets.
func reopenClient(ctx context.Context, t *testing.T, gws []*ptGateway) (*mcp.ClientSession, *streamCutter, chan string) {
	t.Helper()
	sc := &streamCutter{opened: make(chan struct{}, 8)}
	for _, p := range gws {
		sc.urls = append(sc.urls, p.url)
	}
	updates := make(chan string, 16)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "reopen"}, &mcp.ClientOptions{
		ResourceUpdatedHandler: func(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) { updates <- req.Params.URI },
	}).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: gws[0].url + "/", HTTPClient: &http.Client{Transport: sc}}, &mcp.ClientSessionOptions{ProtocolVersion: oldProtocol})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	sc.awaitOpen(ctx, t, "the client opened no stream")
	return cs, sc, updates
}

// awaitOpen waits for a GET answered 200.
func (sc *streamCutter) awaitOpen(ctx context.Context, t *testing.T, failure string) {
	t.Helper()
	select {
	case <-sc.opened:
	case <-ctx.Done():
		t.Fatal(failure)
	}
}

// reopenOn cuts the open stream and waits for the client to open it
// again, on the replica i.
func (sc *streamCutter) reopenOn(ctx context.Context, t *testing.T, i int) {
	t.Helper()
	sc.getTo.Store(int64(i))
	sc.cut()
	sc.awaitOpen(ctx, t, "the client did not open its stream again")
}

// TestStreamReopenTellsSubscriptions: an update of a subscribed resource
// made while a 2025-11-25 client's standalone stream is down has nowhere
// to go; so the stream it opens again — on the same gateway, or on
// another replica after the one holding it went away — starts with an
// update of each resource it is subscribed to, and of no other (one it
// unsubscribed from), each once. No upstream update is made in the test:
// on the old code nothing arrives.
func TestStreamReopenTellsSubscriptions(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		replicas int
		reopenOn int
	}{
		{name: "same gateway", replicas: 1, reopenOn: 0},
		{name: "another replica", replicas: 2, reopenOn: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			st, err := state.NewLocal(nil, "")
			if err != nil {
				t.Fatal(err)
			}
			gws := replicas(t, tc.replicas, sealbox.Random(), st)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			cs, sc, updates := reopenClient(ctx, t, gws) // (its first stream opened before any subscription)
			const readme, whoami = "demo://readme", "demo://whoami"
			for _, uri := range []string{readme, whoami} {
				if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: uri}); err != nil {
					t.Fatal(err)
				}
			}
			if err := cs.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: whoami}); err != nil {
				t.Fatal(err)
			}
			for _, p := range gws {
				p.f.WaitReplays()
			}
			sc.reopenOn(ctx, t, tc.reopenOn)
			select {
			case u := <-updates:
				if u != readme {
					t.Fatalf("update of %q, want %q", u, readme)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("the reopened stream told of no subscribed resource")
			}
			select {
			case u := <-updates: // (waiting for an update that must not come)
				t.Fatalf("another update, of %q", u)
			case <-time.After(300 * time.Millisecond):
			}
		})
	}
}

// TestStreamReopenAfterReplay: a standalone stream reopened on a replica
// that rebuilds the session there opens once the session's subscriptions
// are replayed (subscribed upstream) on it: an update right after the
// catch-up one reaches the client. The upstream takes 500 ms to subscribe
// the second replica; on the old code the catch-up update came first, and
// an update in that time was lost.
func TestStreamReopenAfterReplay(t *testing.T) {
	t.Parallel()
	var subscribes atomic.Int64
	srv := mcp.NewServer(&mcp.Implementation{Name: "slow"}, &mcp.ServerOptions{
		SubscribeHandler: func(ctx context.Context, _ *mcp.SubscribeRequest) error {
			if subscribes.Add(1) > 1 {
				select {
				case <-time.After(500 * time.Millisecond): // (an upstream slow to subscribe)
				case <-ctx.Done():
				}
			}
			return nil
		},
		UnsubscribeHandler: func(context.Context, *mcp.UnsubscribeRequest) error { return nil },
	})
	const uri = "slow://r"
	srv.AddResource(&mcp.Resource{URI: uri, Name: "r"}, func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, Text: "r"}}}, nil
	})
	upstream := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	t.Cleanup(upstream.Close)
	st, err := state.NewLocal(nil, "")
	if err != nil {
		t.Fatal(err)
	}
	keys := sealbox.Random()
	cfg := &config.Server{Name: "slow", Transport: "http", URL: upstream.URL, Approved: true, ConnectTimeout: 10 * time.Second}
	var gws []*ptGateway
	for range 2 {
		gws = append(gws, ptServe(t, ptOptions{servers: []*config.Server{cfg}, gopts: &gateway.Options{Keys: keys, State: st}}))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, sc, updates := reopenClient(ctx, t, gws)
	if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: uri}); err != nil { // on A only: B has not seen the session
		t.Fatal(err)
	}
	sc.reopenOn(ctx, t, 1)
	for i, what := range []string{"the catch-up update", "the update right after it"} {
		select {
		case u := <-updates:
			if u != uri {
				t.Fatalf("%s: of %q, want %q", what, u, uri)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("%s never reached the client", what)
		}
		if i == 0 {
			if err := srv.ResourceUpdated(ctx, &mcp.ResourceUpdatedNotificationParams{URI: uri}); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// TestRebuiltSessionsAdmitted (issue 33 item 3): a session rebuilt on a
// replica that did not hold it takes a slot of that replica's max_sessions
// and of its principal's share there, as one opened there does. Over them,
// the least recently used copy rebuilt there with nothing in progress (of
// the principal, for its share) is dropped first, so that a client whose
// requests go to every replica in turn does not fill them all; only when
// every copy is in use (here a standalone stream open on it) is the request
// refused 503 with the JSON-RPC error of a new session. A dropped or
// refused session is not lost (its record is shared), and a DELETE of a
// session the full replica does not hold ends it without rebuilding it.
func TestRebuiltSessionsAdmitted(t *testing.T) {
	t.Parallel()
	keys := sealbox.Random()
	st, err := state.NewLocal(nil, "")
	if err != nil {
		t.Fatal(err)
	}
	oauth := &streamable.InboundOAuth{Verify: gateway.UsersVerifier("alice", "bob", "carol"), Resource: "http://gateway.example/mcp"}
	replica := func(o *streamable.Options) *ptGateway {
		o.OAuth = oauth
		return ptServe(t, ptOptions{servers: []*config.Server{demo("a", "-passthrough")}, gopts: &gateway.Options{Keys: keys, State: st}, http: o})
	}
	a := replica(&streamable.Options{})
	b := replica(&streamable.Options{MaxSessions: 3, MaxSessionsPerPrincipal: 2})
	sessions := map[string][]string{}
	for user, n := range map[string]int{"alice": 3, "bob": 2, "carol": 1} {
		for range n {
			resp, body := post(t, a.url, initialize, map[string]string{"Authorization": "Bearer " + user})
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("%s's initialize on the first replica: %s %s", user, resp.Status, body)
			}
			sessions[user] = append(sessions[user], resp.Header.Get("Mcp-Session-Id"))
		}
	}
	// stream opens a standalone stream of a session on p, kept open: the
	// session's copy there is in use.
	stream := func(p *ptGateway, user, sid string) (*http.Response, string) {
		req, _ := http.NewRequest(http.MethodGet, p.url, nil)
		req.Header.Set("Accept", "text/event-stream")
		req.Header.Set("Authorization", "Bearer "+user)
		req.Header.Set("Mcp-Session-Id", sid)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { resp.Body.Close() })
		return resp, ""
	}
	del := func(p *ptGateway, user, sid string) (*http.Response, string) {
		req, _ := http.NewRequest(http.MethodDelete, p.url, nil)
		req.Header.Set("Authorization", "Bearer "+user)
		req.Header.Set("Mcp-Session-Id", sid)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp, string(body)
	}
	ping := func(p *ptGateway, user, sid string) (*http.Response, string) {
		return post(t, p.url, `{"jsonrpc":"2.0","id":2,"method":"ping"}`, map[string]string{"Authorization": "Bearer " + user, "Mcp-Session-Id": sid})
	}
	initialize := func(p *ptGateway, user, _ string) (*http.Response, string) {
		return post(t, p.url, initialize, map[string]string{"Authorization": "Bearer " + user})
	}
	type request func(p *ptGateway, user, sid string) (*http.Response, string)
	steps := []struct {
		what    string
		do      request
		on      *ptGateway
		user    string
		session int
		status  int
		refused string // the error's words, for a 503
	}{
		{"rebuilt", ping, b, "bob", 0, http.StatusOK, ""},
		{"rebuilt", ping, b, "alice", 0, http.StatusOK, ""},
		{"rebuilt", ping, b, "alice", 1, http.StatusOK, ""},
		{"streaming", stream, b, "alice", 0, http.StatusOK, ""},
		{"streaming", stream, b, "alice", 1, http.StatusOK, ""},
		// alice's copies are in use; bob's idle one is not hers to drop.
		{"over the share", ping, b, "alice", 2, http.StatusServiceUnavailable, "one principal may have at most 2"},
		{"held: no new slot", ping, b, "alice", 0, http.StatusOK, ""},
		{"rebuilt, bob's idle copy dropped", ping, b, "bob", 1, http.StatusOK, ""},
		{"rebuilt, bob's idle copy dropped", ping, b, "carol", 0, http.StatusOK, ""},
		{"streaming", stream, b, "carol", 0, http.StatusOK, ""},
		{"every copy in use", ping, b, "bob", 0, http.StatusServiceUnavailable, "(settings max_sessions)"},
		{"every copy in use", initialize, b, "carol", 0, http.StatusServiceUnavailable, "(settings max_sessions)"},
		// Ended on the full replica without being rebuilt there.
		{"ended", del, b, "bob", 1, http.StatusNoContent, ""},
		{"ended everywhere", ping, a, "bob", 1, http.StatusNotFound, ""},
		// Dropped and refused sessions are not lost.
		{"dropped", ping, a, "bob", 0, http.StatusOK, ""},
		{"refused", ping, a, "alice", 2, http.StatusOK, ""},
	}
	for i, tc := range steps {
		resp, body := tc.do(tc.on, tc.user, sessions[tc.user][tc.session])
		if resp.StatusCode != tc.status || (tc.refused != "" && (!strings.Contains(body, `"code":-32000`) || !strings.Contains(body, tc.refused))) {
			t.Errorf("step %d (%s): %s's session %d: %s %s, want %d %s", i, tc.what, tc.user, tc.session, resp.Status, body, tc.status, tc.refused)
		}
	}
	// A DELETE of another principal's session, not held, is refused as
	// one of no session, and ends nothing.
	if resp, body := del(b, "bob", sessions["alice"][2]); resp.StatusCode != http.StatusNotFound {
		t.Errorf("bob's DELETE of alice's session: %s %s, want 404", resp.Status, body)
	}
	if resp, body := ping(a, "alice", sessions["alice"][2]); resp.StatusCode != http.StatusOK {
		t.Errorf("alice's session after bob's DELETE of it: %s %s", resp.Status, body)
	}
}

// TestLoginRetryAfterThePseudoToolWent: the retry of an authenticate call
// reaches a replica that has already adopted the login's credentials and
// serves the server's real tools (no authenticate pseudo-tool any more):
// it is still answered with the login's outcome, not "unknown tool" (the
// race behind TestLoginAcrossReplicas's occasional failure, made certain
// here by answering only once that replica has synced).
func TestLoginRetryAfterThePseudoToolWent(t *testing.T) {
	t.Parallel()
	as := fakeas.New()
	defer as.Close()
	gws, rr := loginReplicas(t, as)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	serves := func(p *ptGateway, name string) bool {
		cs := p.dial(t, newProtocol, nil)
		defer cs.Close()
		res, err := cs.ListTools(ctx, nil)
		if err != nil {
			t.Error(err)
			return false
		}
		for _, tl := range res.Tools {
			if tl.Name == name {
				return true
			}
		}
		return false
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "rr"}, &mcp.ClientOptions{
		Capabilities: &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{URL: &mcp.URLElicitationCapabilities{}}},
		ElicitationHandler: func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			follow(ctx, req.Params.URL)
			// The replica the retry will reach: wait until it has
			// adopted the credentials and serves the real tools.
			next := gws[int(rr.next.Load())%len(gws)]
			for ctx.Err() == nil && serves(next, "mcp__prot__authenticate") {
				time.Sleep(20 * time.Millisecond)
			}
			return &mcp.ElicitResult{Action: "accept"}, nil
		},
	}).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: gws[0].url + "/", HTTPClient: &http.Client{Transport: rr}}, &mcp.ClientSessionOptions{ProtocolVersion: newProtocol})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "mcp__prot__authenticate", Arguments: map[string]any{}})
	if err != nil || res.IsError || !strings.Contains(textOf(res), "mcp__prot__whoami") {
		t.Fatalf("the retry after the pseudo-tool went: %v %+v %q", err, res, textOf(res))
	}
}
