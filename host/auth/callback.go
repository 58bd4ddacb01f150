package auth

import (
	"context"
	"errors"
	"fmt"
	"html"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/mcphost/mcphost/sdk/oauthkit"
	"github.com/modelcontextprotocol/go-sdk/auth"
)

// CallbackPath is the path of the redirect URI on the loopback listener.
const CallbackPath = "/callback"

// FlowTimeout bounds the wait for the user to finish a browser login; a
// flow's state is worthless after it.
const FlowTimeout = oauthkit.FlowTimeout

// callbackServer is the one-shot redirect target of an authorization-code
// flow: it listens on 127.0.0.1 only, accepts exactly one request at
// CallbackPath carrying the expected state, and then stops listening. Any
// other request (another path, a wrong or replayed state, a second callback)
// gets a 4xx and is never passed on, so no token request follows it. An
// answer with the right state but an iss other than the expected issuer
// (or none, when the server advertises RFC 9207) gets a 4xx too and ends
// the flow with ErrIssuerResponse: it is a mix-up, its code is not redeemed.
type callbackServer struct {
	ln     net.Listener
	srv    *http.Server
	result chan callbackResult
	mu     sync.Mutex
	state  string // the state of the flow in progress; "" once used
	used   bool
	// issuer is the authorization server's issuer; issRequired is set
	// when it advertises authorization_response_iss_parameter_supported.
	issuer      string
	issRequired bool
	closing     sync.Once
}

type callbackResult struct {
	res *auth.AuthorizationResult
	err error
}

// listenCallback starts listening on 127.0.0.1:port (0: any free port).
func listenCallback(port int) (*callbackServer, error) {
	ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		return nil, fmt.Errorf("OAuth callback listener on 127.0.0.1:%d: %w", port, err)
	}
	c := &callbackServer{ln: ln, result: make(chan callbackResult, 1)}
	c.srv = &http.Server{Handler: http.HandlerFunc(c.serve), ReadHeaderTimeout: 10 * time.Second}
	go c.srv.Serve(ln) // stopped by close
	return c, nil
}

// RedirectURL is the redirect URI to register and send.
func (c *callbackServer) RedirectURL() string {
	return fmt.Sprintf("http://127.0.0.1:%d%s", c.ln.Addr().(*net.TCPAddr).Port, CallbackPath)
}

// expect arms the server for one flow's state, from issuer (which sends
// iss in its answers if issRequired).
func (c *callbackServer) expect(state, issuer string, issRequired bool) {
	c.mu.Lock()
	c.state, c.issuer, c.issRequired = state, issuer, issRequired
	c.mu.Unlock()
}

func (c *callbackServer) serve(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Referrer-Policy", "no-referrer")
	if r.URL.Path != CallbackPath || r.Method != http.MethodGet {
		http.NotFound(w, r)
		return
	}
	q := r.URL.Query()
	c.mu.Lock()
	if c.used {
		c.mu.Unlock()
		http.Error(w, "This login link was already used.", http.StatusGone)
		return
	}
	if c.state == "" || q.Get("state") != c.state {
		c.mu.Unlock()
		http.Error(w, "Unknown or expired login state.", http.StatusBadRequest)
		return
	}
	c.used = true
	c.state = ""
	issuer, issRequired := c.issuer, c.issRequired
	c.mu.Unlock()

	// RFC 9207 §2.4, for error answers too: compared exactly.
	if iss, ok := q["iss"]; (ok && (len(iss) != 1 || iss[0] != issuer)) || (!ok && issRequired) {
		http.Error(w, "This answer does not come from the expected authorization server.", http.StatusBadRequest)
		c.result <- callbackResult{err: fmt.Errorf("%w: expected %q", ErrIssuerResponse, issuer)}
		go c.close()
		return
	}
	if e := q.Get("error"); e != "" {
		msg := e
		if d := q.Get("error_description"); d != "" {
			msg += ": " + d
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.WriteHeader(http.StatusForbidden)
		fmt.Fprintf(w, "<!doctype html><title>mcphost</title><p>Authorization failed: %s. You can close this window.</p>", html.EscapeString(msg))
		c.result <- callbackResult{err: fmt.Errorf("%w: %q", ErrAuthorizationDenied, msg)}
		go c.close()
		return
	}
	if q.Get("code") == "" {
		http.Error(w, "Missing code.", http.StatusBadRequest)
		c.result <- callbackResult{err: errors.New("the authorization response had no code")}
		go c.close()
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	fmt.Fprint(w, "<!doctype html><title>mcphost</title><p>Login complete. You can close this window.</p>")
	c.result <- callbackResult{res: &auth.AuthorizationResult{Code: q.Get("code"), State: q.Get("state"), Iss: q.Get("iss")}}
	go c.close()
}

// wait returns the one callback's result.
func (c *callbackServer) wait(ctx context.Context) (*auth.AuthorizationResult, error) {
	select {
	case r := <-c.result:
		return r.res, r.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// close stops listening; in-flight responses finish.
func (c *callbackServer) close() {
	c.closing.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		c.srv.Shutdown(ctx)
	})
}

// InteractionCallback is the one-shot 127.0.0.1 redirect target of an auth
// plugin's interaction: the first GET at its path is passed on (its raw
// query; the plugin checks state and code), every other request gets a 4xx,
// and the listener closes after that first callback.
type InteractionCallback struct {
	ln     net.Listener
	srv    *http.Server
	path   string
	result chan string
	mu     sync.Mutex
	used   bool
	once   sync.Once
}

// ListenInteraction starts listening on 127.0.0.1:port (0: a free port) for
// one request at path.
func ListenInteraction(port int, path string) (*InteractionCallback, error) {
	if path == "" || path[0] != '/' {
		return nil, fmt.Errorf("invalid callback path %q", path)
	}
	ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		return nil, fmt.Errorf("login callback listener on 127.0.0.1:%d: %w", port, err)
	}
	c := &InteractionCallback{ln: ln, path: path, result: make(chan string, 1)}
	c.srv = &http.Server{Handler: http.HandlerFunc(c.serve), ReadHeaderTimeout: 10 * time.Second}
	go c.srv.Serve(ln) // stopped by Close
	return c, nil
}

// RedirectURL is the redirect URI the listener serves.
func (c *InteractionCallback) RedirectURL() string {
	return fmt.Sprintf("http://127.0.0.1:%d%s", c.ln.Addr().(*net.TCPAddr).Port, c.path)
}

func (c *InteractionCallback) serve(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Referrer-Policy", "no-referrer")
	if r.URL.Path != c.path || r.Method != http.MethodGet {
		http.NotFound(w, r)
		return
	}
	c.mu.Lock()
	used := c.used
	c.used = true
	c.mu.Unlock()
	if used {
		http.Error(w, "This login link was already used.", http.StatusGone)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	fmt.Fprint(w, "<!doctype html><title>mcphost</title><p>mcphost received the login. You can close this window.</p>")
	c.result <- r.URL.RawQuery
	go c.Close()
}

// Wait returns the callback's raw query.
func (c *InteractionCallback) Wait(ctx context.Context) (string, error) {
	select {
	case q := <-c.result:
		return q, nil
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

// Close stops listening.
func (c *InteractionCallback) Close() {
	c.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		c.srv.Shutdown(ctx)
	})
}
