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
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/registry"
	"github.com/mcphost/mcphost/internal/mcpmeta"
)

// qualifiedScheme prefixes a resource URI (or URI template) that more than
// one server offers: each server's is served as mcphost://SERVER/ORIGINAL, so
// that both stay distinguishable and a read goes to its owner. A URI only one
// server offers is served unchanged.
const qualifiedScheme = "mcphost://"

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
	// collide are the resource URIs several servers offer, served
	// qualified (for the MCP Apps URIs in tools' _meta: appsURIs).
	collide map[string]bool

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
	g.refreshEndpoint()
	active := g.sharedServers()
	style := styleOf(g.naming, len(active)) // (of all: names do not change as servers connect)
	listed := g.settled(active)             // not those still connecting at start (connecting.go)
	tools, problems := g.h.ToolsOf(ctx, listed)
	problems = append(problems, host.OverrideProblems(g.h.Config(), listed, tools, problems)...)
	tools = g.endpointTools(tools)
	syncPoint(ctx, syncRead)
	if g.search != nil {
		g.reindex(tools)
	}
	prompts, pp := g.h.PromptsOf(ctx, listed)
	resources, rp := g.h.ResourcesOf(ctx, listed)
	templates, tp := g.h.ResourceTemplatesOf(ctx, listed)
	problems = append(append(append(problems, pp...), rp...), tp...)

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
	problems = append(problems, g.syncTools(wantTools, collidingURIs(resources))...)
	problems = append(problems, g.syncPrompts(wantPrompts)...)
	problems = append(problems, g.syncResources(resources)...)
	problems = append(problems, g.syncTemplates(templates)...)
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

// syncTools serves want; collide holds the resource URIs several servers
// offer (served qualified: exposeOwned), for the MCP Apps resource URIs in
// the tools' _meta (appsURIs).
func (g *Gateway) syncTools(want map[string]*registry.Tool, collide map[string]bool) []registry.Problem {
	g.exposed.collide = collide
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
		mt.Meta = appsURIs(mt.Meta, t.Server, collide)
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
	want := exposeOwned(servers, defs, func(r *mcp.Resource) string { return r.URI },
		func(r *mcp.Resource, uri string) *mcp.Resource { c := *r; c.URI = uri; return &c })
	return syncOwned("resource", g.exposed.resources, want, g.srv.RemoveResources, func(uri string, o owned[*mcp.Resource]) error {
		return guard(func() { g.srv.AddResource(o.served, g.resourceHandler(o.server, o.def.URI)) })
	})
}

func (g *Gateway) syncTemplates(list []*registry.ResourceTemplate) []registry.Problem {
	servers := make([]string, len(list))
	defs := make([]*mcp.ResourceTemplate, len(list))
	for i, t := range list {
		servers[i], defs[i] = t.Server, t.ResourceTemplate
	}
	want := exposeOwned(servers, defs, func(t *mcp.ResourceTemplate) string { return t.URITemplate },
		func(t *mcp.ResourceTemplate, ut string) *mcp.ResourceTemplate { c := *t; c.URITemplate = ut; return &c })
	return syncOwned("resource template", g.exposed.templates, want, g.srv.RemoveResourceTemplates, func(ut string, o owned[*mcp.ResourceTemplate]) error {
		prefix := ""
		if ut != o.def.URITemplate {
			prefix = qualifiedScheme + o.server + "/"
		}
		return guard(func() { g.srv.AddResourceTemplate(o.served, g.templateHandler(o.server, prefix)) })
	})
}

// exposeOwned keys each server's definition by the URI (or URI template)
// it is served under: its own where only one server offers it, else
// qualified (mcphost://SERVER/ORIGINAL, set with rekey).
func exposeOwned[D any](servers []string, defs []D, key func(D) string, rekey func(D, string) D) map[string]owned[D] {
	count := map[string]int{}
	for _, d := range defs {
		count[key(d)]++
	}
	want := make(map[string]owned[D], len(defs))
	for i, d := range defs {
		served := rekey(d, key(d)) // a copy: the registry's stays untouched
		if count[key(d)] > 1 {
			served = rekey(d, qualifiedScheme+servers[i]+"/"+key(d))
		}
		want[key(served)] = owned[D]{server: servers[i], def: d, served: served}
	}
	return want
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

// collidingURIs is the set of the URIs several of list's servers offer.
func collidingURIs(list []*registry.Resource) map[string]bool {
	seen := make(map[string]string, len(list))
	var out map[string]bool
	for _, r := range list {
		if s, ok := seen[r.URI]; ok && s != r.Server {
			if out == nil {
				out = map[string]bool{}
			}
			out[r.URI] = true
		}
		seen[r.URI] = r.Server
	}
	return out
}

// appsURIs returns a tool's _meta m with its MCP Apps resource URI
// (ui.resourceUri, or the earlier flat "ui/resourceUri") pointing at its
// own server's resource: a URI several servers offer is served qualified
// (mcphost://SERVER/URI), and so it is named. m is returned as is when
// nothing changes, else a copy (the registry's is shared).
func appsURIs(m mcp.Meta, server string, collide map[string]bool) mcp.Meta {
	if len(collide) == 0 {
		return m
	}
	return qualifyApps(m, server, func(uri string) bool { return collide[uri] })
}

// qualifyApps returns a tool's _meta m with its MCP Apps resource URI, if
// which says so of it, qualified (mcphost://SERVER/URI): m itself when
// nothing changes, else a copy.
func qualifyApps(m mcp.Meta, server string, which func(uri string) bool) mcp.Meta {
	if len(m) == 0 {
		return m
	}
	qualify := func(v any) (string, bool) {
		u, ok := v.(string)
		if !ok || !which(u) {
			return "", false
		}
		return qualifiedScheme + server + "/" + u, true
	}
	var out mcp.Meta
	if ui, ok := m["ui"].(map[string]any); ok {
		if q, ok := qualify(ui["resourceUri"]); ok {
			out = maps.Clone(m)
			c := maps.Clone(ui)
			c["resourceUri"] = q
			out["ui"] = c
		}
	}
	if q, ok := qualify(m["ui/resourceUri"]); ok {
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
