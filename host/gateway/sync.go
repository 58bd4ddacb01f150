package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/registry"
	"github.com/mcphost/mcphost/internal/mcpmeta"
)

// qualifiedScheme prefixes a resource URI (or URI template) that more than
// one server offers: each server's is served as mcphost://SERVER/ORIGINAL, so
// that both stay distinguishable and a read goes to its owner — but for
// MCP Apps URIs (ui://…), served as ui://mcphost/SERVER/REST (uiQualified):
// a host's app bridge takes ui:// URIs only. A URI only one server offers is
// served unchanged. Upstream URIs in either namespace are not served
// (reservedURI): a server cannot pass for another.
const qualifiedScheme = "mcphost://"

// uiScheme is the scheme of MCP Apps resources; uiQualified the prefix of
// the qualified form of a ui:// URI: ui://mcphost/SERVER/ followed by the
// original without its ui://.
const (
	uiScheme    = "ui://"
	uiQualified = uiScheme + "mcphost/"
)

// qualifyURI returns the qualified form of server's own URI (or URI
// template) uri: ui://mcphost/SERVER/REST for ui://REST, else
// mcphost://SERVER/URI.
func qualifyURI(server, uri string) string {
	if rest, ok := strings.CutPrefix(uri, uiScheme); ok {
		return uiQualified + server + "/" + rest
	}
	return qualifiedScheme + server + "/" + uri
}

// unqualifyURI parses a qualified URI (qualifyURI): the server and its own
// URI. ok is false for any other URI.
func unqualifyURI(uri string) (server, own string, ok bool) {
	if rest, isUI := strings.CutPrefix(uri, uiQualified); isUI {
		server, own, ok = strings.Cut(rest, "/")
		own = uiScheme + own
	} else if rest, isQ := strings.CutPrefix(uri, qualifiedScheme); isQ {
		server, own, ok = strings.Cut(rest, "/")
	}
	if !ok || server == "" || own == "" || own == uiScheme {
		return "", "", false
	}
	return server, own, true
}

// reservedURI reports whether uri, a URI (or URI template) as a server
// gives it, is in the namespaces of the gateway's qualified URIs: such a
// URI is not served (a server naming ui://mcphost/OTHER/… would have its
// clients read another server's resource).
func reservedURI(uri string) bool {
	return strings.HasPrefix(uri, uiQualified) || strings.HasPrefix(uri, qualifiedScheme)
}

// exposure is what the gateway serves, with what each exposed name or URI
// stands for.
type exposure struct {
	tools    map[string]*registry.Tool
	toolDefs map[string]*mcp.Tool
	// headered are the tools whose input schema names parameters sent as
	// HTTP headers too (x-mcp-header, SEP-2243): the go-sdk handler checks
	// those headers, so their calls over HTTP are not relayed.
	headered  map[string]bool
	prompts   map[string]*registry.Prompt
	promptDef map[string]*mcp.Prompt
	resources map[string]owned[*mcp.Resource]
	templates map[string]owned[*mcp.ResourceTemplate]
	// apps are the URIs the served resources are served under, by their
	// server and own URI (for the MCP Apps URIs in tools' _meta:
	// appsURI); routed the qualified URIs tools name (appsURI) that no
	// listed resource is served under: a read of one goes to the tool's
	// server (appsMiddleware).
	apps   map[subKey]string
	routed map[string]subKey

	// syncing serializes Sync: it is held from the reading of the
	// registry to the end of applying what was read, so that a Sync that
	// read earlier can never apply its older lists (served tools, the
	// search index) after one that read later.
	syncing *sync.Mutex
}

// owned is a served resource or template: its server and its definition
// there (def.URI or def.URITemplate is the original).
type owned[T any] struct {
	server string
	def    T
	served T // as served: the URI may be qualified
}

func newExposure() exposure {
	return exposure{
		tools: map[string]*registry.Tool{}, toolDefs: map[string]*mcp.Tool{}, headered: map[string]bool{},
		prompts: map[string]*registry.Prompt{}, promptDef: map[string]*mcp.Prompt{},
		resources: map[string]owned[*mcp.Resource]{}, templates: map[string]owned[*mcp.ResourceTemplate]{},
		syncing: &sync.Mutex{},
	}
}

// Sync makes what is served equal to the registry's current tools, prompts,
// resources and resource templates, named per Options.Naming, and returns the
// registry's problems. Unchanged entries are left alone, so clients are
// notified (list_changed) only of real changes. Syncs run one at a time
// (the watch loop and a finished login both call it): each applies what it
// read, in the order they read it.
func (g *Gateway) Sync(ctx context.Context) []registry.Problem {
	g.lockSync(ctx)
	defer g.exposed.syncing.Unlock()
	defer g.synced.fire() // (runs before the unlock: what was synced is already served)
	// The sessions' subscriptions set aside (by the session fronts) are tried
	// again, the rules or lists having changed: once g.mu is released.
	defer g.recheckSubscriptions()
	// What is served to all is the host's own: never listed for (or
	// through the connections of) the user whose request led here.
	ctx = host.WithoutCaller(ctx)
	naming := g.refreshEndpoint()
	active := g.sharedServers()
	style := styleOf(naming, len(active)) // (of all: names do not change as servers connect)
	listed := g.settled(active)           // not those still connecting at start (connecting.go)
	tools, problems := g.h.ToolsOf(ctx, listed)
	if g.endpoint == "" {
		// (Reported by the whole gateway alone: an endpoint's gateway,
		// syncing the same servers, would say it again.)
		problems = append(problems, host.OverrideProblems(g.h.Config(), listed, tools, problems)...)
	}
	tools = g.endpointTools(ctx, tools)
	syncPoint(ctx, syncRead)
	if g.search != nil {
		g.reindex(tools)
	}
	prompts, pp := g.h.PromptsOf(ctx, listed)
	resources, rp := g.h.ResourcesOf(ctx, listed)
	templates, tp := g.h.ResourceTemplatesOf(ctx, listed)
	problems = append(append(append(problems, pp...), rp...), tp...)
	var skill []string
	for _, s := range listed {
		if g.h.HasSkills(ctx, s) {
			skill = append(skill, s)
		}
	}
	resources, templates, sp := skillLabelURIs(style, skill, resources, templates)
	problems = append(problems, sp...)

	wantTools, p1 := exposeNames(style, "tool", tools,
		func(t *registry.Tool) string { return t.Name },
		func(t *registry.Tool) string { return t.Original },
		func(t *registry.Tool) string { return t.Server },
		func(t *registry.Tool) string { return g.toolOverride(t).GetName() })
	wantPrompts, p2 := exposeNames(style, "prompt", prompts,
		func(p *registry.Prompt) string { return p.Name },
		func(p *registry.Prompt) string { return p.Original },
		func(p *registry.Prompt) string { return p.Server },
		func(*registry.Prompt) string { return "" })
	problems = append(append(problems, p1...), p2...)
	if g.search != nil {
		problems = append(problems, metaNameProblems(wantTools)...)
	}

	g.mu.Lock()
	defer g.mu.Unlock()
	g.publishNaming(naming) // (with the exposure named so)
	// (Resources first: the tools' MCP Apps URIs are those they are
	// served under.)
	problems = append(problems, g.syncResources(resources)...)
	problems = append(problems, g.syncTemplates(templates)...)
	problems = append(problems, g.syncTools(wantTools)...)
	problems = append(problems, g.syncPrompts(wantPrompts)...)
	sort.SliceStable(problems, func(i, j int) bool {
		if problems[i].Server != problems[j].Server {
			return problems[i].Server < problems[j].Server
		}
		return problems[i].Detail < problems[j].Detail
	})
	// A server that failed to connect fails each of its lists alike: said
	// once.
	return slices.Compact(problems)
}

// lockSync takes the Sync lock (exposure.syncing) for the Sync of ctx.
func (g *Gateway) lockSync(ctx context.Context) {
	if g.exposed.syncing.TryLock() {
		return
	}
	syncPoint(ctx, syncWait)
	g.exposed.syncing.Lock()
}

// The points of a Sync that a trace (syncTraceKey) is told of.
const (
	syncWait = "wait" // it must wait for another Sync to end
	syncRead = "read" // it has read the registry's tools
)

// syncTraceKey is the context key of a Sync's trace: a func(point string)
// that its caller passes with the context (as net/http/httptrace does),
// told of each point of the Sync (syncWait, syncRead) as it passes it —
// only the tests that force Syncs to interleave set one.
type syncTraceKey struct{}

// syncPoint tells the trace ctx carries, if any, that its Sync is at
// point.
func syncPoint(ctx context.Context, point string) {
	if f, ok := ctx.Value(syncTraceKey{}).(func(point string)); ok {
		f(point)
	}
}

// syncTools serves want, the MCP Apps resource URIs in the tools' _meta
// naming the resources as served (appsURI: syncResources ran first).
func (g *Gateway) syncTools(want map[string]*registry.Tool) []registry.Problem {
	g.exposed.apps = make(map[subKey]string, len(g.exposed.resources))
	for uri, o := range g.exposed.resources {
		g.exposed.apps[subKey{o.server, o.def.URI}] = uri
	}
	g.exposed.routed = nil
	var problems []registry.Problem
	var remove []string
	for name := range g.exposed.tools {
		if _, ok := want[name]; !ok {
			remove = append(remove, name)
			delete(g.exposed.tools, name)
			delete(g.exposed.toolDefs, name)
			delete(g.exposed.headered, name)
		}
	}
	if len(remove) > 0 {
		g.srv.RemoveTools(remove...)
	}
	for name, t := range want {
		mt := overridden(serverTool(name, t), g.toolOverride(t))
		mt.Meta = appsMeta(mt.Meta, func(uri string) string { return g.exposed.appsURI(t.Server, uri) })
		if old, ok := g.exposed.toolDefs[name]; ok && reflect.DeepEqual(old, mt) {
			g.exposed.tools[name] = t
			continue
		}
		if err := guard(func() { g.srv.AddTool(mt, g.toolHandler(name)) }); err != nil {
			problems = append(problems, registry.Problem{Server: t.Server, Detail: fmt.Sprintf("tool %s is not served: %v", name, err)})
			continue
		}
		g.exposed.tools[name], g.exposed.toolDefs[name] = t, mt
		b, _ := json.Marshal(mt.InputSchema)
		g.exposed.headered[name] = bytes.Contains(b, []byte(`"x-mcp-header"`))
	}
	return problems
}

func (g *Gateway) syncPrompts(want map[string]*registry.Prompt) []registry.Problem {
	var problems []registry.Problem
	var remove []string
	for name := range g.exposed.prompts {
		if _, ok := want[name]; !ok {
			remove = append(remove, name)
			delete(g.exposed.prompts, name)
			delete(g.exposed.promptDef, name)
		}
	}
	if len(remove) > 0 {
		g.srv.RemovePrompts(remove...)
	}
	for name, p := range want {
		mp := &mcp.Prompt{Name: name, Title: p.Title, Description: p.Description, Arguments: p.Arguments,
			Icons: slices.Clone(p.Icons), Meta: maps.Clone(p.Meta)}
		if old, ok := g.exposed.promptDef[name]; ok && reflect.DeepEqual(old, mp) {
			g.exposed.prompts[name] = p
			continue
		}
		if err := guard(func() { g.srv.AddPrompt(mp, g.promptHandler(name)) }); err != nil {
			problems = append(problems, registry.Problem{Server: p.Server, Detail: fmt.Sprintf("prompt %s is not served: %v", name, err)})
			continue
		}
		g.exposed.prompts[name], g.exposed.promptDef[name] = p, mp
	}
	return problems
}

func (g *Gateway) syncResources(list []*registry.Resource) []registry.Problem {
	servers := make([]string, len(list))
	defs := make([]*mcp.Resource, len(list))
	for i, r := range list {
		servers[i], defs[i] = r.Server, r.Resource
	}
	want, problems := exposeOwned("resource", servers, defs, func(r *mcp.Resource) string { return r.URI },
		func(r *mcp.Resource, uri string) *mcp.Resource { c := *r; c.URI = uri; return &c })
	return append(problems, syncOwned("resource", g.exposed.resources, want, g.srv.RemoveResources, func(uri string, o owned[*mcp.Resource]) error {
		return guard(func() { g.srv.AddResource(o.served, g.resourceHandler(o.server, o.def.URI)) })
	})...)
}

func (g *Gateway) syncTemplates(list []*registry.ResourceTemplate) []registry.Problem {
	servers := make([]string, len(list))
	defs := make([]*mcp.ResourceTemplate, len(list))
	for i, t := range list {
		servers[i], defs[i] = t.Server, t.ResourceTemplate
	}
	want, problems := exposeOwned("resource template", servers, defs, func(t *mcp.ResourceTemplate) string { return t.URITemplate },
		func(t *mcp.ResourceTemplate, ut string) *mcp.ResourceTemplate { c := *t; c.URITemplate = ut; return &c })
	return append(problems, syncOwned("resource template", g.exposed.templates, want, g.srv.RemoveResourceTemplates, func(ut string, o owned[*mcp.ResourceTemplate]) error {
		return guard(func() { g.srv.AddResourceTemplate(o.served, g.templateHandler(o.server, ut != o.def.URITemplate)) })
	})...)
}

// exposeOwned keys each server's definition by the URI (or URI template)
// it is served under: its own where only one server offers it, else
// qualified (qualifyURI, set with rekey). A server offering one URI twice
// has its first served; a URI in the gateway's own namespaces
// (reservedURI) is not served, and reported.
func exposeOwned[D any](what string, servers []string, defs []D, key func(D) string, rekey func(D, string) D) (map[string]owned[D], []registry.Problem) {
	collide := colliding(servers, func(i int) string { return key(defs[i]) })
	want := make(map[string]owned[D], len(defs))
	seen := make(map[subKey]bool, len(defs))
	var problems []registry.Problem
	for i, d := range defs {
		k := subKey{servers[i], key(d)}
		if seen[k] {
			continue
		}
		seen[k] = true
		if reservedURI(k.uri) {
			problems = append(problems, registry.Problem{Server: k.server,
				Detail: fmt.Sprintf("%s %s is not served: the gateway serves the URIs of servers' resources under %s and %s", what, k.uri, uiQualified, qualifiedScheme)})
			continue
		}
		served := rekey(d, k.uri) // a copy: the registry's stays untouched
		if collide[k.uri] {
			served = rekey(d, qualifyURI(k.server, k.uri))
		}
		want[key(served)] = owned[D]{server: k.server, def: d, served: served}
	}
	return want, problems
}

// colliding is the set of the URIs (uri(i) for each of servers' i) that
// more than one server offers: those served qualified.
func colliding(servers []string, uri func(i int) string) map[string]bool {
	first := make(map[string]string, len(servers))
	var out map[string]bool
	for i, s := range servers {
		u := uri(i)
		if f, ok := first[u]; !ok {
			first[u] = s
		} else if f != s {
			if out == nil {
				out = map[string]bool{}
			}
			out[u] = true
		}
	}
	return out
}

// syncOwned makes have (what is served, by URI) equal to want: entries no
// longer wanted are removed from the go-sdk server, new or changed ones
// added; an add the go-sdk refuses is reported.
func syncOwned[D any](what string, have, want map[string]owned[D], remove func(...string), add func(string, owned[D]) error) []registry.Problem {
	var problems []registry.Problem
	var gone []string
	for k := range have {
		if _, ok := want[k]; !ok {
			gone = append(gone, k)
			delete(have, k)
		}
	}
	if len(gone) > 0 {
		remove(gone...)
	}
	for k, o := range want {
		if old, ok := have[k]; ok && old.server == o.server && reflect.DeepEqual(old.served, o.served) {
			continue
		}
		if err := add(k, o); err != nil {
			problems = append(problems, registry.Problem{Server: o.server, Detail: fmt.Sprintf("%s %s is not served: %v", what, k, err)})
			continue
		}
		have[k] = o
	}
	return problems
}

// guard runs an add of the go-sdk server, which panics on definitions it
// rejects: an upstream server's bad definition must not take the gateway
// down.
func guard(add func()) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%v", r)
		}
	}()
	add()
	return nil
}

// serverTool turns a registry tool into the definition served downstream
// under name: all the server said of it (title, description, schemas,
// annotations, icons, _meta less its reserved members, execution: carried
// in _meta under mcpmeta.ExecutionKey, see listedTools), in a copy.
func serverTool(name string, t *registry.Tool) *mcp.Tool {
	mt := &mcp.Tool{
		Name:         name,
		Title:        t.Title, // (the server's: not one made of its annotations' title or name)
		Description:  t.Description,
		InputSchema:  ObjectSchema(t.InputSchema),
		OutputSchema: t.OutputSchema,
		Icons:        slices.Clone(t.Icons),
		Meta:         maps.Clone(t.Meta), // (reserved members left out by the registry)
	}
	if t.Execution != nil {
		// Carried in _meta to the JSON written (listedTools, foundTool),
		// the go-sdk's Tool having no "execution".
		if mt.Meta == nil {
			mt.Meta = mcp.Meta{}
		}
		mt.Meta[mcpmeta.ExecutionKey] = t.Execution
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

// appsURI returns the URI a tool of server naming uri as its MCP Apps
// resource is served with: the URI that server's resource uri is served
// under (itself, or qualified where several servers offer it); else —
// the server does not list it — its qualified form, recorded in routed so
// that a read of it goes to server (appsMiddleware), never to another
// server listing uri. The caller holds g.mu.
func (x *exposure) appsURI(server, uri string) string {
	if served, ok := x.apps[subKey{server, uri}]; ok {
		return served
	}
	q := qualifyURI(server, uri)
	if x.routed == nil {
		x.routed = map[string]subKey{}
	}
	x.routed[q] = subKey{server, uri}
	return q
}

// appsMeta returns a tool's _meta m with its MCP Apps resource URI
// (ui.resourceUri, or the earlier flat "ui/resourceUri") as served
// (served(uri)): m itself when nothing changes, else a copy (the
// registry's is shared).
func appsMeta(m mcp.Meta, served func(uri string) string) mcp.Meta {
	if len(m) == 0 {
		return m
	}
	serve := func(v any) (string, bool) {
		u, ok := v.(string)
		if !ok || u == "" {
			return "", false
		}
		s := served(u)
		return s, s != u
	}
	var out mcp.Meta
	if ui, ok := m["ui"].(map[string]any); ok {
		if q, ok := serve(ui["resourceUri"]); ok {
			out = maps.Clone(m)
			c := maps.Clone(ui)
			c["resourceUri"] = q
			out["ui"] = c
		}
	}
	if q, ok := serve(m["ui/resourceUri"]); ok {
		if out == nil {
			out = maps.Clone(m)
		}
		out["ui/resourceUri"] = q
	}
	if out == nil {
		return m
	}
	return out
}

// ObjectSchema returns schema if it is a JSON object schema of type "object",
// and an empty object schema otherwise.
func ObjectSchema(schema any) any {
	if m, ok := schema.(map[string]any); ok && m["type"] == "object" {
		return m
	}
	return map[string]any{"type": "object"}
}

// canonicalTool maps an exposed tool name to its registry name.
// headerBound reports whether the served tool's parameters are sent as
// HTTP headers too (see exposure.headered).
func (g *Gateway) headerBound(exposed string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.exposed.headered[exposed]
}

func (g *Gateway) canonicalTool(exposed string) (string, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	t, ok := g.exposed.tools[exposed]
	if !ok {
		return "", false
	}
	return t.Name, true
}
