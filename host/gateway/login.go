package gateway

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host"
	hauth "github.com/mcphost/mcphost/host/auth"
	"github.com/mcphost/mcphost/host/permissions"
)

// loginKey names the gateway's login request among a call's input requests.
const loginKey = "mcphost-login"

// pendingLogins tracks the logins started for downstream clients, one at a
// time per server (per server and gateway user for a per-user server), each
// bounded by hauth.FlowTimeout. An ended login is forgotten loginLinger
// after its end.
type pendingLogins struct {
	mu      sync.Mutex
	current map[string]*pendingLogin // by loginID: the latest login of each
	byNonce map[string]*pendingLogin // every login not yet forgotten

	// run runs a login: the host's Login when nil (tests replace it).
	run func(ctx context.Context, server string, present hauth.Presenter) error

	closed  bool           // the gateway is closed: no login starts
	running sync.WaitGroup // the logins' goroutines
}

// pendingLogin is a login running in the background. url and ready are set
// before the login is published (ready closed once the URL is known or the
// login ended); done is closed when it ends, and err then says how.
type pendingLogin struct {
	id    string // loginID: the server, and the user
	nonce string // this login's random id (see login)
	ready chan struct{}
	url   string // written once, before ready is closed
	done  chan struct{}
	err   error // written once, before done is closed

	cancel context.CancelFunc // ends the login (the gateway's Close)
	linger *time.Timer        // forgets it, once ended (guarded by pendingLogins.mu)
}

// close cancels every login still running and waits for their goroutines,
// and stops the timers that would forget the ended ones; no login starts
// after it.
func (l *pendingLogins) close() {
	l.mu.Lock()
	l.closed = true
	for _, p := range l.byNonce {
		p.cancel()
		if p.linger != nil {
			p.linger.Stop()
		}
	}
	l.mu.Unlock()
	l.running.Wait()
}

// forget drops p, unless a newer login replaced it.
func (l *pendingLogins) forget(p *pendingLogin) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.byNonce[p.nonce] == p {
		delete(l.byNonce, p.nonce)
	}
	if l.current[p.id] == p {
		delete(l.current, p.id)
	}
}

// login answers a call of a server's authenticate pseudo-tool. The login
// runs in the host (its loopback callback, its token store); the downstream
// client only shows the authorization URL to its user. A client that
// supports URL-mode elicitation gets it as an input-required result (the
// go-sdk turns that into elicitation/create for older protocol versions);
// the retried call, carrying the request state issued for this call, waits
// for the login to finish and returns the server's tools. A client without
// it gets the URL as text, and the login completes in the background.
//
// Each login has a nonce, a random id, which the request state issued with
// its URL carries (sealed) and its shared record is named by: a retry waits
// for its own login, never for an older or newer one of the same user and
// server, whichever replica it reaches.
func (g *Gateway) login(ctx context.Context, req *mcp.CallToolRequest, name, server string) *mcp.CallToolResult {
	p := req.Params
	if resp, ok := p.InputResponses[loginKey]; ok {
		nonce, ok := g.openState(ctx, p.RequestState, stateLogin, name, p.Arguments)
		if !ok {
			return errorResult(errors.New("the login answer does not belong to this call"))
		}
		if er, ok := resp.(*mcp.ElicitResult); !ok || er.Action != "accept" {
			return errorResult(fmt.Errorf("the login to %s was declined", server))
		}
		here, err := g.awaitLogin(ctx, server, name, string(nonce))
		if err != nil {
			return errorResult(err)
		}
		if !here {
			g.h.Serving().LoggedInElsewhere(ctx, server)
		}
		g.Sync(ctx) // the real tools are served before the client hears of them
		return g.loginResult(ctx, server)
	}
	// The login outlives this request (the user completes it in a browser,
	// then the client retries); hauth.FlowTimeout bounds it.
	pl, err := g.startLogin(context.WithoutCancel(ctx), ctx, server)
	if err != nil {
		return errorResult(fmt.Errorf("logging in to %s: %w", server, err))
	}
	if pl.url == "" {
		g.Sync(ctx) // the login needed no user
		return g.loginResult(ctx, server)
	}
	if !canElicitURL(req) {
		then := fmt.Sprintf("Then list the tools again: the server's tools replace %s.", name)
		if g.search != nil {
			// (tools/list holds only search_tools and call_tool.)
			then = fmt.Sprintf("Then find the server's tools with %s (server %q): they replace %s.", SearchToolName, server, name)
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{
			Text: fmt.Sprintf("To log in to %s, open this URL in a browser and complete the login:\n%s\n%s", server, pl.url, then),
		}}}
	}
	return &mcp.CallToolResult{
		InputRequests: mcp.InputRequestMap{loginKey: &mcp.ElicitParams{
			Mode:          "url",
			Message:       fmt.Sprintf("Log in to the MCP server %s to use its tools.", server),
			URL:           pl.url,
			ElicitationID: g.sealState(ctx, stateLogin, server, nil, nil),
		}},
		RequestState: g.sealState(ctx, stateLogin, name, p.Arguments, []byte(pl.nonce)),
	}
}

// awaitLogin waits for the login of ctx's caller to server whose nonce a
// retry's request state carries, and returns how it ended (nil: logged in)
// and whether it ran on this replica. A login this replica runs (or ran,
// within loginLinger) is waited for here; any other, through its shared
// record (awaitSharedLogin).
func (g *Gateway) awaitLogin(ctx context.Context, server, tool, nonce string) (here bool, err error) {
	id := loginID(ctx, server)
	g.logins.mu.Lock()
	pl := g.logins.byNonce[nonce]
	g.logins.mu.Unlock()
	if pl == nil || pl.id != id {
		// Started by another replica (the balancer sent the retry
		// elsewhere): its outcome is in the shared state.
		return false, g.awaitSharedLogin(ctx, id, nonce, server, tool)
	}
	select {
	case <-pl.done:
	case <-ctx.Done():
		return true, ctx.Err()
	}
	if pl.err != nil {
		return true, fmt.Errorf("logging in to %s: %w", server, pl.err)
	}
	return true, nil
}

// startLogin starts server's login in the background (or joins the one in
// progress) and returns once its authorization URL is known. The login
// belongs to life's lifetime and to hauth.FlowTimeout; wait bounds only the
// waiting for the URL.
func (g *Gateway) startLogin(life, wait context.Context, server string) (*pendingLogin, error) {
	g.logins.mu.Lock()
	if g.logins.closed {
		g.logins.mu.Unlock()
		return nil, errShuttingDown("no login starts")
	}
	if g.logins.current == nil {
		g.logins.current = map[string]*pendingLogin{}
		g.logins.byNonce = map[string]*pendingLogin{}
	}
	id := loginID(life, server)
	p, ok := g.logins.current[id]
	if ok {
		select {
		case <-p.done:
			ok = false // ended: start another
		default:
		}
	}
	if !ok {
		lctx, cancel := context.WithTimeout(life, hauth.FlowTimeout)
		p = &pendingLogin{id: id, nonce: rand.Text(), ready: make(chan struct{}), done: make(chan struct{}), cancel: cancel}
		g.logins.current[id] = p
		g.logins.byNonce[p.nonce] = p
		run := g.logins.run
		if run == nil {
			run = g.h.Login
		}
		var once sync.Once
		ready := func(u string) {
			once.Do(func() {
				p.url = u
				close(p.ready)
			})
		}
		g.logins.running.Add(1)
		go func() { // owned by the gateway: its Close cancels lctx and waits
			defer g.logins.running.Done()
			defer cancel()
			// Recorded before the URL is known, so before any retry, and
			// kept alive while the login runs.
			g.recordLogin(lctx, p, loginPending, nil)
			stopRenewing := g.renewPendingLogin(lctx, p)
			err := run(lctx, server, func(_ context.Context, u string) error {
				ready(u)
				return nil
			})
			stopRenewing() // (before the end is recorded, which it must not overwrite)
			p.err = err
			g.recordLogin(life, p, loginEnded, err)
			ready("") // no URL was needed, or the login failed first
			close(p.done)
			g.logins.mu.Lock()
			if !g.logins.closed {
				p.linger = time.AfterFunc(loginLinger, func() { g.logins.forget(p) })
			}
			g.logins.mu.Unlock()
		}()
	}
	g.logins.mu.Unlock()
	select {
	case <-p.ready:
	case <-wait.Done():
		return nil, wait.Err()
	}
	if p.url == "" {
		<-p.done // ready without a URL is closed just before done
		if p.err != nil {
			return nil, p.err
		}
	}
	return p, nil
}

// loginResult is the result of a finished authenticate call: the server's
// tools, now available, by the names the gateway exposes.
func (g *Gateway) loginResult(ctx context.Context, server string) *mcp.CallToolResult {
	var names []string
	if g.users.Load() && g.h.Serving().PerUser(server) {
		tools, _ := g.h.ToolsOf(ctx, []string{server}) // the caller's own
		c := host.CallerOf(ctx)
		for _, t := range tools {
			if c == nil || g.h.Serving().DecideFor(c.Principal, t.Name).Behavior != permissions.Deny {
				names = append(names, t.Name)
			}
		}
	} else {
		g.mu.Lock()
		for exposed, t := range g.exposed.tools {
			if t.Server == server {
				names = append(names, exposed)
			}
		}
		g.mu.Unlock()
	}
	sort.Strings(names)
	text := fmt.Sprintf("Logged in to %s. Its %d tools are now available: %s", server, len(names), strings.Join(names, ", "))
	if g.search != nil {
		text += fmt.Sprintf(". They are not listed: %s (server %q) finds them, %s calls them.", SearchToolName, server, CallToolName)
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}
}

// loginID is the key of a pending login: the server, and for a per-user
// server's login by a gateway user, that user (each logs in for itself).
func loginID(ctx context.Context, server string) string {
	if c := host.CallerOf(ctx); c != nil {
		return server + "\x00" + c.Principal.ID()
	}
	return server
}

// canElicitURL reports whether the downstream client declared URL-mode
// elicitation.
func canElicitURL(req *mcp.CallToolRequest) bool {
	caps := req.ClientCapabilities()
	return caps != nil && caps.Elicitation != nil && caps.Elicitation.URL != nil
}
