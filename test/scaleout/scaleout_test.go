// Package scaleout_test tests mcphost scaled out, on loopback, with real
// processes only: three `mcphost serve --http` replicas of one
// configuration sharing a real redis-server (state { backend = "redis" },
// MCPHOST_SESSION_KEYS), behind a real HAProxy that balances every request
// round robin with no stickiness and takes a replica out of rotation when
// its /readyz fails. Clients of both protocol eras (go-sdk) call through
// the balancer; each response names the replica that answered (X-Replica),
// which the clients' transports count.
//
// redis-server and haproxy must be installed (make test-deps); the tests
// fail, naming the install command, when they are not.
package scaleout_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	hauth "github.com/mcphost/mcphost/host/auth"
	"github.com/mcphost/mcphost/internal/demoserver"
	"github.com/mcphost/mcphost/internal/testing/fakeas"
)

// Figures of the token refresh case: the authorization server announces
// tokens for RefreshAhead + tokenUsable, so that the replicas find them due
// for a refresh tokenUsable after they are issued; it refuses them
// tokenLife after.
const (
	tokenUsable = 2 * time.Second
	tokenLife   = 3 * time.Second
)

// TestScaleOut runs the cases on one cluster: those that leave the
// cluster as they found it in parallel, then a replica killed and
// restarted, then Redis taken away.
//
// Two servers are protected by OAuth (fakeas): prot, logged in to once
// (`mcphost auth login`, authorization code) before the replicas start, its
// token in the shared state; and svc, with the client_credentials grant,
// its token shared too.
func TestScaleOut(t *testing.T) {
	t.Parallel()
	prot, svc := fakeas.New(), fakeas.New()
	for _, as := range []*fakeas.Server{prot, svc} {
		t.Cleanup(as.Close)
		as.Set(func(s *fakeas.Server) {
			s.TokenTTL = int((hauth.RefreshAhead + tokenUsable) / time.Second)
			s.AccessTokenLife = tokenLife
		})
	}
	// The log calls go to a streamable HTTP server: its log messages ride
	// the call's response stream, so each reaches the session whose call
	// caused it. (A stdio server's log message names no call: with calls of
	// several clients in flight it is passed on to none, see the README.)
	logs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func() func(*http.Request) *mcp.Server {
		srv := demoserver.New(&demoserver.Options{Name: "logs", Passthrough: true})
		return func(*http.Request) *mcp.Server { return srv }
	}(), nil))
	t.Cleanup(logs.Close)
	c := startCluster(t, 3, func(*cluster) string {
		return fmt.Sprintf(`
permissions {
  default_mode = "allow_all"
}
server "demo" {
  command = %q
  args    = ["-passthrough"]
}
server "old" {
  command = %q
  args    = ["-passthrough", "-protocol", "2025-11-25"]
}
server "logs" {
  transport = "http"
  url       = %q
}
server "prot" {
  transport = "http"
  url       = %q
  oauth {
    allow_loopback = true
  }
}
server "svc" {
  transport = "http"
  url       = %q
  oauth {
    grant          = "client_credentials"
    client_id      = "svc-client"
    client_secret  = "svc-secret"
    allow_loopback = true
  }
}
`, filepath.Join(binDir, "mcphost-demo"), filepath.Join(binDir, "mcphost-demo"), logs.URL, prot.URL(), svc.URL())
	}, func(c *cluster) { c.login(t, "prot") })

	t.Run("shared", func(t *testing.T) {
		for _, tc := range []struct {
			name string
			run  func(*testing.T, *cluster)
		}{
			{"sessions of 2025-11-25 clients", testSessions},
			{"2026-07-28 clients", testStateless},
			{"elicitation answered through another replica", testElicitation},
			{"held call's retry through another replica", testHeld},
			{"token refreshed once per expiry", func(t *testing.T, c *cluster) {
				testRefresh(t, c, []*credential{{server: "prot", as: prot, shared: true}, {server: "svc", as: svc, shared: true, machine: true}})
			}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				t.Parallel()
				tc.run(t, c)
			})
		}
	})
	t.Run("replica restarted by a rolling update", func(t *testing.T) { testRollingRestart(t, c) })
	t.Run("replica killed and restarted", func(t *testing.T) { testKill(t, c) })
	t.Run("redis down", func(t *testing.T) { testRedisDown(t, c) })
}

// testSessions: 2025-11-25 clients run sessions whose requests land on
// every replica: calls, a log level set on one replica and honoured by the
// others, and the session's end (DELETE), after which every replica
// answers 404.
func testSessions(t *testing.T, c *cluster) {
	const clients, calls, logCalls = 5, 12, 3
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	type result struct {
		calls, ok int
		lost      bool
		errs      []error
		tally     *tally

		mu       sync.Mutex
		got      map[string]bool   // log messages received
		servedBy map[string]string // replica of each setLevel / log call, by its message
		// What each replica answered on the session right after its DELETE,
		// and how long until it answered 404.
		gone []string
		lag  time.Duration
	}
	results := make([]*result, clients)
	var wg sync.WaitGroup
	for i := range clients {
		res := &result{got: map[string]bool{}, servedBy: map[string]string{}}
		results[i] = res
		wg.Go(func() {
			fail := func(err error) { res.errs = append(res.errs, err) }
			tr := &transport{seen: func(body []byte, rep string, _ *http.Response) {
				switch kind, method := jsonrpcKind(body); {
				case method == "logging/setLevel":
					res.mu.Lock()
					res.servedBy["setLevel"] = rep
					res.mu.Unlock()
				case kind == "request" && method == "tools/call" && bytes.Contains(body, []byte("mcp__logs__log")):
					for _, m := range logMessages(i, logCalls) {
						if bytes.Contains(body, []byte(`"`+m+`"`)) {
							res.mu.Lock()
							res.servedBy[m] = rep
							res.mu.Unlock()
						}
					}
				}
			}}
			cl, err := c.connect(ctx, oldProtocol, tr, &mcp.ClientOptions{
				LoggingMessageHandler: func(_ context.Context, req *mcp.LoggingMessageRequest) {
					res.mu.Lock()
					res.got[fmt.Sprint(req.Params.Data)] = true
					res.mu.Unlock()
				},
			})
			if err != nil {
				fail(fmt.Errorf("connect: %w", err))
				res.lost = true
				return
			}
			res.tally = cl.tally
			for j := range calls {
				res.calls++
				if err := echo(ctx, cl.cs, fmt.Sprintf("c%d-%d", i, j)); err != nil {
					fail(err)
					if errors.Is(err, mcp.ErrSessionMissing) || errors.Is(err, mcp.ErrConnectionClosed) {
						res.lost = true
						return
					}
					continue
				}
				res.ok++
			}
			// The level, set on one replica, holds on all: the info messages
			// are dropped, the error ones delivered.
			if err := cl.cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "warning"}); err != nil {
				fail(fmt.Errorf("setLevel: %w", err))
				return
			}
			for j := range logCalls {
				for _, lv := range []struct{ level, msg string }{{"info", "below"}, {"error", "above"}} {
					res.calls++
					r, err := cl.cs.CallTool(ctx, &mcp.CallToolParams{Name: "mcp__logs__log", Arguments: map[string]any{"level": lv.level, "message": logMessage(lv.msg, i, j)}})
					if err != nil || r.IsError {
						fail(fmt.Errorf("log %s: %v %v", lv.level, err, r))
						continue
					}
					res.ok++
				}
			}
			sid := cl.cs.ID()
			if err := cl.cs.Close(); err != nil { // DELETE, through the balancer
				fail(fmt.Errorf("close: %w", err))
			}
			// Every replica answers 404 at once, or within 2 s.
			closed := time.Now()
			for _, r := range c.reps {
				code, _, err := c.post(r, sid, `{"jsonrpc":"2.0","id":99,"method":"ping"}`)
				if err != nil {
					fail(err)
				}
				res.gone = append(res.gone, fmt.Sprintf("%s %d", r.name, code))
				for code != http.StatusNotFound && time.Since(closed) < 2*time.Second {
					time.Sleep(5 * time.Millisecond) // (polling the replica)
					code, _, _ = c.post(r, sid, `{"jsonrpc":"2.0","id":99,"method":"ping"}`)
				}
				if code != http.StatusNotFound {
					fail(fmt.Errorf("%s still serves the session 2 s after its DELETE: %d", r.name, code))
				}
				res.lag = max(res.lag, time.Since(closed))
			}
		})
	}
	wg.Wait()

	total := newTally()
	var calls_, ok, lost, above, below, foreign, late int
	var maxLag time.Duration
	for i, res := range results {
		for _, err := range res.errs {
			t.Errorf("client %d: %v", i, err)
		}
		calls_ += res.calls
		ok += res.ok
		if res.lost {
			lost++
		}
		res.mu.Lock()
		mine := logMessages(i, logCalls)
		for m := range res.got {
			if !slices.Contains(mine, m) {
				foreign++
				t.Errorf("client %d received another session's log message %q", i, m)
			}
		}
		for _, m := range mine {
			switch {
			case strings.HasPrefix(m, "above") && res.got[m]:
				above++
			case strings.HasPrefix(m, "above"):
				t.Errorf("client %d: log message %s (error level) not received: level set on %s, the call served by %s", i, m, res.servedBy["setLevel"], res.servedBy[m])
			case res.got[m]:
				below++
				t.Errorf("client %d: log message %s (info level, below the session's) received: level set on %s, the call served by %s", i, m, res.servedBy["setLevel"], res.servedBy[m])
			}
		}
		res.mu.Unlock()
		if res.tally == nil {
			continue
		}
		total.add(res.tally)
		if reps := res.tally.replicas(); len(reps) < 2 {
			t.Errorf("client %d's session was served by %v only: no request changed replica", i, reps)
		}
		res.tally.mu.Lock()
		deletes := slices.Clone(res.tally.deletes)
		res.tally.mu.Unlock()
		if len(deletes) != 1 || !strings.HasSuffix(deletes[0], " 204") && !strings.HasSuffix(deletes[0], " 200") && !strings.HasSuffix(deletes[0], " 202") {
			t.Errorf("client %d's DELETE: %v, want one, answered 2xx", i, deletes)
		}
		for _, g := range res.gone {
			if !strings.HasSuffix(g, " 404") {
				late++
				t.Logf("client %d's session right after its DELETE (answered by %v): replica %s; 404 after %v", i, deletes, g, res.lag.Round(time.Millisecond))
			}
		}
		maxLag = max(maxLag, res.lag)
	}
	t.Logf("2025-11-25: %d sessions, tool calls %d, results %d, sessions lost %d; log messages above the level %d (want %d), below it %d, of other sessions %d; "+
		"after DELETE: %d of %d replicas still served the session at once, all 404 within %v; %s",
		clients, calls_, ok, lost, above, clients*logCalls, below, foreign, late, clients*len(c.reps), maxLag.Round(time.Millisecond), total)
	if ok != calls_ || lost != 0 {
		t.Errorf("tool calls %d, results %d, sessions lost %d: want every call answered and no session lost", calls_, ok, lost)
	}
	checkSpread(t, total, c)
}

// logMessage is the message of client i's log call j at a level below
// ("below") or above ("above") its session's.
func logMessage(what string, i, j int) string { return fmt.Sprintf("%s-%d-%d", what, i, j) }

// logMessages are client i's n pairs of log messages.
func logMessages(i, n int) []string {
	var out []string
	for j := range n {
		out = append(out, logMessage("below", i, j), logMessage("above", i, j))
	}
	return out
}

// checkSpread checks that every replica answered some of the requests,
// and that every request got a response.
func checkSpread(t *testing.T, total *tally, c *cluster) {
	t.Helper()
	reps := total.replicas()
	for _, r := range c.reps {
		if reps[r.name] == 0 {
			t.Errorf("replica %s answered none of the requests: %v", r.name, reps)
		}
	}
	total.mu.Lock()
	defer total.mu.Unlock()
	if total.sent != total.answered || total.failed != 0 || total.status5xx != 0 {
		t.Errorf("HTTP requests %d, responses %d (5xx %d), without response %d: want a good response to each", total.sent, total.answered, total.status5xx, total.failed)
	}
}

// testStateless: 2026-07-28 clients, with no session on the gateway, call
// through the balancer; every replica answers some of their requests.
func testStateless(t *testing.T, c *cluster) {
	const clients, calls = 5, 12
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	total := newTally()
	var mu sync.Mutex
	var made, ok int
	var wg sync.WaitGroup
	for i := range clients {
		wg.Go(func() {
			cl, err := c.connect(ctx, newProtocol, nil, nil)
			if err != nil {
				t.Errorf("client %d: connect: %v", i, err)
				return
			}
			defer cl.cs.Close()
			defer total.add(cl.tally)
			if v := cl.cs.InitializeResult().ProtocolVersion; v != newProtocol {
				t.Errorf("client %d negotiated %s, want %s", i, v, newProtocol)
			}
			if id := cl.cs.ID(); id != "" {
				t.Errorf("client %d has session id %q: a 2026-07-28 client has none", i, id)
			}
			for j := range calls {
				err := echo(ctx, cl.cs, fmt.Sprintf("s%d-%d", i, j))
				mu.Lock()
				made++
				if err == nil {
					ok++
				}
				mu.Unlock()
				if err != nil {
					t.Errorf("client %d call %d: %v", i, j, err)
				}
			}
		})
	}
	wg.Wait()
	t.Logf("2026-07-28: %d clients, tool calls %d, results %d; %s", clients, made, ok, total)
	if ok != made || made != clients*calls {
		t.Errorf("tool calls %d, results %d: want %d answered", made, ok, clients*calls)
	}
	checkSpread(t, total, c)
}

// testElicitation: a 2025-11-25 client's call asks it a question
// (elicitation, the demo server's ask tool); its answer, a POST of its own,
// is sent straight to another replica than the one whose stream carries
// the call (bypassing the balancer); the call completes with the answer.
// Both of the gateway's paths for a session's call: relayed (no log
// level), and the go-sdk server's (a session with a log level).
func testElicitation(t *testing.T, c *cluster) {
	var (
		mu       sync.Mutex
		callRep  string   // the replica whose stream carries the current call
		answered []string // "call replica -> answer replica" of each answer
	)
	tr := &transport{
		seen: func(body []byte, rep string, _ *http.Response) {
			if kind, method := jsonrpcKind(body); kind == "request" && method == "tools/call" {
				mu.Lock()
				callRep = rep
				mu.Unlock()
			}
		},
		route: func(_ *http.Request, body []byte) *replica {
			if kind, _ := jsonrpcKind(body); kind != "response" {
				return nil
			}
			mu.Lock()
			defer mu.Unlock()
			from := c.replicaNamed(callRep)
			if from == nil {
				answered = append(answered, callRep+" -> ?")
				return nil
			}
			to := c.reps[(slices.Index(c.reps, from)+1)%len(c.reps)]
			answered = append(answered, from.name+" -> "+to.name)
			return to
		},
	}
	var asked atomic.Int32
	cl := c.mustConnect(t, oldProtocol, tr, &mcp.ClientOptions{
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			asked.Add(1)
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"answer": "blue"}}, nil
		},
	})
	const calls = 3
	for _, path := range []string{"relayed", "go-sdk"} {
		t.Run(path, func(t *testing.T) {
			if path == "go-sdk" {
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				if err := cl.cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "error"}); err != nil {
					t.Fatal(err)
				}
			}
			for i := range calls {
				mu.Lock()
				callRep, answered = "", nil
				mu.Unlock()
				before := asked.Load()
				ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
				res, err := cl.cs.CallTool(ctx, &mcp.CallToolParams{Name: "mcp__demo__ask", Arguments: map[string]any{"question": "colour?"}})
				cancel()
				mu.Lock()
				routes := slices.Clone(answered)
				mu.Unlock()
				n := asked.Load() - before
				switch {
				case err != nil:
					t.Errorf("call %d (asked %d times, answers sent %v): %v", i, n, routes, err)
				case res.IsError || textOf(res) != "answer: blue":
					t.Errorf("call %d (asked %d times, answers sent %v): %q (isError %v), want the answer", i, n, routes, textOf(res), res.IsError)
				default:
					t.Logf("call %d completed: asked %d time(s), answer sent %v", i, n, routes)
				}
				if n != 1 || len(routes) != 1 || strings.HasSuffix(routes[0], "?") {
					t.Errorf("call %d: asked %d times, answers %v: want one answer, sent to another replica than the call's", i, n, routes)
				}
			}
		})
	}
}

// testHeld: a 2026-07-28 client calls a tool of a 2025-11-25 server that
// asks its user (elicitation): the replica the call reaches holds the
// upstream call and answers input-required; the client's retry, carrying
// the answer, is sent to another replica, which passes it on to the one
// holding the call over the shared state: the call completes with the
// answer.
func testHeld(t *testing.T, c *cluster) {
	var (
		mu     sync.Mutex
		first  string   // the replica the current call's first request reached
		routes []string // "first -> retry" of each retry
	)
	tr := &transport{
		seen: func(body []byte, rep string, _ *http.Response) {
			if kind, method := jsonrpcKind(body); kind == "request" && method == "tools/call" && !bytes.Contains(body, []byte(`"inputResponses"`)) {
				mu.Lock()
				first = rep
				mu.Unlock()
			}
		},
		route: func(_ *http.Request, body []byte) *replica {
			if !bytes.Contains(body, []byte(`"inputResponses"`)) {
				return nil
			}
			mu.Lock()
			defer mu.Unlock()
			from := c.replicaNamed(first)
			if from == nil {
				routes = append(routes, first+" -> ?")
				return nil
			}
			to := c.reps[(slices.Index(c.reps, from)+1)%len(c.reps)]
			routes = append(routes, from.name+" -> "+to.name)
			return to
		},
	}
	var asked atomic.Int32
	cl := c.mustConnect(t, newProtocol, tr, &mcp.ClientOptions{
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			asked.Add(1)
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"answer": "green"}}, nil
		},
	})
	for i := range 3 {
		mu.Lock()
		first, routes = "", nil
		mu.Unlock()
		before := asked.Load()
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		res, err := cl.cs.CallTool(ctx, &mcp.CallToolParams{Name: "mcp__old__ask", Arguments: map[string]any{"question": "colour?"}})
		cancel()
		mu.Lock()
		rs := slices.Clone(routes)
		mu.Unlock()
		n := asked.Load() - before
		switch {
		case err != nil:
			t.Errorf("held call %d (asked %d times, retries sent %v): %v", i, n, rs, err)
		case res.IsError || textOf(res) != "answer: green":
			t.Errorf("held call %d (asked %d times, retries sent %v): %q (isError %v), want the answer", i, n, rs, textOf(res), res.IsError)
		default:
			t.Logf("held call %d completed: asked %d time(s), retry sent %v", i, n, rs)
		}
		if n != 1 || len(rs) != 1 || strings.HasSuffix(rs[0], "?") {
			t.Errorf("held call %d: asked %d times, retries %v: want one retry, sent to another replica than the call's", i, n, rs)
		}
	}
}

// credential is an OAuth-protected server of testRefresh.
type credential struct {
	server string // its tool is mcp__SERVER__whoami
	as     *fakeas.Server
	// shared: a token in the shared state, which the replicas must renew
	// once per expiry (otherwise the figures are only reported); machine:
	// a machine grant's (client_credentials), not a logged-in one.
	shared, machine bool

	tokenReqs0, grants0, expired0 int
}

// refreshes returns the refresh grants since the case began.
func (cr *credential) refreshes() []fakeas.Grant {
	var out []fakeas.Grant
	for _, g := range cr.as.Grants()[cr.grants0:] {
		if g.Type == "refresh_token" {
			out = append(out, g)
		}
	}
	return out
}

// testRefresh: clients of both eras call OAuth-protected servers through
// the balancer from several sessions at once across three expiries of the
// shared credential's token: the replicas refresh it once per expiry, all
// from one chain of refresh tokens (each refresh spends the token the
// previous one issued), none uses an expired token, and every call
// succeeds.
func testRefresh(t *testing.T, c *cluster, creds []*credential) {
	const clients, expiries = 6, 3
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var shared *credential
	for _, cr := range creds {
		cr.tokenReqs0, cr.grants0, cr.expired0 = len(cr.as.Requests("/token")), len(cr.as.Grants()), cr.as.ExpiredRefusals()
		if cr.shared && shared == nil {
			shared = cr
		}
	}
	var cls []*client
	for i := range clients {
		v := oldProtocol
		if i%2 == 1 {
			v = newProtocol
		}
		cls = append(cls, c.mustConnect(t, v, nil, nil))
	}
	var (
		stop     = make(chan struct{})
		mu       sync.Mutex
		made, ok int
		errs     []error
		lastOK   = make([]time.Time, clients) // start of each client's last good call of the shared credential's server
		wg       sync.WaitGroup
	)
	for i, cl := range cls {
		wg.Go(func() {
			for j := 0; ; j++ {
				select {
				case <-stop:
					return
				default:
				}
				cr := creds[(i+j)%len(creds)]
				start := time.Now()
				res, err := cl.cs.CallTool(ctx, &mcp.CallToolParams{Name: "mcp__" + cr.server + "__whoami", Arguments: map[string]any{}})
				if err == nil && (res.IsError || textOf(res) != "you") {
					err = fmt.Errorf("%s whoami answered %q (isError %v)", cr.server, textOf(res), res.IsError)
				}
				mu.Lock()
				made++
				if err != nil {
					errs = append(errs, fmt.Errorf("client %d: %w", i, err))
				} else {
					ok++
					if cr.shared {
						lastOK[i] = start
					}
				}
				mu.Unlock()
				if err != nil && ctx.Err() != nil {
					return
				}
			}
		})
	}
	// Until the shared token was refreshed `expiries` times and every
	// client called with the last one.
	tick := time.NewTicker(50 * time.Millisecond)
	for done := false; !done; {
		select {
		case <-ctx.Done():
			t.Errorf("the load did not see %d refreshes: %v", expiries, ctx.Err())
			done = true
		case <-tick.C:
			rs := shared.refreshes()
			if len(rs) < expiries {
				continue
			}
			last := rs[len(rs)-1].At
			mu.Lock()
			done = !slices.ContainsFunc(lastOK, func(s time.Time) bool { return !s.After(last) })
			mu.Unlock()
		}
	}
	tick.Stop()
	close(stop)
	wg.Wait()

	total := newTally()
	for _, cl := range cls {
		total.add(cl.tally)
	}
	t.Logf("token refresh: %d clients, tool calls %d, results %d; %s", clients, made, ok, total)
	for i, err := range errs {
		if i == 5 {
			t.Errorf("… %d more errors", len(errs)-5)
			break
		}
		t.Error(err)
	}
	if ok != made {
		t.Errorf("tool calls %d, results %d: want every call answered", made, ok)
	}
	for _, cr := range creds {
		grants := cr.as.Grants()[cr.grants0:]
		tokenReqs := cr.as.Requests("/token")[cr.tokenReqs0:]
		rs := cr.refreshes()
		byType := map[string]int{}
		for _, r := range tokenReqs {
			byType[r.Form.Get("grant_type")]++
		}
		refreshReqs := byType["refresh_token"]
		// An expiry is a time the token fell due: the refreshes are
		// grouped by it (those less than half a token's usable time apart
		// answer the same one).
		episodes := 0
		for i, g := range rs {
			if i == 0 || g.At.Sub(rs[i-1].At) > tokenUsable/2 {
				episodes++
			}
		}
		perExpiry := 0.0
		if episodes > 0 {
			perExpiry = float64(refreshReqs) / float64(episodes)
		}
		chains := 0 // refreshes that did not spend the previous refresh's token
		var gaps []string
		for i := range rs {
			if i == 0 || rs[i].Presented != rs[i-1].RefreshToken {
				chains++
			}
			if i > 0 {
				gaps = append(gaps, rs[i].At.Sub(rs[i-1].At).Round(time.Millisecond).String())
			}
		}
		expired := cr.as.ExpiredRefusals() - cr.expired0
		kind := "logged in once"
		if cr.machine {
			kind = "client_credentials"
		}
		if cr.shared {
			kind += ", shared"
		} else {
			kind += ", reported only"
		}
		t.Logf("%s (%s): token requests %v (granted %d), expiries %d, refresh grants per expiry %.2f, chains of refresh tokens %d, between refreshes %v, requests refused for an expired token %d",
			cr.server, kind, byType, len(grants), episodes, perExpiry, chains, gaps, expired)
		if !cr.shared {
			continue
		}
		least := expiries // the load runs for the first shared one's
		if cr != shared {
			least-- // (whose first token may be older or younger)
		}
		if episodes < least || refreshReqs != episodes || len(rs) != refreshReqs || len(grants) != len(tokenReqs) {
			t.Errorf("%s: %d expiries, %d refresh requests, %d refresh grants, %d token requests of which %d granted: want one refresh per expiry (≥ %d), each granted",
				cr.server, episodes, refreshReqs, len(rs), len(tokenReqs), len(grants), least)
		}
		if chains != 1 {
			t.Errorf("%s: %d chains of refresh tokens: a refresh spent another token than the previous refresh issued (replicas refreshing on their own)", cr.server, chains)
		}
		if expired != 0 {
			t.Errorf("%s: %d requests reached the server with an expired token", cr.server, expired)
		}
	}
	checkSpread(t, total, c)
}
