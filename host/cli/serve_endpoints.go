package cli

import (
	"context"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"

	"github.com/hashicorp/go-hclog"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/gateway"
	"github.com/mcphost/mcphost/host/gateway/streamable"
)

// Named endpoints over HTTP (endpoint "NAME" blocks): each is served at
// /mcp/NAME by a gateway of its own over the one host (gateway.Options.Endpoint:
// its servers, tools filter and naming), with the same streamable.Options as
// /mcp (bearer token or inbound OAuth, rate limits, session caps), so a
// client of one endpoint is held to what /mcp's are. /mcp stays the whole
// gateway, untouched: its relay has no endpoint to look at. A reload adds,
// removes and changes endpoints: a new one is served at once; a removed one
// is answered 404 and its gateway drained and closed; a changed one's
// servers, tools and naming apply at its next Sync (its sessions stay
// open, are told the lists changed, and list the new names).

// endpointsPrefix is where named endpoints are served: /mcp/NAME.
const endpointsPrefix = "/mcp/"

// servedEndpoint is one endpoint being served.
type servedEndpoint struct {
	def     *config.Endpoint
	g       *gateway.Gateway
	handler http.Handler
	// stopConnecting ends g's ConnectAll, which closes connected.
	stopConnecting context.CancelFunc
	connected      <-chan struct{}
}

// endpoints serves the configuration's named endpoints under /mcp/.
type endpoints struct {
	h     *host.Host
	opts  gateway.Options     // the whole gateway's (Endpoint and Logger set per endpoint)
	hopts *streamable.Options // /mcp's
	log   hclog.Logger
	// applying serializes apply; mu guards served and closed (held for
	// no I/O).
	applying sync.Mutex
	mu       sync.Mutex
	served   map[string]*servedEndpoint
	closed   bool
	wg       sync.WaitGroup // retired gateways being drained and closed
}

func newEndpoints(h *host.Host, opts gateway.Options, hopts *streamable.Options, log hclog.Logger) *endpoints {
	return &endpoints{h: h, opts: opts, hopts: hopts, log: log, served: map[string]*servedEndpoint{}}
}

// start serves e: a gateway of its own, synced with what is connected
// (as /mcp, it does not wait for the servers still connecting: its
// ConnectAll, which shares their connects, syncs each in as it settles).
func (s *endpoints) start(ctx context.Context, e *config.Endpoint) *servedEndpoint {
	o := s.opts
	o.Endpoint = e.Name
	o.Logger = s.log.Named(e.Name)
	g := gateway.New(s.h, &o)
	cctx, stop := context.WithCancel(context.WithoutCancel(ctx))
	connected := g.ConnectAll(cctx, nil)
	for _, p := range g.Sync(ctx) {
		o.Logger.Warn("registry problem", "server", p.Server, "detail", p.Detail)
	}
	return &servedEndpoint{def: e, g: g, handler: streamable.New(g).Handler(s.hopts), stopConnecting: stop, connected: connected}
}

// apply makes what is served follow cfg's endpoints (at start, and after
// each reload). Applies run one at a time (applying); the gateways of new
// endpoints are started — a Sync, upstream I/O — outside s.mu, so that
// requests to the endpoints already served (ServeHTTP) never wait for
// them.
func (s *endpoints) apply(ctx context.Context, cfg *config.Config) {
	s.applying.Lock()
	defer s.applying.Unlock()
	want := map[string]*config.Endpoint{}
	for _, e := range cfg.Endpoints {
		want[e.Name] = e
	}
	var starts []*config.Endpoint
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	for name, se := range s.served {
		e, ok := want[name]
		switch {
		case !ok:
			delete(s.served, name)
			s.retire(se)
			s.log.Info("endpoint removed", "endpoint", name)
		case !e.Equal(se.def):
			se.def = e
			se.g.Resync()
			s.log.Info("endpoint changed", "endpoint", name)
		}
	}
	for name, e := range want {
		if _, ok := s.served[name]; !ok {
			starts = append(starts, e)
		}
	}
	s.mu.Unlock()
	started := make([]*servedEndpoint, 0, len(starts))
	for _, e := range starts {
		started = append(started, s.start(ctx, e))
	}
	var orphans []*servedEndpoint // started, but close ran meanwhile
	defer func() {
		for _, se := range orphans {
			se.stopConnecting()
			<-se.connected
			se.g.CloseSessions()
			se.g.Close()
		}
	}()
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, se := range started {
		if s.closed {
			orphans = append(orphans, se) // (closed here: close may be done waiting)
			continue
		}
		name := se.def.Name
		if old := s.served[name]; old != nil {
			s.retire(old) // (cannot be: applies run one at a time)
		}
		s.served[name] = se
		s.log.Info("endpoint added", "endpoint", name, "path", endpointsPrefix+name)
	}
}

// retire drains a gateway no longer served, then closes it. The caller
// holds s.mu.
func (s *endpoints) retire(se *servedEndpoint) {
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		se.stopConnecting()
		<-se.connected
		se.g.Drain(context.Background())
		se.g.CloseSessions()
		se.g.Close()
	}()
}

// ServeHTTP serves /mcp/NAME by endpoint NAME's gateway; any other path
// under /mcp/, or an endpoint not configured, is 404.
func (s *endpoints) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	name, _ := strings.CutPrefix(r.URL.Path, endpointsPrefix)
	s.mu.Lock()
	se := s.served[name]
	s.mu.Unlock()
	if se == nil {
		// (Which endpoints there are is not told before authentication.)
		http.Error(w, "no MCP endpoint is served at "+r.URL.Path, http.StatusNotFound)
		return
	}
	se.handler.ServeHTTP(w, r)
}

// gateways returns the endpoints' gateways being served.
func (s *endpoints) gateways() []*gateway.Gateway {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*gateway.Gateway, 0, len(s.served))
	for _, se := range s.served {
		out = append(out, se.g)
	}
	return out
}

// banner describes the endpoints for serve's start banner ("" for none).
func (s *endpoints) banner(addr string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.served) == 0 {
		return ""
	}
	names := make([]string, 0, len(s.served))
	for name := range s.served {
		names = append(names, name)
	}
	sort.Strings(names)
	var b strings.Builder
	b.WriteString("Named endpoints:\n")
	for _, name := range names {
		fmt.Fprintf(&b, "  http://%s%s%s (%s)\n", addr, endpointsPrefix, name, strings.Join(s.served[name].def.Servers, ", "))
	}
	return b.String()
}

// close drains the endpoints' gateways (requests in flight finish, up to
// the drain timeout), ends their sessions and closes them; no endpoint is
// served after it.
func (s *endpoints) close() {
	s.mu.Lock()
	s.closed = true
	served := s.served
	s.served = map[string]*servedEndpoint{}
	for _, se := range served {
		s.retire(se)
	}
	s.mu.Unlock()
	s.wg.Wait()
}

// unknownEndpoint is serve --endpoint's error for a name no endpoint
// block has.
func unknownEndpoint(cfg *config.Config, name string) error {
	names := cfg.EndpointNames()
	if len(names) == 0 {
		return fmt.Errorf("--endpoint %q: no endpoint is defined; declare one, e.g. endpoint %q { servers = [\"github\"] }", name, name)
	}
	return fmt.Errorf("--endpoint %q: no such endpoint; the endpoints are %s", name, strings.Join(names, ", "))
}
