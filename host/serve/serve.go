// Package serve exposes a host's unified registry as an MCP server — the
// gateway — over stdio or streamable HTTP. tools/list shows the registry;
// tools/call goes through host.CallTool. The tool set follows the upstream
// servers: a list change upstream updates it and notifies downstream clients.
package serve

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/permissions"
	"github.com/mcphost/mcphost/host/registry"
)

// Options configures a Gateway. Nil options mean defaults.
type Options struct {
	// Logger receives the gateway's logs. OPTIONAL.
	Logger hclog.Logger
	// DrainTimeout bounds Drain: requests still in flight after it are
	// answered with an error. OPTIONAL: defaults to config.DefaultDrainTimeout.
	DrainTimeout time.Duration
}

// Gateway serves a host's registry as an MCP server.
type Gateway struct {
	h   *host.Host
	log hclog.Logger
	srv *mcp.Server

	mu      sync.Mutex
	exposed map[string]*mcp.Tool // registry name -> the tool as served

	changed   chan struct{} // a registry change is pending
	relayed   atomic.Uint64 // tools/call requests that took the relay path
	askSecret []byte        // keys the request state of permission questions

	// Graceful shutdown (drain.go).
	drainTimeout time.Duration
	calls        *inflight
	drainMu      sync.Mutex
	draining     bool
	abort        context.Context // cancelled when the drain deadline passes
	cancelAbort  context.CancelFunc

	sessions sessionLimit // serve --http session cap (http.go)
}

// RelayedCalls reports how many tools/call requests took the relay path
// (forwarded without decoding) rather than the go-sdk server.
func (g *Gateway) RelayedCalls() uint64 { return g.relayed.Load() }

// New returns a gateway for h. Call Sync (or Run) before serving.
func New(h *host.Host, opts *Options) *Gateway {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Logger == nil {
		o.Logger = hclog.NewNullLogger()
	}
	if o.DrainTimeout <= 0 {
		o.DrainTimeout = config.DefaultDrainTimeout
	}
	g := &Gateway{h: h, log: o.Logger, exposed: map[string]*mcp.Tool{}, changed: make(chan struct{}, 1), askSecret: make([]byte, 32),
		drainTimeout: o.DrainTimeout, calls: newInflight()}
	g.abort, g.cancelAbort = context.WithCancel(context.Background())
	rand.Read(g.askSecret)
	g.srv = mcp.NewServer(&mcp.Implementation{Name: "mcphost", Version: host.Version}, &mcp.ServerOptions{
		Instructions: "mcphost gateway: the tools of several MCP servers, named mcp__SERVER__TOOL.",
		Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{ListChanged: true}},
	})
	g.srv.AddReceivingMiddleware(g.drainMiddleware)
	h.Registry().OnChange(func(string) {
		select {
		case g.changed <- struct{}{}:
		default:
		}
	})
	return g
}

// Server returns the underlying go-sdk server.
func (g *Gateway) Server() *mcp.Server { return g.srv }

// Sync makes the served tool set equal to the registry's current tools and
// returns the registry's problems. Unchanged tools are left alone, so clients
// are notified only of real changes.
func (g *Gateway) Sync(ctx context.Context) []registry.Problem {
	tools, problems := g.h.Tools(ctx)
	g.mu.Lock()
	defer g.mu.Unlock()
	want := map[string]*registry.Tool{}
	for _, t := range tools {
		want[t.Name] = t
	}
	var remove []string
	for name := range g.exposed {
		if _, ok := want[name]; !ok {
			remove = append(remove, name)
			delete(g.exposed, name)
		}
	}
	if len(remove) > 0 {
		g.srv.RemoveTools(remove...)
	}
	for name, t := range want {
		mt := serverTool(t)
		if old, ok := g.exposed[name]; ok && reflect.DeepEqual(old, mt) {
			continue
		}
		if err := g.addTool(mt); err != nil {
			problems = append(problems, registry.Problem{Server: t.Server, Detail: err.Error()})
			continue
		}
		g.exposed[name] = mt
	}
	return problems
}

// addTool adds a tool to the go-sdk server, which panics on tool definitions it
// rejects; an upstream server's bad definition must not take the gateway down.
func (g *Gateway) addTool(t *mcp.Tool) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("tool %s is not served: %v", t.Name, r)
		}
	}()
	g.srv.AddTool(t, g.handler(t.Name))
	return nil
}

// serverTool turns a registry tool into the definition served downstream.
func serverTool(t *registry.Tool) *mcp.Tool {
	mt := &mcp.Tool{
		Name:         t.Name,
		Description:  t.Description,
		InputSchema:  ObjectSchema(t.InputSchema),
		OutputSchema: t.OutputSchema,
	}
	if t.DisplayName != t.Original {
		mt.Title = t.DisplayName
	}
	if t.Annotations != nil {
		a := *t.Annotations
		mt.Annotations = &a
	}
	if mt.OutputSchema != nil {
		if m, ok := mt.OutputSchema.(map[string]any); !ok || m["type"] != "object" {
			mt.OutputSchema = nil
		}
	}
	return mt
}

// ObjectSchema returns schema if it is a JSON object schema of type "object",
// and an empty object schema otherwise.
func ObjectSchema(schema any) any {
	if m, ok := schema.(map[string]any); ok && m["type"] == "object" {
		return m
	}
	return map[string]any{"type": "object"}
}

func (g *Gateway) handler(name string) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var args any
		if len(req.Params.Arguments) > 0 {
			args = json.RawMessage(req.Params.Arguments)
		}
		opts := &host.CallOptions{}
		if d := g.h.Decide(name); d.Behavior == permissions.Ask {
			// Ask the person behind the downstream client.
			ok, err := g.askAnswer(req.Params, name)
			switch {
			case err != nil:
				return errorResult(fmt.Errorf("%w: %s: %v", host.ErrDenied, name, err)), nil
			case !ok && !clientCanElicit(req):
				return errorResult(fmt.Errorf("%w: %s needs approval (%s), and %v", host.ErrDenied, name, d.Explain(), errNoElicitation)), nil
			case !ok:
				return g.askRequest(name, req.Params.Arguments, d), nil
			}
			opts.Approved = true
		}
		if server, tool, ok := registry.ParseName(name); ok && tool == host.AuthToolName {
			// A needs-auth server's pseudo-tool, or the retry of its call
			// whose login just finished (the pseudo-tool is gone; the
			// pending login has the outcome). Other calls skip the lookup.
			if real, pseudo := g.h.AuthToolOf(ctx, name); pseudo {
				return g.login(ctx, req, name, real), nil
			}
			if _, answered := req.Params.InputResponses[loginKey]; answered {
				return g.login(ctx, req, name, server), nil
			}
		}
		if token := req.Params.GetProgressToken(); token != nil {
			opts.OnProgress = func(p *mcp.ProgressNotificationParams) {
				fwd := *p
				fwd.ProgressToken = token
				req.Session.NotifyProgress(ctx, &fwd)
			}
		}
		res, err := g.h.CallTool(ctx, name, args, opts)
		var te *host.ToolError
		switch {
		case errors.As(err, &te):
			stripProtocolMeta(res)
			return res, nil // isError passes through as a result
		case errors.Is(err, registry.ErrNotFound):
			return nil, err
		case err != nil:
			g.log.Warn("tool call failed", "tool", name, "error", err)
			return errorResult(err), nil
		}
		stripProtocolMeta(res)
		return res, nil
	}
}

// Run keeps the served tools in sync with the registry until ctx is done.
func (g *Gateway) Run(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-g.changed:
			for _, p := range g.Sync(ctx) {
				g.log.Warn("registry problem", "server", p.Server, "detail", p.Detail)
			}
		}
	}
}

// ServeStdio serves one client over r/w until the client disconnects or ctx
// is done. When ctx is done it drains first (see Drain): requests in flight
// are answered, or cancelled with an error at the drain deadline.
func (g *Gateway) ServeStdio(ctx context.Context, r io.ReadCloser, w io.WriteCloser) error {
	// The session outlives ctx by the drain: its requests must not be
	// cancelled by the signal that starts the shutdown.
	sctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	defer cancel()
	go g.Run(sctx)
	rc := newRelayConn(g, r, w)
	ss, err := g.srv.Connect(sctx, rc, nil)
	if err != nil {
		return err
	}
	done := make(chan error, 1)
	go func() { done <- ss.Wait() }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		g.Drain(context.Background())
		rc.waitAnswered(abortGrace)
		ss.Close()
		<-done
		return nil
	}
}

// stripProtocolMeta removes the upstream's protocol-reserved _meta keys
// (io.modelcontextprotocol/…, such as its serverInfo) from a result: downstream,
// the gateway is the server.
func stripProtocolMeta(res *mcp.CallToolResult) {
	for k := range res.Meta {
		if strings.HasPrefix(k, "io.modelcontextprotocol/") {
			delete(res.Meta, k)
		}
	}
}

func errorResult(err error) *mcp.CallToolResult {
	r := &mcp.CallToolResult{}
	r.SetError(err)
	return r
}
