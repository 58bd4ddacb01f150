// Package registry merges the tools, prompts and resources of many MCP servers
// into one registry with stable names (mcp__SERVER__TOOL), sanitized text,
// annotation-derived properties and collision detection. Every server's
// current lists are held (fetched on first use, dropped when the server
// reconnects or reports a list change, and fetched again on next use), so
// routing a call never lists again however many servers there are.
package registry

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/sync/singleflight"

	"github.com/mcphost/mcphost/host/redact"
	"github.com/mcphost/mcphost/internal/mcpmeta"
)

// ErrNotFound is returned by Lookup for a name the registry does not hold.
var ErrNotFound = errors.New("no such tool")

// Source fetches a server's current lists. The host implements it over its
// connections.
type Source interface {
	ListTools(ctx context.Context, server string) ([]*mcp.Tool, error)
	ListPrompts(ctx context.Context, server string) ([]*mcp.Prompt, error)
	ListResources(ctx context.Context, server string) ([]*mcp.Resource, error)
	ListResourceTemplates(ctx context.Context, server string) ([]*mcp.ResourceTemplate, error)
}

// Tool is one tool in the unified registry.
type Tool struct {
	// Name is the registry name, mcp__SERVER__TOOL.
	Name string `json:"name"`
	// Server is the name of the server that provides the tool.
	Server string `json:"server"`
	// Original is the tool's name on its server (what tools/call is sent with).
	Original string `json:"original_name"`
	// DisplayName is the title (tool title, then annotations title, then name).
	DisplayName string `json:"display_name"`
	// Title is the tool's own title as its server gave it (sanitized, capped
	// at 256 characters), empty if it gave none: what the gateway serves.
	Title string `json:"title,omitempty"`
	// Description is sanitized and capped at MaxDescriptionLen characters.
	Description  string `json:"description,omitempty"`
	InputSchema  any    `json:"input_schema,omitempty"`
	OutputSchema any    `json:"output_schema,omitempty"`
	// Properties derived from the (untrusted) annotations.
	ReadOnly        bool `json:"read_only"`
	ConcurrencySafe bool `json:"concurrency_safe"`
	Destructive     bool `json:"destructive"`
	OpenWorld       bool `json:"open_world"`
	// HeaderParams is set when the input schema sends parameters as HTTP
	// headers (x-mcp-header).
	HeaderParams bool `json:"-"`
	// Annotations are the server's annotations as given.
	Annotations *mcp.ToolAnnotations `json:"annotations,omitempty"`
	// Icons are the server's icons for the tool, as given.
	Icons []mcp.Icon `json:"icons,omitempty"`
	// Meta is the tool's _meta as the server gave it, less the
	// protocol-reserved members (mcpmeta.IsReserved), which describe one hop
	// and are never passed on, and the gateway's own (mcpmeta.IsGateways):
	// vendor hints and extensions' members such as MCP Apps' "ui"
	// (resourceUri) stay.
	Meta mcp.Meta `json:"_meta,omitempty"`
	// Execution is the tool's "execution" as the server gave it (e.g.
	// {"taskSupport": "optional"}), nil if none: the go-sdk's Tool has no
	// such member, so the connection carries it in _meta under
	// mcpmeta.ExecutionKey (conn/execution.go), taken from there.
	Execution any `json:"execution,omitempty"`
	// Fingerprint is a sha256 of the definition as the server gave it (name,
	// title, description, input and output schemas, annotations, icons,
	// _meta less reserved members, execution), for pinning.
	Fingerprint string `json:"fingerprint"`
	// PriorFingerprint is the fingerprint earlier versions pinned (name,
	// title, description, input schema, annotations), where it differs
	// from Fingerprint (a tool with an output schema, icons, _meta or an
	// execution): a pin equal to it is taken as this definition's and
	// upgraded to Fingerprint (host/pins.go), so no pin recorded before
	// needs approving again. "" when equal.
	PriorFingerprint string `json:"-"`
}

// Prompt is one prompt in the unified registry.
type Prompt struct {
	Name     string `json:"name"`
	Server   string `json:"server"`
	Original string `json:"original_name"`
	// Title is the prompt's title, sanitized.
	Title       string                `json:"title,omitempty"`
	Description string                `json:"description,omitempty"`
	Arguments   []*mcp.PromptArgument `json:"arguments,omitempty"`
	// Icons are the server's icons for the prompt, as given.
	Icons []mcp.Icon `json:"icons,omitempty"`
	// Meta is the prompt's _meta less its protocol-reserved members and the
	// gateway's own.
	Meta mcp.Meta `json:"_meta,omitempty"`
}

// Resource is one resource, attributed to its server.
type Resource struct {
	Server string `json:"server"`
	*mcp.Resource
}

// ResourceTemplate is one resource template, attributed to its server.
type ResourceTemplate struct {
	Server string `json:"server"`
	*mcp.ResourceTemplate
}

// Problem is something wrong with a server's list that the registry reports
// instead of failing: a list that could not be fetched, a name collision, an
// unusable entry.
type Problem struct {
	Server string `json:"server"`
	Detail string `json:"detail"`
}

func (p Problem) String() string { return p.Server + ": " + p.Detail }

// Registry is the unified view of many servers. Its methods are safe for concurrent use.
type Registry struct {
	src       Source
	tools     *listCache[toolSet]
	prompts   *listCache[promptSet]
	resources *listCache[[]*Resource]
	templates *listCache[[]*ResourceTemplate]

	mu        sync.Mutex
	listeners []*listener
}

// New returns a registry that reads lists from src.
func New(src Source) *Registry {
	r := &Registry{src: src}
	r.tools = newListCache(func(ctx context.Context, server string) (toolSet, error) {
		ts, err := src.ListTools(ctx, server)
		if err != nil {
			return toolSet{}, err
		}
		return buildTools(server, ts), nil
	})
	r.prompts = newListCache(func(ctx context.Context, server string) (promptSet, error) {
		ps, err := src.ListPrompts(ctx, server)
		if err != nil {
			return promptSet{}, err
		}
		return buildPrompts(server, ps), nil
	})
	r.resources = newListCache(func(ctx context.Context, server string) ([]*Resource, error) {
		rs, err := src.ListResources(ctx, server)
		if err != nil {
			return nil, err
		}
		out := make([]*Resource, 0, len(rs))
		for _, res := range rs {
			c := *res
			c.Name = Sanitize(c.Name)
			c.Title = Sanitize(c.Title)
			c.Description = Cap(c.Description, MaxDescriptionLen)
			c.Icons = slices.Clone(c.Icons)
			c.Meta = definitionMeta(c.Meta)
			out = append(out, &Resource{Server: server, Resource: &c})
		}
		return out, nil
	})
	r.templates = newListCache(func(ctx context.Context, server string) ([]*ResourceTemplate, error) {
		ts, err := src.ListResourceTemplates(ctx, server)
		if err != nil {
			return nil, err
		}
		out := make([]*ResourceTemplate, 0, len(ts))
		for _, t := range ts {
			if t == nil {
				continue
			}
			c := *t
			c.Name = Sanitize(c.Name)
			c.Title = Sanitize(c.Title)
			c.Description = Cap(c.Description, MaxDescriptionLen)
			c.Icons = slices.Clone(c.Icons)
			c.Meta = definitionMeta(c.Meta)
			out = append(out, &ResourceTemplate{Server: server, ResourceTemplate: &c})
		}
		return out, nil
	})
	return r
}

// OnChange registers f to be called after a server's lists were
// invalidated, until remove is called.
func (r *Registry) OnChange(f func(server string)) (remove func()) {
	l := &listener{f}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.listeners = append(r.listeners, l)
	return func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.listeners = slices.DeleteFunc(r.listeners, func(x *listener) bool { return x == l })
	}
}

// listener is a function registered with OnChange.
type listener struct{ f func(server string) }

// InvalidateTools drops a server's cached tool list (after
// notifications/tools/list_changed, a reconnect, or an auth change), so the
// next read fetches the current list, and tells the listeners.
func (r *Registry) InvalidateTools(server string) { r.tools.invalidate(server); r.notify(server) }

// InvalidatePrompts drops a server's cached prompt list.
func (r *Registry) InvalidatePrompts(server string) { r.prompts.invalidate(server); r.notify(server) }

// InvalidateResources drops a server's cached resource and resource
// template lists.
func (r *Registry) InvalidateResources(server string) {
	r.resources.invalidate(server)
	r.templates.invalidate(server)
	r.notify(server)
}

// Invalidate drops every cached list of a server.
func (r *Registry) Invalidate(server string) {
	r.tools.invalidate(server)
	r.prompts.invalidate(server)
	r.resources.invalidate(server)
	r.templates.invalidate(server)
	r.notify(server)
}

// NotifyChanged tells the listeners that what is derived from the lists
// may have changed though no list did (permission rules were reloaded);
// the server they are told is "".
func (r *Registry) NotifyChanged() { r.notify("") }

func (r *Registry) notify(server string) {
	r.mu.Lock()
	ls := slices.Clone(r.listeners)
	r.mu.Unlock()
	for _, l := range ls {
		l.f(server)
	}
}

// Tools returns the tools of the given servers, sorted by name, and the
// problems found (unreachable servers, collisions).
func (r *Registry) Tools(ctx context.Context, servers []string) ([]*Tool, []Problem) {
	var out []*Tool
	var problems []Problem
	for _, ts := range fetchAll(ctx, r.tools, servers, &problems) {
		out = append(out, ts.list...)
		problems = append(problems, ts.problems...)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, problems
}

// ServerTools returns one server's tools.
func (r *Registry) ServerTools(ctx context.Context, server string) ([]*Tool, error) {
	ts, err := r.tools.get(ctx, server)
	return ts.list, err
}

// Lookup resolves a registry name to its tool, fetching the server's list if
// it is not cached.
func (r *Registry) Lookup(ctx context.Context, name string) (*Tool, error) {
	server, _, ok := ParseName(name)
	if !ok {
		return nil, fmt.Errorf("%w %q: registry names look like mcp__SERVER__TOOL", ErrNotFound, name)
	}
	return r.LookupOn(ctx, server, name)
}

// LookupOn is Lookup for a name already split by ParseName: server is its
// server part (a caller that resolves a name once passes it on rather
// than have it parsed again).
func (r *Registry) LookupOn(ctx context.Context, server, name string) (*Tool, error) {
	ts, err := r.tools.get(ctx, server)
	if err != nil {
		return nil, err
	}
	if t, ok := ts.byName[name]; ok {
		return t, nil
	}
	return nil, fmt.Errorf("%w %q on server %q", ErrNotFound, name, server)
}

// LookupHeld is Lookup without fetching: ok is false when the server's
// list is not held at the moment (Lookup would list the server first), or
// holds no such tool.
func (r *Registry) LookupHeld(name string) (t *Tool, ok bool) {
	server, _, ok := ParseName(name)
	if !ok {
		return nil, false
	}
	return r.LookupHeldOn(server, name)
}

// LookupHeldOn is LookupHeld for a name already split by ParseName (see
// LookupOn).
func (r *Registry) LookupHeldOn(server, name string) (t *Tool, ok bool) {
	ts, ok := r.tools.held1(server)
	if !ok {
		return nil, false
	}
	t, ok = ts.byName[name]
	return t, ok
}

// Prompts returns the prompts of the given servers, sorted by name.
func (r *Registry) Prompts(ctx context.Context, servers []string) ([]*Prompt, []Problem) {
	var out []*Prompt
	var problems []Problem
	for _, ps := range fetchAll(ctx, r.prompts, servers, &problems) {
		out = append(out, ps.list...)
		problems = append(problems, ps.problems...)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, problems
}

// LookupPrompt resolves a registry prompt name.
func (r *Registry) LookupPrompt(ctx context.Context, name string) (*Prompt, error) {
	server, _, ok := ParseName(name)
	if !ok {
		return nil, fmt.Errorf("no such prompt %q: registry names look like mcp__SERVER__PROMPT", name)
	}
	ps, err := r.prompts.get(ctx, server)
	if err != nil {
		return nil, err
	}
	for _, p := range ps.list {
		if p.Name == name {
			return p, nil
		}
	}
	return nil, fmt.Errorf("no such prompt %q on server %q", name, server)
}

// Resources returns the resources of the given servers, by server then URI.
func (r *Registry) Resources(ctx context.Context, servers []string) ([]*Resource, []Problem) {
	var out []*Resource
	var problems []Problem
	for _, rs := range fetchAll(ctx, r.resources, servers, &problems) {
		out = append(out, rs...)
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Server != out[j].Server {
			return out[i].Server < out[j].Server
		}
		return out[i].URI < out[j].URI
	})
	return out, problems
}

// ResourceTemplates returns the resource templates of the given servers, by
// server then URI template.
func (r *Registry) ResourceTemplates(ctx context.Context, servers []string) ([]*ResourceTemplate, []Problem) {
	var out []*ResourceTemplate
	var problems []Problem
	for _, ts := range fetchAll(ctx, r.templates, servers, &problems) {
		out = append(out, ts...)
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Server != out[j].Server {
			return out[i].Server < out[j].Server
		}
		return out[i].URITemplate < out[j].URITemplate
	})
	return out, problems
}

// fetchAll reads a cache for many servers concurrently, in the given order.
func fetchAll[T any](ctx context.Context, c *listCache[T], servers []string, problems *[]Problem) []T {
	vals := make([]T, len(servers))
	errs := make([]error, len(servers))
	var wg sync.WaitGroup
	for i, s := range servers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			vals[i], errs[i] = c.get(ctx, s)
		}()
	}
	wg.Wait()
	var out []T
	for i, err := range errs {
		if err != nil {
			// The error may quote the server (its answer, its stderr).
			*problems = append(*problems, Problem{Server: servers[i], Detail: redact.String(err.Error())})
			continue
		}
		out = append(out, vals[i])
	}
	return out
}

// toolSet is one server's processed tool list.
type toolSet struct {
	list     []*Tool
	byName   map[string]*Tool
	problems []Problem
}

func buildTools(server string, tools []*mcp.Tool) toolSet {
	ts := toolSet{byName: map[string]*Tool{}}
	groups := map[string][]*Tool{}
	for _, t := range tools {
		if t == nil || t.Name == "" {
			ts.problems = append(ts.problems, Problem{server, "a tool without a name was ignored"})
			continue
		}
		rt, err := convertTool(server, t)
		if err != nil {
			ts.problems = append(ts.problems, Problem{server, fmt.Sprintf("tool %q is not exposed: %v", Sanitize(t.Name), err)})
			continue
		}
		groups[rt.Name] = append(groups[rt.Name], rt)
	}
	for name, g := range groups {
		if len(g) > 1 {
			var originals []string
			for _, t := range g {
				originals = append(originals, fmt.Sprintf("%q", t.Original))
			}
			sort.Strings(originals)
			ts.problems = append(ts.problems, Problem{server, fmt.Sprintf(
				"tools %s all map to %s; none of them is exposed (a registry name must identify one tool)",
				strings.Join(originals, ", "), name)})
			continue
		}
		ts.byName[name] = g[0]
		ts.list = append(ts.list, g[0])
	}
	sort.Slice(ts.list, func(i, j int) bool { return ts.list[i].Name < ts.list[j].Name })
	sort.Slice(ts.problems, func(i, j int) bool { return ts.problems[i].Detail < ts.problems[j].Detail })
	return ts
}

// Fingerprint hashes what a server says a tool is (name, title, description,
// input schema, annotations): the Fingerprint of the registry Tool made from it.
func Fingerprint(t *mcp.Tool) string { return fingerprint(t) }

// PriorFingerprint is the fingerprint of t earlier versions pinned, if it
// is not Fingerprint(t) (see Tool.PriorFingerprint); else "".
func PriorFingerprint(t *mcp.Tool) string {
	if !fingerprinted(t) {
		return ""
	}
	return priorFingerprint(t)
}

// fingerprinted reports whether t has any of what the fingerprint covers
// and earlier versions' did not: an output schema, icons, _meta (less
// reserved members) or an execution.
func fingerprinted(t *mcp.Tool) bool {
	return t.OutputSchema != nil || len(t.Icons) > 0 || len(definitionMeta(t.Meta)) > 0 || t.Meta[mcpmeta.ExecutionKey] != nil
}

// fingerprint hashes what a server says a tool is: for a tool with nothing
// more than earlier versions covered, as they did (priorFingerprint), so
// that its pin still matches.
func fingerprint(t *mcp.Tool) string {
	if !fingerprinted(t) {
		return priorFingerprint(t)
	}
	b, _ := json.Marshal(struct {
		Version                  int
		Name, Title, Description string
		InputSchema              any
		OutputSchema             any                  `json:",omitempty"`
		Annotations              *mcp.ToolAnnotations `json:",omitempty"`
		Icons                    []mcp.Icon           `json:",omitempty"`
		Meta                     mcp.Meta             `json:",omitempty"`
		Execution                any                  `json:",omitempty"`
	}{2, t.Name, t.Title, t.Description, t.InputSchema, t.OutputSchema, t.Annotations, t.Icons,
		definitionMeta(t.Meta), t.Meta[mcpmeta.ExecutionKey]})
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// priorFingerprint is the fingerprint of earlier versions: name, title,
// description, input schema and annotations.
func priorFingerprint(t *mcp.Tool) string {
	b, _ := json.Marshal(struct {
		Name, Title, Description string
		InputSchema              any
		Annotations              *mcp.ToolAnnotations
	}{t.Name, t.Title, t.Description, t.InputSchema, t.Annotations})
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// headerParams reports whether an input schema names a parameter sent as
// an HTTP header (x-mcp-header, anywhere in it).
func headerParams(schema any) bool {
	if schema == nil {
		return false
	}
	b, err := json.Marshal(schema)
	return err == nil && bytes.Contains(b, []byte(`"x-mcp-header"`))
}

// convertTool makes the registry tool of a server's tool: its text
// sanitized, its schemas cleaned (CleanSchema). An error (matching
// ErrSchema) refuses the tool.
func convertTool(server string, t *mcp.Tool) (*Tool, error) {
	in, err := CleanSchema(t.InputSchema)
	if err != nil {
		return nil, fmt.Errorf("input schema: %w", err)
	}
	out, err := CleanSchema(t.OutputSchema)
	if err != nil {
		return nil, fmt.Errorf("output schema: %w", err)
	}
	rt := &Tool{
		Fingerprint:      fingerprint(t),
		PriorFingerprint: PriorFingerprint(t),
		Name:             ToolName(server, t.Name),
		Server:           server,
		Original:         t.Name,
		Description:      Cap(t.Description, MaxDescriptionLen),
		InputSchema:      in,
		OutputSchema:     out,
		HeaderParams:     headerParams(t.InputSchema),
		Icons:            slices.Clone(t.Icons),
		Meta:             definitionMeta(t.Meta),
		Execution:        t.Meta[mcpmeta.ExecutionKey],
		OpenWorld:        true, // MCP defaults: open-world and destructive unless said otherwise
		Destructive:      true,
	}
	title := t.Title
	if title != "" {
		rt.Title = Cap(title, 256)
	}
	if a := t.Annotations; a != nil {
		ac := *a
		ac.Title = Sanitize(ac.Title)
		rt.Annotations = &ac
		if title == "" {
			title = a.Title
		}
		rt.ReadOnly = a.ReadOnlyHint
		rt.ConcurrencySafe = a.ReadOnlyHint
		if a.DestructiveHint != nil {
			rt.Destructive = *a.DestructiveHint
		}
		if a.OpenWorldHint != nil {
			rt.OpenWorld = *a.OpenWorldHint
		}
	}
	if rt.ReadOnly {
		rt.Destructive = false // destructiveHint is meaningful only when not read-only
	}
	if title == "" {
		title = t.Name
	}
	rt.DisplayName = Cap(title, 256)
	return rt, nil
}

// definitionMeta is a copy of the _meta of a server's tool, prompt, resource
// or template without its protocol-reserved members and the gateway's own
// (mcpmeta.IsGateways); nil if nothing is left.
func definitionMeta(m mcp.Meta) mcp.Meta {
	var out mcp.Meta
	for k, v := range m {
		if mcpmeta.IsReserved(k) || mcpmeta.IsGateways(k) {
			continue
		}
		if out == nil {
			out = make(mcp.Meta, len(m))
		}
		out[k] = v
	}
	return out
}

type promptSet struct {
	list     []*Prompt
	problems []Problem
}

func buildPrompts(server string, prompts []*mcp.Prompt) promptSet {
	var ps promptSet
	seen := map[string]string{}
	for _, p := range prompts {
		if p == nil || p.Name == "" {
			continue
		}
		name := ToolName(server, p.Name)
		if other, dup := seen[name]; dup {
			ps.problems = append(ps.problems, Problem{server, fmt.Sprintf("prompts %q and %q both map to %s; %q is not exposed", other, p.Name, name, p.Name)})
			continue
		}
		seen[name] = p.Name
		var args []*mcp.PromptArgument
		for _, a := range p.Arguments {
			ac := *a
			ac.Description = Cap(ac.Description, MaxDescriptionLen)
			args = append(args, &ac)
		}
		ps.list = append(ps.list, &Prompt{Name: name, Server: server, Original: p.Name, Title: Sanitize(p.Title),
			Description: Cap(p.Description, MaxDescriptionLen), Arguments: args, Icons: slices.Clone(p.Icons), Meta: definitionMeta(p.Meta)})
	}
	return ps
}

// listCache holds one kind of per-server list for every server it was asked
// for: what routing needs is never evicted (a fetch cache of limited size
// made a gateway of many servers list again before calls). Its size is
// bounded by the servers that answered a list, which are configured ones.
// Concurrent misses for a server share one fetch; an invalidation during a
// fetch keeps its (possibly stale) result out.
type listCache[T any] struct {
	fetch func(context.Context, string) (T, error)
	group singleflight.Group

	mu   sync.RWMutex
	held map[string]T
	gen  map[string]uint64
}

func newListCache[T any](fetch func(context.Context, string) (T, error)) *listCache[T] {
	return &listCache[T]{fetch: fetch, held: map[string]T{}, gen: map[string]uint64{}}
}

func (c *listCache[T]) get(ctx context.Context, server string) (T, error) {
	c.mu.RLock()
	v, ok := c.held[server]
	gen := c.gen[server]
	c.mu.RUnlock()
	if ok {
		return v, nil
	}
	r, err, _ := c.group.Do(server+"\x00"+strconv.FormatUint(gen, 10), func() (any, error) {
		v, err := c.fetch(ctx, server)
		if err != nil {
			return v, err
		}
		c.mu.Lock()
		if c.gen[server] == gen {
			c.held[server] = v
		}
		c.mu.Unlock()
		return v, nil
	})
	if err != nil {
		var zero T
		return zero, err
	}
	return r.(T), nil
}

// held1 returns a server's list if it is held.
func (c *listCache[T]) held1(server string) (T, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	v, ok := c.held[server]
	return v, ok
}

// len is the number of servers whose list is held.
func (c *listCache[T]) len() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return len(c.held)
}

func (c *listCache[T]) invalidate(server string) {
	c.mu.Lock()
	c.gen[server]++
	delete(c.held, server)
	c.mu.Unlock()
}
