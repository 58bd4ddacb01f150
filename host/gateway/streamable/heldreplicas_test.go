package streamable

import (
	"bytes"
	"context"
	"errors"
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

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/conn"
	"github.com/mcphost/mcphost/host/gateway"
	"github.com/mcphost/mcphost/host/gateway/cluster"
	"github.com/mcphost/mcphost/host/state"
	"github.com/mcphost/mcphost/internal/sealbox"
	"github.com/mcphost/mcphost/internal/testing/demotest"
)

// Held calls across replicas (heldforward.go): a 2026-07-28 client's call
// to a server of 2025-11-25 that asks during the call is held on the
// replica the call reached; its retry may reach another.

const heldOldProtocol = "2025-11-25"

// heldOps counts what one replica asks of the shared state for held
// calls' retries passed on (publishes of retries and cancellations, pushes
// and pops of their replies), and keeps what it publishes and pushes for
// them. A forged reply, when set, is pushed instead of each of the
// replica's.
type heldOps struct {
	state.Backend
	n      atomic.Int64
	forged atomic.Pointer[[]byte]

	mu   sync.Mutex
	sent [][]byte // held calls' messages published and replies pushed
}

func (s *heldOps) keep(b []byte) {
	s.n.Add(1)
	s.mu.Lock()
	s.sent = append(s.sent, bytes.Clone(b))
	s.mu.Unlock()
}

func (s *heldOps) Publish(ctx context.Context, channel string, msg []byte) error {
	if bytes.HasPrefix(msg, []byte("held")) {
		s.keep(msg)
	}
	return s.Backend.Publish(ctx, channel, msg)
}

func (s *heldOps) Push(ctx context.Context, key string, value []byte, ttl time.Duration) error {
	if strings.HasPrefix(key, cluster.HeldReplyPrefix) {
		if f := s.forged.Load(); f != nil {
			value = *f
		}
		s.keep(value)
	}
	return s.Backend.Push(ctx, key, value, ttl)
}

func (s *heldOps) Pop(ctx context.Context, key string, timeout time.Duration) ([]byte, error) {
	if strings.HasPrefix(key, cluster.HeldReplyPrefix) {
		s.n.Add(1)
	}
	return s.Backend.Pop(ctx, key, timeout)
}

// The held calls' forwarding's waits in tests (heldCluster).
const (
	heldTestAckWait = 250 * time.Millisecond
	heldTestSilence = 5 * time.Second
)

type heldReplica struct {
	g   *Front
	gw  *gateway.Gateway
	url string
	ops *heldOps
}

// heldCluster starts n gateways over servers sharing keys and st, as
// replicas behind a balancer. Their held calls' forwarding runs at a test's
// pace: an owner taken for gone without its ack within 250ms, a pulse
// every 50ms, an owner that acked taken for gone after 5s of silence.
func heldCluster(t *testing.T, n int, st state.Backend, servers []*config.Server, hopts *Options) []*heldReplica {
	t.Helper()
	keys := sealbox.Random()
	var out []*heldReplica
	var closers []func()
	t.Cleanup(func() {
		for _, c := range closers {
			c()
		}
	})
	for range n {
		ctx, cancel := context.WithCancel(context.Background())
		h, err := host.New(&config.Config{Servers: servers, DefaultMode: "allow_all"}, &host.Options{OutputDir: t.TempDir(),
			ClientCapabilities: &mcp.ClientCapabilities{
				Elicitation: &mcp.ElicitationCapabilities{Form: &mcp.FormElicitationCapabilities{}, URL: &mcp.URLElicitationCapabilities{}},
				Sampling:    &mcp.SamplingCapabilities{},
				RootsV2:     &mcp.RootCapabilities{},
			}})
		if err != nil {
			t.Fatal(err)
		}
		h.ConnectAll(ctx, nil)
		ops := &heldOps{Backend: st}
		g := gateway.New(h, &gateway.Options{Keys: keys, State: ops,
			Replicas: gateway.ReplicaTimeouts{AckWait: heldTestAckWait, Pulse: 50 * time.Millisecond, Silence: heldTestSilence}})
		t.Cleanup(func() { g.Close() })
		if p := g.Sync(ctx); len(p) > 0 {
			t.Fatal(p)
		}
		f := New(g)
		srv := httptest.NewServer(f.Handler(hopts))
		// The held calls of every replica end first (a round passed on
		// ends with its call), then their sessions.
		closers = append([]func(){g.EndHeldCalls}, closers...)
		closers = append(closers, func() {
			g.CloseSessions()
			srv.CloseClientConnections()
			srv.Close()
			cancel()
			h.Close()
		})
		out = append(out, &heldReplica{g: f, gw: g, url: srv.URL, ops: ops})
	}
	return out
}

// heldRouter is a balancer with no affinity: pick chooses the replica of
// each request (retry: it carries a request state). It sends a bearer
// token when one is set.
type heldRouter struct {
	urls  []string
	token string
	pick  func(retry bool) int
}

func (r *heldRouter) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	retry := false
	if req.Body != nil {
		b, err := io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, err
		}
		retry = bytes.Contains(b, []byte(`"requestState"`))
		req.Body, req.ContentLength = io.NopCloser(bytes.NewReader(b)), int64(len(b))
	}
	target := strings.TrimPrefix(r.urls[r.pick(retry)], "http://")
	u := *req.URL
	u.Host, req.Host = target, target
	req.URL = &u
	if r.token != "" {
		req.Header.Set("Authorization", "Bearer "+r.token)
	}
	return http.DefaultTransport.RoundTrip(req)
}

func urlsOf(rs []*heldReplica) []string {
	var urls []string
	for _, r := range rs {
		urls = append(urls, r.url)
	}
	return urls
}

func heldOpsOf(rs []*heldReplica) (n int64) {
	for _, r := range rs {
		n += r.ops.n.Load()
	}
	return n
}

// dialHeld connects a 2026-07-28 client through rt.
func dialHeld(t *testing.T, ctx context.Context, url string, rt http.RoundTripper, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "held"}, opts).Connect(ctx,
		&mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: rt}, DisableStandaloneSSE: true},
		&mcp.ClientSessionOptions{ProtocolVersion: conn.NewProtocol})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func heldText(res *mcp.CallToolResult) string {
	if res == nil {
		return ""
	}
	return host.TextOf(res.Content)
}

// TestHeldCallsAcrossReplicas: behind a round-robin balancer, each held
// call's retry reaches the other replica, which passes it on to the one
// holding the call: every call completes with its own answer.
func TestHeldCallsAcrossReplicas(t *testing.T) {
	t.Parallel()
	st, err := state.NewLocal(nil, "")
	if err != nil {
		t.Fatal(err)
	}
	rs := heldCluster(t, 2, st, []*config.Server{demotest.Server("a", "-passthrough", "-protocol", heldOldProtocol)}, nil)
	for _, r := range rs {
		if v := r.g.h.Serving().ProtocolVersion(context.Background(), "a"); v != heldOldProtocol {
			t.Fatalf("upstream session at %q, want %s", v, heldOldProtocol)
		}
	}
	var next atomic.Int64
	rr := &heldRouter{urls: urlsOf(rs), pick: func(bool) int { return int(next.Add(1)-1) % 2 }}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var asked atomic.Int64
	cs := dialHeld(t, ctx, rs[0].url, rr, &mcp.ClientOptions{ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		asked.Add(1)
		return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"answer": "to " + req.Params.Message}}, nil
	}})
	const calls = 6
	for i := range calls {
		before := next.Load()
		q := fmt.Sprintf("question %d?", i)
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "mcp__a__ask", Arguments: map[string]any{"question": q}})
		if err != nil || res.IsError || heldText(res) != "answer: to "+q {
			t.Fatalf("call %d: %v %q", i, err, heldText(res))
		}
		if n := next.Load() - before; n != 2 {
			t.Fatalf("call %d: %d requests, want the call and its retry (on the other replica)", i, n)
		}
	}
	if asked.Load() != calls {
		t.Errorf("%d questions, want %d", asked.Load(), calls)
	}
	if heldOpsOf(rs) == 0 {
		t.Error("no retry was passed on through the shared state")
	}
}

// heldUpstream is a server of 2025-11-25 whose tools ask by requests of
// their own: twice (two questions, a progress notification and log
// messages at debug and notice after each answer) and hang (one question,
// then it runs until cancelled, which it reports on cancelled).
func heldUpstream(t *testing.T, hung chan<- struct{}, cancelled chan<- error) *config.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "old"}, &mcp.ServerOptions{SupportedProtocolVersions: []string{heldOldProtocol}})
	schema := map[string]any{"type": "object", "properties": map[string]any{"answer": map[string]any{"type": "string"}}}
	ask := func(ctx context.Context, req *mcp.CallToolRequest, q string) (string, error) {
		er, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Mode: "form", Message: q, RequestedSchema: schema})
		if err != nil {
			return "", err
		}
		return fmt.Sprint(er.Content["answer"]), nil
	}
	srv.AddTool(&mcp.Tool{Name: "twice", InputSchema: map[string]any{"type": "object"}}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var got []string
		for i, q := range []string{"first?", "second?"} {
			a, err := ask(ctx, req, q)
			if err != nil {
				return nil, err
			}
			got = append(got, a)
			req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: req.Params.GetProgressToken(), Progress: float64(i + 1), Total: 2, Message: "after " + q})
			req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "debug", Data: "debug after " + q})
			req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "notice", Data: "logged after " + q})
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strings.Join(got, " ")}}}, nil
	})
	srv.AddTool(&mcp.Tool{Name: "hang", InputSchema: map[string]any{"type": "object"}}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if _, err := ask(ctx, req, "hang?"); err != nil {
			return nil, err
		}
		hung <- struct{}{}
		<-ctx.Done()
		cancelled <- ctx.Err()
		return nil, ctx.Err()
	})
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	t.Cleanup(func() {
		hs.CloseClientConnections()
		hs.Close()
	})
	return &config.Server{Name: "u", Transport: config.TransportHTTP, URL: hs.URL, Approved: true, ConnectTimeout: 5 * time.Second}
}

// TestHeldRetryRouting: where a held call's retries land decides what the
// shared state carries, never the outcome.
//   - on the replica holding the call: the shared state is not touched;
//   - on others (a question each, on two replicas): passed on, answered,
//     the progress and log messages of the rounds passed on reach the
//     client;
//   - the replica holding the call is gone: the client is told once the
//     replica waiting has had no ack within its short wait for one (not
//     after the longer silence it allows an owner that acked; never a
//     hang);
//   - the request of a retry passed on ends while its round runs (the
//     deadline of its replica's drain passed): the call ends on the
//     replica holding it, as when a request of its own ends.
func TestHeldRetryRouting(t *testing.T) {
	t.Parallel()
	hung, cancelled := make(chan struct{}, 1), make(chan error, 1)
	upstream := heldUpstream(t, hung, cancelled)
	for _, tc := range []struct {
		name    string
		retries []int  // the replicas the retries reach, in turn (the call reaches 0)
		tool    string // twice, hang
		// ownerGone closes replica 0 (its subscription, its held calls)
		// as the client is asked.
		ownerGone   bool
		drained     bool // replica 1 drains (deadline passed) once the call hangs after its answer
		wantText    string
		wantErr     string
		wantForward bool
	}{
		{name: "retries on the owner", retries: []int{0, 0}, tool: "twice", wantText: "yes-1 yes-2"},
		{name: "retries on two others", retries: []int{1, 2}, tool: "twice", wantText: "yes-1 yes-2", wantForward: true},
		{name: "one retry on the owner, one on another", retries: []int{0, 2}, tool: "twice", wantText: "yes-1 yes-2", wantForward: true},
		{name: "owner gone", retries: []int{1}, tool: "twice", ownerGone: true, wantErr: "is gone, and the call with it", wantForward: true},
		{name: "retry's replica drained", retries: []int{1}, tool: "hang", drained: true, wantForward: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, err := state.NewLocal(nil, "")
			if err != nil {
				t.Fatal(err)
			}
			rs := heldCluster(t, 3, st, []*config.Server{upstream}, nil)
			var mu sync.Mutex
			retries := tc.retries
			var went []int
			router := &heldRouter{urls: urlsOf(rs), pick: func(retry bool) int {
				mu.Lock()
				defer mu.Unlock()
				i := 0
				if retry && len(retries) > 0 {
					i, retries = retries[0], retries[1:]
				}
				if retry {
					went = append(went, i)
				}
				return i
			}}
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			progress, logs := make(chan string, 10), make(chan string, 10)
			var n atomic.Int64
			var answered atomic.Int64 // (UnixNano) the last answer's time
			cs := dialHeld(t, ctx, rs[0].url, router, &mcp.ClientOptions{
				ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
					if tc.ownerGone {
						rs[0].gw.CloseSessions()
					}
					defer func() { answered.Store(time.Now().UnixNano()) }()
					return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"answer": fmt.Sprintf("yes-%d", n.Add(1))}}, nil
				},
				ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
					progress <- req.Params.Message
				},
				LoggingMessageHandler: func(_ context.Context, req *mcp.LoggingMessageRequest) {
					logs <- fmt.Sprintf("%s %s: %v", req.Params.Level, req.Params.Logger, req.Params.Data)
				},
			})
			if tc.drained {
				go func() {
					select {
					case <-hung:
						rs[1].gw.SetDrainTimeout(time.Millisecond)
						rs[1].gw.Drain(ctx)
					case <-ctx.Done():
					}
				}()
			}
			// The server (of 2025-11-25) logs once asked to (as a client
			// of that version's logging/setLevel would have the gateway
			// ask it), here at debug; the client names its own level,
			// info, in the call's _meta: no debug message reaches it.
			for _, r := range rs {
				r.g.h.SetLogLevel(ctx, "debug")
			}
			start := time.Now()
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "mcp__u__" + tc.tool, Arguments: map[string]any{},
				Meta: mcp.Meta{"progressToken": "p", mcp.MetaKeyLogLevel: "info"}})
			took := time.Since(start)
			switch {
			case tc.drained:
				if err == nil || !strings.Contains(err.Error(), "shutting down") {
					t.Fatalf("got %v %q, want the drain's error", err, heldText(res))
				}
				select {
				case err := <-cancelled:
					if !errors.Is(err, context.Canceled) {
						t.Errorf("the upstream call ended with %v", err)
					}
				case <-ctx.Done():
					t.Fatal("the call held on replica 0 was not cancelled when the request of its retry on replica 1 was")
				}
			case tc.wantErr != "":
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("got %v %q, want an error with %q", err, heldText(res), tc.wantErr)
				}
				if took > 10*time.Second {
					t.Errorf("the error took %s", took)
				}
				// The retry waited for the ack, not for the silence.
				retried := time.Since(time.Unix(0, answered.Load()))
				if retried < heldTestAckWait || retried > heldTestSilence/2 {
					t.Errorf("the retry failed %s after the answer; want after the ack wait (%s), well before the silence (%s)", retried.Round(time.Millisecond), heldTestAckWait, heldTestSilence)
				}
				if want := "within " + heldTestAckWait.String(); !strings.Contains(err.Error(), want) {
					t.Errorf("error %q, want it to say %q", err, want)
				}
				t.Logf("owner gone: %v (after %s, the retry after %s)", err, took.Round(time.Millisecond), retried.Round(time.Millisecond))
			default:
				if err != nil || res.IsError || heldText(res) != tc.wantText {
					t.Fatalf("%v %q, want %q", err, heldText(res), tc.wantText)
				}
				// Each answer's progress and log message (tagged with the
				// server), whichever replica served the round.
				for _, want := range []struct {
					what string
					from chan string
					msgs []string
				}{
					{"progress", progress, []string{"after first?", "after second?"}},
					{"log message", logs, []string{"notice u: logged after first?", "notice u: logged after second?"}},
				} {
					for _, msg := range want.msgs {
						select {
						case got := <-want.from:
							if got != msg {
								t.Errorf("%s %q, want %q", want.what, got, msg)
							}
						case <-ctx.Done():
							t.Fatalf("no %s %q", want.what, msg)
						}
					}
				}
			}
			mu.Lock()
			if len(retries) > 0 {
				t.Errorf("retries %v were never made (went to %v)", retries, went)
			}
			mu.Unlock()
			if ops := heldOpsOf(rs); (ops > 0) != tc.wantForward {
				t.Errorf("%d operations of the shared state for held calls; want some: %v", ops, tc.wantForward)
			}
		})
	}
}

// TestHeldRetryOfAnotherPrincipal: under inbound OAuth, a held call's
// request state is its principal's: another principal's retry with it is
// refused on whichever replica it reaches, before anything is passed on;
// the principal's own retry on another replica completes the call.
func TestHeldRetryOfAnotherPrincipal(t *testing.T) {
	t.Parallel()
	upstream := heldUpstream(t, make(chan struct{}, 1), make(chan error, 1))
	st, err := state.NewLocal(nil, "")
	if err != nil {
		t.Fatal(err)
	}
	verify := UsersVerifier("alice", "bob")
	rs := heldCluster(t, 2, st, []*config.Server{upstream}, &Options{OAuth: &InboundOAuth{Verify: verify, Resource: "http://gateway.example/mcp"}})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	// Calls reach replica 0, retries replica 1; the retries are made by
	// hand (no automatic multi-round trip).
	pick := func(retry bool) int {
		if retry {
			return 1
		}
		return 0
	}
	manual := &mcp.ClientOptions{MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true},
		Capabilities: &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{Form: &mcp.FormElicitationCapabilities{}}}}
	alice := dialHeld(t, ctx, rs[0].url, &heldRouter{urls: urlsOf(rs), token: "alice", pick: pick}, manual)
	bob := dialHeld(t, ctx, rs[0].url, &heldRouter{urls: urlsOf(rs), token: "bob", pick: pick}, manual)

	res, err := alice.CallTool(ctx, &mcp.CallToolParams{Name: "mcp__u__twice", Arguments: map[string]any{}})
	if err != nil || res.RequestState == "" || len(res.InputRequests) != 1 {
		t.Fatalf("alice's call: %v %+v", err, res)
	}
	retry := func(cs *mcp.ClientSession, state, answer string) (*mcp.CallToolResult, error) {
		var in mcp.InputResponseMap = mcp.InputResponseMap{}
		for k := range res.InputRequests {
			in[k] = &mcp.ElicitResult{Action: "accept", Content: map[string]any{"answer": answer}}
		}
		return cs.CallTool(ctx, &mcp.CallToolParams{Name: "mcp__u__twice", Arguments: map[string]any{}, InputResponses: in, RequestState: state})
	}
	if res, err := retry(bob, res.RequestState, "bob's"); err == nil && !res.IsError {
		t.Fatalf("bob's retry with alice's request state was taken: %+v", res)
	} else {
		t.Logf("bob's retry: %v %q", err, heldText(res))
	}
	if ops := heldOpsOf(rs); ops != 0 {
		t.Errorf("bob's retry was passed on (%d operations of the shared state)", ops)
	}
	res, err = retry(alice, res.RequestState, "alice's")
	if err != nil || res.RequestState == "" {
		t.Fatalf("alice's first retry, on replica 1: %v %+v", err, res)
	}
	if ops := heldOpsOf(rs); ops == 0 {
		t.Error("alice's retry was not passed on")
	}
	if r, err := retry(bob, res.RequestState, "bob's"); err == nil && !r.IsError {
		t.Fatalf("bob's retry with alice's second request state was taken: %+v", r)
	}
	res, err = retry(alice, res.RequestState, "again")
	if err != nil || res.IsError || heldText(res) != "alice's again" {
		t.Fatalf("alice's second retry: %v %q", err, heldText(res))
	}
}

// TestHeldForwardSealed: what a held call's retry passed on to another
// replica puts in the shared state (the retry published, the replies
// pushed) is sealed: neither the client's answers, nor the server's
// questions, progress and result are in it.
func TestHeldForwardSealed(t *testing.T) {
	t.Parallel()
	upstream := heldUpstream(t, make(chan struct{}, 1), make(chan error, 1))
	st, err := state.NewLocal(nil, "")
	if err != nil {
		t.Fatal(err)
	}
	rs := heldCluster(t, 2, st, []*config.Server{upstream}, nil)
	// Calls reach replica 0, retries replica 1.
	router := &heldRouter{urls: urlsOf(rs), pick: func(retry bool) int {
		if retry {
			return 1
		}
		return 0
	}}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var n atomic.Int64
	cs := dialHeld(t, ctx, rs[0].url, router, &mcp.ClientOptions{
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"answer": fmt.Sprintf("canary-answer-%d", n.Add(1))}}, nil
		},
		ProgressNotificationHandler: func(context.Context, *mcp.ProgressNotificationClientRequest) {},
	})
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "mcp__u__twice", Arguments: map[string]any{}, Meta: mcp.Meta{"progressToken": "p"}})
	if want := "canary-answer-1 canary-answer-2"; err != nil || res.IsError || heldText(res) != want {
		t.Fatalf("%v %q, want %q", err, heldText(res), want)
	}
	var published, pushed int
	for i, r := range rs {
		r.ops.mu.Lock()
		sent := r.ops.sent
		r.ops.mu.Unlock()
		for _, b := range sent {
			if bytes.HasPrefix(b, []byte("held")) {
				published++
			} else {
				pushed++
			}
			// The answers (in the retries, in the result), the questions,
			// the progress.
			for _, clear := range []string{"canary", "first?", "second?", "after "} {
				if bytes.Contains(b, []byte(clear)) {
					t.Errorf("replica %d put %q in the shared state in clear: %q", i, clear, b)
				}
			}
		}
	}
	if published < 2 || pushed < 4 {
		t.Errorf("%d messages published, %d replies pushed: want the retries passed on and their replies", published, pushed)
	}
}

// TestHeldForwardForged: a held call's message that does not open with
// the replicas' keys is dropped: a retry is neither acknowledged nor
// served, and a reply fails the round as malformed (never taken for the
// call's outcome).
func TestHeldForwardForged(t *testing.T) {
	t.Parallel()
	upstream := heldUpstream(t, make(chan struct{}, 1), make(chan error, 1))
	st, err := state.NewLocal(nil, "")
	if err != nil {
		t.Fatal(err)
	}
	rs := heldCluster(t, 2, st, []*config.Server{upstream}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	// A retry in clear, as another than a replica could publish it.
	reply := cluster.HeldReplyPrefix + strings.Repeat("ab", 16)
	retry := `{"key":"` + rs[0].g.replica + `.00/1","answer":{},"from":"00"}`
	if err := st.Publish(ctx, cluster.ForwardChannel(rs[0].g.replica), []byte("held "+reply+"\n"+retry)); err != nil {
		t.Fatal(err)
	}
	if b, err := st.Pop(ctx, reply, 4*heldTestAckWait); !errors.Is(err, state.ErrNotFound) {
		t.Errorf("a retry in clear was answered: %q %v", b, err)
	}

	// A reply in clear, as another than a replica could push it.
	forged := []byte(`{"kind":"done","result":{"content":[{"type":"text","text":"forged"}]}}`)
	rs[0].ops.forged.Store(&forged)
	router := &heldRouter{urls: urlsOf(rs), pick: func(retry bool) int {
		if retry {
			return 1
		}
		return 0
	}}
	cs := dialHeld(t, ctx, rs[0].url, router, &mcp.ClientOptions{
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"answer": "yes"}}, nil
		},
	})
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "mcp__u__twice", Arguments: map[string]any{}})
	if err == nil || !strings.Contains(err.Error(), "malformed") {
		t.Fatalf("got %v %q, want the round failed on a malformed reply", err, heldText(res))
	}
}
