package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host/gateway/wire"
	"github.com/mcphost/mcphost/host/registry"
)

// Extensions and the Skills extension (SEP-2640).
//
// The gateway declares, in its answers to initialize and server/discover,
// the extensions of the upstream servers the caller can see that it can
// route (passedExtensions; see mergeExtensions for servers that set one
// extension differently).
//
// Skills: skills/list and skills/get are no standard methods; they are
// registered on the gateway's go-sdk server as custom methods, so that the
// fronts hand them to it as any other method (and its middleware — the
// caller, the drain, telemetry — sees them): the stdio front in both eras,
// the streamable front without a session (2026-07-28). A session of the
// streamable front (before 2026-07-28) has a go-sdk transport that refuses
// all but the standard methods: that front answers them through
// ServeExtension. The host sends them upstream as the go-sdk client's
// custom methods (host/conn), to servers that declared the extension. A skill is
// served under its server's URI with the server's label as its first path
// segment (qualifySkillURI): skill://git-workflow/SKILL.md of server
// github is skill://mcp__github/git-workflow/SKILL.md under the prefixed
// naming, skill://github/git-workflow/SKILL.md under naming "server", and
// unchanged under bare naming (and conditional with one server). The
// skill's name, the last segment of its path, is the frontmatter's and is
// never changed: a host checks one against the other, and the digests of
// its files are of their bytes, which pass unchanged. Reads of a served
// skill's files (resources/read of those URIs) go to its server with the
// label taken off (skillsMiddleware). The extension defines no list_changed
// notification: hosts re-list by the result's ttlMs.

// skillLabel is the label of a server's skills under style: its registry
// prefix under the registry names (mcp__SERVER), its name under server
// naming, "" (its own URIs) under the servers' own names.
func skillLabel(style nameStyle, server string) string {
	switch style {
	case namesRegistry:
		return registry.Prefix + registry.Normalize(server)
	case namesServer:
		return registry.Normalize(server)
	}
	return ""
}

// addSkillMethods registers skills/list and skills/get on the gateway's
// server.
func (g *Gateway) addSkillMethods() {
	// (They fail only for a standard method's name.)
	_ = mcp.AddReceivingCustomMethod(g.srv, registry.MethodListSkills, g.listSkills)
	_ = mcp.AddReceivingCustomMethod(g.srv, registry.MethodGetSkill, g.getSkill)
	_ = mcp.AddReceivingCustomMethod(g.srv, registry.MethodReadDirectory, g.readDirectory)
}

// visibleServers are the active servers whose lists the caller of ctx is
// served: those served to all, and for a user of inbound OAuth the
// per-user servers too (through the user's own connections), less the
// servers the permission rules deny the caller.
func (g *Gateway) visibleServers(ctx context.Context) []string {
	servers := g.settled(g.sharedServers())
	p := principalIn(ctx)
	if p != nil {
		servers = append(servers, g.userServers()...)
	}
	out := servers[:0:0]
	for _, s := range servers {
		if p != nil && g.h.Serving().ServerDeniedFor(p, s) {
			continue
		}
		out = append(out, s)
	}
	return out
}

// skillServers are the visible servers (visibleServers) that declared the
// Skills extension, with the label each one's skills are served under.
// With connect (skills/list only), a caller's per-user server is connected
// for it first if it is not yet (as its tools are listed through a
// connection of its own): what it declared is known only once it is.
// Other callers (skills/get, reads of skill files) see the per-user
// servers already connected for the caller only, so that a server that
// cannot connect is not tried again on each of them.
func (g *Gateway) skillServers(ctx context.Context, connect bool) (servers []string, labels map[string]string) {
	style := styleOf(g.namingMode(), len(g.sharedServers()))
	labels = map[string]string{}
	for _, s := range g.visibleServers(ctx) {
		if connect && principalIn(ctx) != nil && g.h.Serving().PerUser(s) && g.h.ServerExtensions(ctx, s) == nil {
			if _, err := g.h.Connections().Session(ctx, s); err != nil {
				g.log.Debug("a per-user server's skills are not listed", "server", s, "error", err)
				continue
			}
		}
		if g.h.HasSkills(ctx, s) {
			servers = append(servers, s)
			labels[s] = skillLabel(style, s)
		}
	}
	return servers, labels
}

// listSkills answers skills/list: the skills of every skill server the
// caller can see, under their served URIs, sorted by URI, on one page.
// A server that fails to list is left out (and logged). Under the servers'
// own URIs a URI that several servers serve is served for none of them:
// never last-wins.
func (g *Gateway) listSkills(ctx context.Context, _ *mcp.ServerSession, _ *registry.ListSkillsParams) (*registry.ListSkillsResult, error) {
	servers, labels := g.skillServers(ctx, true)
	type listed struct {
		skills []*registry.Skill
		ttl    *int
		scope  string
	}
	got := askEach(servers, func(s string) (listed, error) {
		var l listed
		var err error
		l.skills, l.ttl, l.scope, err = g.h.ListSkills(ctx, s)
		return l, err
	})
	res := &registry.ListSkillsResult{ResultType: "complete", Skills: []*registry.Skill{}, CacheScope: "public"}
	if principalIn(ctx) != nil && g.skillsPerPrincipal() {
		res.CacheScope = "private" // (what is listed depends on who asks)
	}
	ttl := -1
	byURI := map[string][]registry.ServerSkill{}
	for _, an := range got {
		s, l := an.server, an.res
		if an.err != nil {
			g.log.Debug("a server's skills are not listed", "server", s, "error", an.err)
			continue
		}
		if l.ttl != nil && (ttl < 0 || *l.ttl < ttl) {
			ttl = *l.ttl
		}
		g.rememberSkills(ctx, s, l.skills, l.ttl, l.scope)
		if l.scope == "private" {
			res.CacheScope = "private"
		}
		for _, sk := range l.skills {
			served, err := registry.RewriteSkill(sk, func(u string) string { return qualifySkillURI(u, labels[s]) })
			if err != nil {
				g.log.Debug("a skill is not served", "server", s, "error", err)
				continue
			}
			byURI[served.URI] = append(byURI[served.URI], registry.ServerSkill{Server: s, Skill: served})
		}
	}
	for uri, ss := range byURI {
		if len(ss) > 1 {
			g.log.Warn("a skill URI several servers serve is served for none of them (use naming = \"prefixed\")", "uri", uri)
			continue
		}
		res.Skills = append(res.Skills, ss[0].Skill)
	}
	sort.Slice(res.Skills, func(i, j int) bool { return res.Skills[i].URI < res.Skills[j].URI })
	res.TTLMs = new(int)
	if ttl > 0 {
		*res.TTLMs = ttl
	}
	return res, nil
}

// asked is one server's answer to a request askEach sent it.
type asked[T any] struct {
	server string
	res    T
	err    error
}

// askEach asks each of servers at once, by ask (each request bounded by the
// context ask uses), and returns their answers in the order of servers once
// all have answered.
func askEach[T any](servers []string, ask func(server string) (T, error)) []asked[T] {
	got := make([]asked[T], len(servers))
	var wg sync.WaitGroup
	for i, s := range servers {
		wg.Add(1)
		go func() { // (ends with the upstream request, bounded by its context)
			defer wg.Done()
			res, err := ask(s)
			got[i] = asked[T]{s, res, err}
		}()
	}
	wg.Wait()
	return got
}

// answered returns the answers of got without an error, with a result, and
// (if ok is not nil) one ok accepts.
func answered[T comparable](got []asked[T], ok func(T) bool) []asked[T] {
	var zero T
	var found []asked[T]
	for _, an := range got {
		if an.err == nil && an.res != zero && (ok == nil || ok(an.res)) {
			found = append(found, an)
		}
	}
	return found
}

// skillLabelURIs leaves out of the listed resources and templates
// those of a server at a URI whose first segment is another server's
// skill label (scheme://LABEL/…, skillLabel) under style, reported: a read
// of such a URI goes to the skill server (readSkillFile), and a server
// must not serve its own file as another server's skill. skill are the
// (shared) servers that declared the Skills extension.
func skillLabelURIs(style nameStyle, skill []string, resources []*registry.Resource, templates []*registry.ResourceTemplate) ([]*registry.Resource, []*registry.ResourceTemplate, []registry.Problem) {
	labels := map[string]string{}
	for _, s := range skill {
		if l := skillLabel(style, s); l != "" {
			labels[l] = s
		}
	}
	if len(labels) == 0 {
		return resources, templates, nil
	}
	var problems []registry.Problem
	foreign := func(what, server, uri string) bool {
		label, _, ok := registry.UnqualifyURI(uri)
		owner, isSkill := labels[label]
		if !ok || !isSkill || owner == server {
			return false
		}
		problems = append(problems, registry.Problem{Server: server,
			Detail: fmt.Sprintf("%s %s is not served: %s serves skills under %s", what, uri, owner, label)})
		return true
	}
	resources = slices.DeleteFunc(slices.Clone(resources), func(r *registry.Resource) bool {
		return r.Resource != nil && foreign("resource", r.Server, r.URI)
	})
	templates = slices.DeleteFunc(slices.Clone(templates), func(t *registry.ResourceTemplate) bool {
		return t.ResourceTemplate != nil && foreign("resource template", t.Server, t.URITemplate)
	})
	return resources, templates, problems
}

// skillsPerPrincipal reports whether skills/list may answer principals
// differently (as perPrincipal for the other lists): when some permission
// rules apply to some principals only, or per-user servers' skills are
// listed through each user's own connections.
func (g *Gateway) skillsPerPrincipal() bool {
	return g.h.Serving().HasPrincipalRules() || len(g.userServers()) > 0
}

// qualifySkillURI is uri served under label ("": unchanged).
func qualifySkillURI(uri, label string) string {
	if label == "" {
		return uri
	}
	q, _ := registry.QualifyURI(uri, label)
	return q
}

// skillOwner returns the servers that may own a served skill URI, and the
// URI on them: when skills are served qualified, the one server its label
// names (none if it names none); under the servers' own URIs, every skill
// server the caller can see (a caller of several asks each). labels are
// the skill servers' labels.
func (g *Gateway) skillOwner(ctx context.Context, uri string) (servers []string, own string, labels map[string]string) {
	servers, labels = g.skillServers(ctx, false)
	if len(servers) == 0 {
		return nil, "", labels
	}
	if labels[servers[0]] == "" {
		return servers, uri, labels // (every label is "": one style for all)
	}
	label, orig, ok := registry.UnqualifyURI(uri)
	if !ok {
		return nil, "", labels
	}
	for _, s := range servers {
		if labels[s] == label {
			return []string{s}, orig, labels
		}
	}
	return nil, "", labels
}

// getSkill answers skills/get: the entry from the server that serves the
// skill, under its served URIs. Under the servers' own URIs with several
// skill servers, each is asked: the one that knows the skill answers (if
// several do, none is chosen).
func (g *Gateway) getSkill(ctx context.Context, _ *mcp.ServerSession, p *registry.GetSkillParams) (*registry.GetSkillResult, error) {
	unknown := &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("no skill is served at %s", p.URI)}
	if p.URI == "" {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "skills/get needs a uri"}
	}
	servers, own, labels := g.skillOwner(ctx, p.URI)
	if len(servers) == 0 {
		return nil, unknown
	}
	a := g.auditCall(ctx, registry.MethodGetSkill, p.URI, "", "", 0)
	got := askEach(servers, func(s string) (*registry.GetSkillResult, error) { return g.h.GetSkill(ctx, s, own) })
	found := answered(got, func(r *registry.GetSkillResult) bool { return r.Skill != nil })
	var lastErr error
	for _, an := range got {
		if an.err != nil {
			lastErr = an.err
		}
	}
	if len(found) != 1 {
		if a != nil {
			a.done(unknown, 0)
		}
		if len(found) == 0 && len(servers) == 1 && lastErr != nil {
			// (The one owner's own answer, an unknown skill's -32602
			// included.)
			var je *jsonrpc.Error
			if errors.As(lastErr, &je) {
				return nil, je
			}
			return nil, lastErr
		}
		return nil, unknown
	}
	an := found[0]
	if a != nil {
		a.rec.Server = an.server
		a.done(nil, 0)
	}
	served, err := registry.RewriteSkill(an.res.Skill, func(u string) string { return qualifySkillURI(u, labels[an.server]) })
	if err != nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("server %s answered with an unusable skill entry: %v", an.server, err)}
	}
	res := &registry.GetSkillResult{ResultType: "complete", Skill: served, TTLMs: an.res.TTLMs, CacheScope: an.res.CacheScope}
	if res.TTLMs == nil {
		res.TTLMs = new(int)
	}
	if res.CacheScope == "" {
		res.CacheScope = "public"
	}
	if principalIn(ctx) != nil && (g.h.Serving().HasPrincipalRules() || g.h.Serving().PerUser(an.server)) {
		res.CacheScope = "private" // (another principal may be denied it, or get its own)
	}
	stripProtocolMeta(an.res.Meta)
	res.Meta = an.res.Meta
	return res, nil
}

// readDirectory answers resources/directory/read: the directory's
// children from the skill server that serves it and implements the method
// (directoryRead), under their served URIs; the cursor passes as it is.
// Under the servers' own URIs with several such servers, each is asked: the
// one that knows the directory answers (if several do, none is chosen).
func (g *Gateway) readDirectory(ctx context.Context, _ *mcp.ServerSession, p *registry.ReadDirectoryParams) (*registry.ReadDirectoryResult, error) {
	unknown := &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("no directory resource is served at %s", p.URI)}
	candidates, own, labels := g.skillOwner(ctx, p.URI)
	var servers []string
	for _, s := range candidates {
		if g.h.ReadsDirectories(ctx, s) {
			servers = append(servers, s)
		}
	}
	if len(servers) == 0 {
		return nil, unknown
	}
	got := askEach(servers, func(s string) (*registry.ReadDirectoryResult, error) {
		return g.h.ReadDirectory(ctx, s, &registry.ReadDirectoryParams{URI: own, Cursor: p.Cursor})
	})
	found := answered(got, nil)
	if len(found) != 1 {
		var je *jsonrpc.Error
		if len(servers) == 1 && errors.As(got[0].err, &je) {
			return nil, je // (the one owner's own answer)
		}
		return nil, unknown
	}
	an := found[0]
	res := &registry.ReadDirectoryResult{ResultType: "complete", Resources: make([]*mcp.Resource, 0, len(an.res.Resources)), NextCursor: an.res.NextCursor}
	for _, r := range an.res.Resources {
		if r == nil {
			continue
		}
		c := *r
		c.URI = qualifySkillURI(r.URI, labels[an.server])
		stripProtocolMeta(c.Meta)
		res.Resources = append(res.Resources, &c)
	}
	return res, nil
}

// skillsMiddleware, a receiving middleware of the go-sdk server inside the
// caller's (callerMiddleware), serves what the extensions add to standard
// methods: the extensions of the servers the caller sees in the answers to
// initialize and server/discover, and reads of skill files, which are not
// listed resources (the go-sdk answers those it does not know with
// "resource not found"), from their server.
func (g *Gateway) skillsMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method == "resources/read" {
			if rr, ok := req.(*mcp.ReadResourceRequest); ok && rr.Params != nil {
				if res, ok, err := g.readSkillFile(ctx, rr); ok {
					return res, err
				}
			}
			return next(ctx, method, req)
		}
		res, err := next(ctx, method, req)
		if err != nil {
			return res, err
		}
		switch r := res.(type) {
		case *mcp.InitializeResult:
			r.Capabilities = g.withExtensions(ctx, r.Capabilities)
		case *mcp.DiscoverResult:
			r.Capabilities = g.withExtensions(ctx, r.Capabilities)
		}
		return res, nil
	}
}

// readSkillFile reads, for skillsMiddleware, a skill file a served skill
// names: ok is false when req is no read of one (the listed resources'
// handlers answer it). When skills are served qualified, a URI whose first
// segment is a visible skill server's label is that server's, whichever
// other server lists a resource (or template) that matches it — a server
// cannot pass its own file off as another's skill (Sync refuses to serve
// such resources too: skillLabelProblems); the skill server's own listed
// resource at that URI is read through its handler. Under the servers'
// own URIs, a URI no server lists that may be a skill's file is asked of
// each visible skill server whose listed skill directories hold it
// (skillFileOf), a skill:// URI none holds of every skill server: the one
// that can read it answers (if several can, none is chosen); any other is
// not found. A
// per-user server's file is read through the caller's own connection:
// private.
func (g *Gateway) readSkillFile(ctx context.Context, req *mcp.ReadResourceRequest) (res mcp.Result, ok bool, err error) {
	uri := req.Params.URI
	servers, own, labels := g.skillOwner(ctx, uri)
	if len(servers) == 0 {
		return nil, false, nil
	}
	k, listed := g.owner(uri)
	if labels[servers[0]] != "" {
		if listed && k.server == servers[0] {
			return nil, false, nil
		}
		r, err := g.skillRead(ctx, req, servers[0], own)
		return r, true, err
	}
	if listed {
		return nil, false, nil
	}
	// Only a skill's file: one under the directory of a skill its server
	// lists, or a skill:// URI no server lists a skill directory of
	// (then any skill server's); any other URI no server lists is not
	// found, as without skill servers. (Each server asked at once: a
	// listing may be needed of each.)
	mine := servers[:0:0]
	for _, an := range askEach(servers, func(s string) (bool, error) { return g.skillFileOf(ctx, s, own), nil }) {
		if an.res {
			mine = append(mine, an.server)
		}
	}
	if scheme, _, _ := strings.Cut(own, "://"); len(mine) == 0 && strings.EqualFold(scheme, "skill") {
		mine = servers
	}
	if servers = mine; len(servers) == 0 {
		return nil, false, nil
	}
	if len(servers) == 1 {
		r, err := g.skillRead(ctx, req, servers[0], own)
		return r, true, err
	}
	got := askEach(servers, func(s string) (*mcp.ReadResourceResult, error) { return g.skillRead(ctx, req, s, own) })
	found := answered(got, nil)
	if len(found) != 1 {
		return nil, true, mcp.ResourceNotFoundError(uri)
	}
	return found[0].res, true, nil
}

// skillFileOf reports whether uri (a server's own) is in the directory of
// a skill of server, which serves its skills under their own URIs (its
// SKILL.md's URI up to the last "/"; a list that fails counts as none),
// as its latest listing says (serverSkillDirs).
func (g *Gateway) skillFileOf(ctx context.Context, server, uri string) bool {
	if !strings.Contains(uri, "://") {
		return false
	}
	for _, dir := range g.serverSkillDirs(ctx, server) {
		if strings.HasPrefix(uri, dir) {
			return true
		}
	}
	return false
}

// skillRead reads a skill file, own, from server for req: private when
// read through the caller's own connection to a per-user server.
func (g *Gateway) skillRead(ctx context.Context, req *mcp.ReadResourceRequest, server, own string) (*mcp.ReadResourceResult, error) {
	res, err := g.auditedRead(ctx, req, server, own)
	if err == nil && res != nil && principalIn(ctx) != nil && g.h.Serving().PerUser(server) {
		setCacheScope(res, cachePrivate)
	}
	return res, err
}

// withExtensions returns caps (a copy) declaring the extensions of the
// servers the caller of ctx sees (mergeExtensions); caps itself when there
// are none.
func (g *Gateway) withExtensions(ctx context.Context, caps *mcp.ServerCapabilities) *mcp.ServerCapabilities {
	var each []map[string]any
	for _, s := range g.visibleServers(ctx) {
		if ext := g.h.ServerExtensions(ctx, s); len(ext) > 0 {
			each = append(each, ext)
		}
	}
	merged := servedExtensions(each)
	if len(merged) == 0 || caps == nil {
		return caps
	}
	c := *caps
	c.Extensions = maps.Clone(c.Extensions)
	if c.Extensions == nil {
		c.Extensions = map[string]any{}
	}
	for k, v := range merged {
		if _, own := c.Extensions[k]; !own {
			c.Extensions[k] = v
		}
	}
	return &c
}

// ExtensionApps is the id of the MCP Apps extension (SEP-1865): it adds no
// method a client sends a server (its ui:// resources are read, and its
// tools called, as any other), so the gateway passes it on.
const ExtensionApps = "io.modelcontextprotocol/ui"

// passedExtensions are the extensions the gateway declares when its
// servers do (withExtensions): those whose methods it routes (Skills) and
// those that add none (MCP Apps). Another extension an upstream declares
// is not declared: a client would send methods the gateway cannot route.
// The tasks extension, which the gateway relays, is declared by
// tasksCapsMiddleware (withTasksExtension), not here.
var passedExtensions = map[string]bool{registry.ExtensionSkills: true, ExtensionApps: true}

// servedExtensions are the extensions the gateway declares for servers
// that declared each: mergeExtensions of those in passedExtensions.
func servedExtensions(each []map[string]any) map[string]any {
	passed := make([]map[string]any, 0, len(each))
	for _, ext := range each {
		m := maps.Clone(ext)
		maps.DeleteFunc(m, func(id string, _ any) bool { return !passedExtensions[id] })
		if len(m) > 0 {
			passed = append(passed, m)
		}
	}
	return mergeExtensions(passed)
}

// gatewaySettings make the settings the gateway declares for an
// extension of the settings its servers agree on (agreed), for the
// extensions whose features depend on the gateway's routing: of the Skills
// extension's, only directoryRead, which it routes (readDirectory), and
// only when every server that declares the extension implements it.
var gatewaySettings = map[string]func(agreed any) any{
	registry.ExtensionSkills: func(agreed any) any {
		if m, _ := agreed.(map[string]any); m["directoryRead"] == true {
			return map[string]any{"directoryRead": true}
		}
		return map[string]any{}
	},
}

// mergeExtensions merges the extensions several servers declared (each
// server's map): an extension any of them declares is declared. Where they
// give it different settings, the merged settings are those every one of
// them that declares the extension agrees on — an object's members equal
// in all (merged member by member when they are objects), anything else
// only if equal — so that a client relying on a setting finds it on
// whichever server it reaches: a feature one of them lacks is not
// declared. Extensions in gatewaySettings get the gateway's settings.
func mergeExtensions(each []map[string]any) map[string]any {
	if len(each) == 0 {
		return nil
	}
	out := map[string]any{}
	for _, ext := range each {
		for k, v := range ext {
			if prev, ok := out[k]; ok {
				out[k] = agree(prev, v)
			} else {
				out[k] = normalizeSetting(v)
			}
		}
	}
	for k, v := range out {
		if f, ok := gatewaySettings[k]; ok {
			out[k] = f(v)
		}
	}
	return out
}

// normalizeSetting is v as plain JSON values (map[string]any, []any, …),
// whatever Go types carried it.
func normalizeSetting(v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		return map[string]any{}
	}
	var out any
	if json.Unmarshal(b, &out) != nil || out == nil {
		return map[string]any{}
	}
	return out
}

// agree is what settings a and b agree on (see mergeExtensions).
func agree(a, b any) any {
	a, b = normalizeSetting(a), normalizeSetting(b)
	am, aok := a.(map[string]any)
	bm, bok := b.(map[string]any)
	if !aok || !bok {
		if reflect.DeepEqual(a, b) {
			return a
		}
		return map[string]any{}
	}
	out := map[string]any{}
	keys := slices.Collect(maps.Keys(am))
	for _, k := range keys {
		bv, ok := bm[k]
		if !ok {
			continue
		}
		av := am[k]
		_, am2 := av.(map[string]any)
		_, bm2 := bv.(map[string]any)
		switch {
		case am2 && bm2:
			out[k] = agree(av, bv)
		case reflect.DeepEqual(av, bv):
			out[k] = av
		}
	}
	return out
}

// ExtensionMethod reports whether m is a request of a method an extension
// adds that the gateway serves (skills/list, skills/get,
// resources/directory/read). The go-sdk server
// knows them (custom methods), but a session transport the streamable
// front connects itself checks a request against the standard methods
// only, and refuses the others with a plain-text 400 before the server
// sees them: that front answers these with ServeExtension instead.
func ExtensionMethod(m *wire.Message) bool {
	return m != nil && m.Kind == wire.KindRequest &&
		(m.MethodIs(registry.MethodListSkills) || m.MethodIs(registry.MethodGetSkill) || m.MethodIs(registry.MethodReadDirectory))
}

// ServeExtension answers m, a request ExtensionMethod accepts, of session
// ss, under ctx (which carries the caller, host.WithCaller, as the front
// set it): the JSON-RPC response, as the go-sdk server would answer it.
func (g *Gateway) ServeExtension(ctx context.Context, ss *mcp.ServerSession, m *wire.Message) []byte {
	cctx, end, ok := g.begin(ctx)
	if !ok {
		e := errShuttingDown("no new requests are accepted")
		return wire.Error(m.ID, e.Code, e.Message, nil)
	}
	defer end()
	params := m.Params
	if len(params) == 0 || string(params) == "null" {
		params = []byte("{}")
	}
	var res any
	var err error
	switch {
	case m.MethodIs(registry.MethodListSkills):
		var p registry.ListSkillsParams
		if err = json.Unmarshal(params, &p); err == nil {
			res, err = g.listSkills(cctx, ss, &p)
		}
	case m.MethodIs(registry.MethodGetSkill):
		var p registry.GetSkillParams
		if err = json.Unmarshal(params, &p); err == nil {
			res, err = g.getSkill(cctx, ss, &p)
		}
	case m.MethodIs(registry.MethodReadDirectory):
		var p registry.ReadDirectoryParams
		if err = json.Unmarshal(params, &p); err == nil {
			res, err = g.readDirectory(cctx, ss, &p)
		}
	default:
		return wire.Error(m.ID, jsonrpc.CodeMethodNotFound, "method not found", nil)
	}
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	if errors.As(err, &syntax) || errors.As(err, &typ) {
		return wire.Error(m.ID, jsonrpc.CodeInvalidParams, "invalid params: "+err.Error(), nil)
	}
	if err != nil {
		var je *jsonrpc.Error
		if errors.As(err, &je) {
			return wire.Error(m.ID, je.Code, je.Message, je.Data)
		}
		return wire.Error(m.ID, jsonrpc.CodeInternalError, err.Error(), nil)
	}
	b, err := json.Marshal(res)
	if err != nil {
		return wire.Error(m.ID, jsonrpc.CodeInternalError, err.Error(), nil)
	}
	return wire.Result(m.ID, b)
}

// ClientExtensions are the extensions the gateway speaks, as a client, to
// its upstream servers for its own clients — the Skills extension — as
// the extensions of the client capabilities it offers them
// (host.Options.ClientCapabilities): a server may refuse skills/list to a
// client that did not declare it.
func ClientExtensions() map[string]any {
	return map[string]any{registry.ExtensionSkills: map[string]any{}}
}
