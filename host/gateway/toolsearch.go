package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/inbound"
	"github.com/mcphost/mcphost/host/permissions"
	"github.com/mcphost/mcphost/host/registry"
	"github.com/mcphost/mcphost/host/toolsearch"
	"github.com/mcphost/mcphost/internal/rawjson"
)

// Tool search (serve --tool-search, Options.ToolSearch). A registry of a
// thousand tools costs a client's model tens of thousands of tokens of
// definitions before it does anything (77,000 for the 1,000 terse tools of
// BenchmarkToolSearch). In this mode the gateway's tools/list holds two
// tools of its own instead, about 300 tokens:
//
//   - search_tools {query, limit?, server?} ranks the registry's tools
//     against the query (package toolsearch, BM25) and returns the best
//     matches with their registry names, descriptions and input schemas;
//   - call_tool {name, arguments?} calls one of them by its registry name
//     (or the name it is served under) through the very path of a direct
//     call: the gate (pin, permission — an ask becomes the gateway's
//     question to this client — login, limits), progress, cancellation,
//     what the server asks during the call, result processing. Its
//     arguments are held to what a direct call's message is: the strict
//     JSON scan, and over HTTP the Mcp-Param-* headers of x-mcp-header
//     parameters (toolsearch_headers.go).
//
// Everything else is as without the flag: the real tools are still served
// and may still be called directly by their served names (they are only
// left out of tools/list), on the relay's fast path where it applies;
// prompts, resources and the rest pass through. Tools the permission rules
// deny are neither found nor callable through call_tool. The index follows
// the registry: it is rebuilt when Sync sees the tools change (an upstream
// list_changed or reconnect), and a downstream client still gets
// notifications/tools/list_changed then — its list is the same two tools,
// but what a search finds has changed.
//
// The two names never collide with registry names (always mcp__…); under
// bare or conditional naming a server's own tool of either name is not
// served under it (it is reported, and stays reachable by search and
// call_tool under its registry name), nor is one whose own name reads as a
// registry name (naming.go): call_tool and a direct call by one name
// always mean the same tool.

// Names of the tool-search mode's tools.
const (
	SearchToolName = "search_tools"
	CallToolName   = "call_tool"
)

// MaxSearchLimit is the most results one search_tools call returns.
const MaxSearchLimit = 20

// searchState is the tool-search mode's index of the registry.
type searchState struct {
	mu    sync.Mutex       // serializes rebuilds
	built []*registry.Tool // what ix was built from
	// builtText is what the overrides of built's tools changed of them
	// (reindex).
	builtText []string
	ix        atomic.Pointer[toolsearch.Index] // read without a lock
	defs      []*mcp.Tool                      // the two tools, as listed
}

// searchToolDef and callToolDef are the definitions of the mode's two
// tools.
func searchToolDef() *mcp.Tool {
	no := false
	return &mcp.Tool{
		Name:  SearchToolName,
		Title: "Search tools",
		Description: "Find the tools for a task among the many tools of the connected servers (they are not listed). " +
			"Describe the task in plain words; the best matches come back with their name, description and input schema. " +
			"Call one with " + CallToolName + ".",
		InputSchema: map[string]any{
			"type": "object",
			"properties": map[string]any{
				"query":  map[string]any{"type": "string", "description": "The task, in words, e.g. \"open a pull request\"."},
				"limit":  map[string]any{"type": "integer", "minimum": 1, "maximum": MaxSearchLimit, "default": toolsearch.DefaultLimit, "description": "How many tools to return."},
				"server": map[string]any{"type": "string", "description": "Only this server's tools (SERVER in mcp__SERVER__TOOL)."},
			},
			"required":             []any{"query"},
			"additionalProperties": false,
		},
		Annotations: &mcp.ToolAnnotations{Title: "Search tools", ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: &no},
	}
}

func callToolDef() *mcp.Tool {
	yes := true
	return &mcp.Tool{
		Name:        CallToolName,
		Title:       "Call a tool",
		Description: "Call a tool found with " + SearchToolName + ": its name, and arguments that follow its input schema.",
		InputSchema: map[string]any{
			"type": "object",
			"properties": map[string]any{
				"name":      map[string]any{"type": "string", "description": "The tool's name, as " + SearchToolName + " returned it."},
				"arguments": map[string]any{"type": "object", "description": "The tool's arguments."},
			},
			"required":             []any{"name"},
			"additionalProperties": false,
		},
		Annotations: &mcp.ToolAnnotations{Title: "Call a tool", DestructiveHint: &yes, OpenWorldHint: &yes},
	}
}

// enableToolSearch serves the mode's two tools and lists only them.
func (g *Gateway) enableToolSearch() {
	g.search = &searchState{defs: []*mcp.Tool{searchToolDef(), callToolDef()}}
	g.search.ix.Store(toolsearch.New(nil, nil))
	g.srv.AddTool(g.search.defs[0], g.searchHandler)
	g.srv.AddTool(g.search.defs[1], g.callHandler)
	g.srv.AddReceivingMiddleware(g.toolListMiddleware)
}

// toolListMiddleware answers tools/list with the mode's two tools. (The
// go-sdk server's own answer is still made first: it checks the cursor and
// sets the result's cache hints.)
func (g *Gateway) toolListMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if r, ok := res.(*mcp.ListToolsResult); ok && err == nil && method == "tools/list" {
			r.Tools = slices.Clone(g.search.defs)
			r.NextCursor = ""
			r.CacheScope = cachePublic // (the same two tools for all)
		}
		return res, err
	}
}

// reindex rebuilds the search index from the registry's tools when they
// changed, leaving out the tools the permission rules deny. A tool with an
// override is indexed by what is served of it: the override's title (with
// its name) and description (indexedAs).
func (g *Gateway) reindex(tools []*registry.Tool) {
	keep := make([]*registry.Tool, 0, len(tools))
	var text []string                           // what an override changes of keep's, in order
	scoped := g.h.Serving().HasPrincipalRules() // (then each search filters for its caller)
	for _, t := range tools {
		if scoped || g.h.Decide(t.Name).Behavior != permissions.Deny {
			keep = append(keep, t)
			if o := g.toolOverride(t); o != nil {
				text = append(text, t.Name+"\x00"+o.Name+"\x00"+o.Title+"\x00"+o.Description)
			}
		}
	}
	g.search.mu.Lock()
	defer g.search.mu.Unlock()
	// The registry hands out the same *Tool while a server's list is
	// unchanged; the overrides change on a reload.
	if slices.Equal(keep, g.search.built) && slices.Equal(text, g.search.builtText) {
		return
	}
	g.search.built, g.search.builtText = keep, text
	indexed := keep
	if len(text) > 0 {
		indexed = make([]*registry.Tool, len(keep))
		for i, t := range keep {
			indexed[i] = indexedAs(t, g.toolOverride(t))
		}
	}
	g.search.ix.Store(toolsearch.New(indexed, nil))
}

// indexedAs is t as the search index takes it: with o's title (after o's
// name, whose words a search then finds too) and description in place of
// the server's, in a copy; t itself without an override. The copy keeps
// t's registry name (what search_tools returns and call_tool takes) and
// its own name (what overrides are looked up by).
func indexedAs(t *registry.Tool, o *config.ToolOverride) *registry.Tool {
	if o == nil || (o.Name == "" && o.Title == "" && o.Description == "") {
		return t
	}
	c := *t
	if o.Title != "" {
		c.DisplayName = o.Title
	}
	if o.Name != "" {
		c.DisplayName = strings.TrimSpace(o.Name + " " + c.DisplayName)
	}
	if o.Description != "" {
		c.Description = o.Description
	}
	return &c
}

// searchArgs are search_tools' arguments.
type searchArgs struct {
	Query  string   `json:"query"`
	Limit  *float64 `json:"limit"`
	Server string   `json:"server"`
}

// foundTool is one search result: what a model needs to call the tool, and
// the rest of what its server says of it (as tools/list would serve it).
type foundTool struct {
	Name         string               `json:"name"`
	Title        string               `json:"title,omitempty"`
	Description  string               `json:"description,omitempty"`
	InputSchema  any                  `json:"inputSchema"`
	OutputSchema any                  `json:"outputSchema,omitempty"`
	Annotations  *mcp.ToolAnnotations `json:"annotations,omitempty"`
	Icons        []mcp.Icon           `json:"icons,omitempty"`
	Meta         mcp.Meta             `json:"_meta,omitempty"`
	Execution    any                  `json:"execution,omitempty"`
}

// searchResult is search_tools' answer (as JSON text).
type searchResult struct {
	Tools []foundTool `json:"tools"`
	Note  string      `json:"note,omitempty"`
}

// searchHandler serves search_tools. A problem with the arguments is a
// tool error the model can read and correct.
func (g *Gateway) searchHandler(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var a searchArgs
	if err := decodeArgs(req.Params.Arguments, &a, "query, limit, server"); err != nil {
		return errorResult(fmt.Errorf("%s: %w", SearchToolName, err)), nil
	}
	limit := toolsearch.DefaultLimit
	if a.Limit != nil {
		if l := *a.Limit; l != math.Trunc(l) || l < 1 || l > MaxSearchLimit {
			return errorResult(fmt.Errorf("%s: limit must be a whole number from 1 to %d", SearchToolName, MaxSearchLimit)), nil
		}
		limit = int(*a.Limit)
	}
	var principal *inbound.Principal
	if c := host.CallerOf(ctx); c != nil {
		principal = c.Principal
	}
	ix := g.search.ix.Load()
	if a.Server != "" && (!slices.Contains(ix.Servers(), a.Server) || g.h.Serving().ServerDeniedFor(principal, a.Server)) {
		// Only the servers with a tool the caller may find are named: one
		// whose every tool the rules deny is as unknown as one that does
		// not exist.
		servers := "none"
		if s := slices.DeleteFunc(slices.Clone(ix.Servers()), func(s string) bool { return g.h.Serving().ServerDeniedFor(principal, s) }); len(s) > 0 {
			servers = strings.Join(s, ", ")
		}
		return errorResult(fmt.Errorf("%s: there is no server %q among those whose tools you can use; they are %s", SearchToolName, a.Server, servers)), nil
	}
	found, err := ix.Search(a.Query, &toolsearch.SearchOptions{
		Limit:  limit,
		Server: a.Server,
		// (The index leaves them out already; the rules are checked
		// again for what is returned.)
		Filter: func(t *registry.Tool) bool {
			return g.h.Serving().DecideFor(principal, t.Name).Behavior != permissions.Deny
		},
	})
	if errors.Is(err, toolsearch.ErrEmptyQuery) {
		return errorResult(fmt.Errorf("%s: %w: describe the task in words", SearchToolName, err)), nil
	}
	if err != nil {
		return errorResult(fmt.Errorf("%s: %w", SearchToolName, err)), nil
	}
	out := searchResult{Tools: make([]foundTool, 0, len(found))}
	for _, r := range found {
		st := overridden(serverTool(r.Tool.Name, r.Tool), g.toolOverride(r.Tool))
		g.mu.Lock()
		st.Meta = appsMeta(st.Meta, func(uri string) string { return g.exposed.appsURI(r.Tool.Server, uri) })
		g.mu.Unlock()
		// The name found stays the registry name call_tool takes; an
		// override's title and description show as tools/list shows them.
		et := withExecution(st)
		ft := foundTool{Name: r.Tool.Name, Title: st.Title, Description: st.Description, InputSchema: st.InputSchema,
			OutputSchema: st.OutputSchema, Annotations: st.Annotations, Icons: st.Icons, Meta: et.Meta, Execution: et.Execution}
		out.Tools = append(out.Tools, ft)
	}
	// (What the tools/list checks leave of the list, the search leaves of
	// its finds.)
	if out.Tools, err = g.checkFound(ctx, req, out.Tools); err != nil {
		return errorResult(fmt.Errorf("%s: %w", SearchToolName, err)), nil
	}
	if len(out.Tools) == 0 {
		out.Note = "No tool matches; try other words"
		if a.Server != "" {
			out.Note += ", or leave out server"
		}
		out.Note += "."
	}
	b, err := json.Marshal(out)
	if err != nil {
		return errorResult(fmt.Errorf("%s: encoding the result: %w", SearchToolName, err)), nil
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}}, nil
}

// callArgs are call_tool's arguments.
type callArgs struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

// callHandler serves call_tool: the named tool is called as if the client
// had called it directly (Gateway.call), with call_tool's _meta (its
// progress token), input responses and request state — so an ask, an
// upstream's questions and their retries work as for a direct call; the
// request state the gateway issues is bound to the real tool and its
// arguments. The tool's arguments are held to what a direct call's message
// is held to: the strict JSON scan (rawjson: no duplicate, case-variant,
// escaped or non-ASCII member names), and, over HTTP at 2026-07-28, the
// Mcp-Param-* headers of the parameters its input schema sends as headers
// (x-mcp-header), as the go-sdk handler checks them for a direct call.
func (g *Gateway) callHandler(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var a callArgs
	if err := decodeArgs(req.Params.Arguments, &a, "name, arguments"); err != nil {
		return errorResult(fmt.Errorf("%s: %w", CallToolName, err)), nil
	}
	if a.Name == "" {
		return errorResult(fmt.Errorf("%s: name is required: the name of a tool %s found", CallToolName, SearchToolName)), nil
	}
	args, err := unwrapArgs(a.Arguments)
	if err != nil {
		return errorResult(fmt.Errorf("%s: %w", CallToolName, err)), nil
	}
	p := *req.Params
	p.Arguments = args
	if name, ok := g.loginRetry(&p, a.Name); ok {
		// (The login's retry: the pseudo-tool may be gone from the index
		// already; Gateway.call checks the request state it carries.)
		p.Name = name
		return g.call(ctx, &mcp.CallToolRequest{Session: req.Session, Params: &p, Extra: req.Extra}, name)
	}
	t, ok := g.foundTool(a.Name)
	if !ok {
		return errorResult(fmt.Errorf("%s: no tool %q; find tools with %s", CallToolName, a.Name, SearchToolName)), nil
	}
	if err := checkParamHeaders(req, t, args); err != nil {
		return nil, err
	}
	p.Name = t.Name
	res, err := g.call(ctx, &mcp.CallToolRequest{Session: req.Session, Params: &p, Extra: req.Extra}, t.Name)
	if errors.Is(err, registry.ErrNotFound) {
		// (Gone since it was found, or hidden from the caller: an answer
		// for the model, not a protocol error about call_tool — the same
		// as for a name never found.)
		return errorResult(fmt.Errorf("%s: no tool %q; find tools with %s", CallToolName, a.Name, SearchToolName)), nil
	}
	return res, err
}

// unwrapArgs returns call_tool's arguments member as the tool's arguments:
// nil for none, else a JSON object held to the strict scan. Models often
// send the arguments as a string of JSON: taken if it holds an object, and
// held to the same scan.
func unwrapArgs(raw json.RawMessage) (json.RawMessage, error) {
	args := bytes.TrimSpace(raw)
	if len(args) > 0 && args[0] == '"' {
		var s string
		if json.Unmarshal(args, &s) == nil {
			args = bytes.TrimSpace([]byte(s))
		}
	}
	if len(args) == 0 || string(args) == "null" {
		return nil, nil
	}
	if args[0] != '{' || !json.Valid(args) {
		return nil, errors.New("arguments must be an object")
	}
	var arr [8]rawjson.Member
	if _, err := rawjson.Members(arr[:0], args); err != nil {
		return nil, fmt.Errorf("arguments refused: %w", argsRefusal(err))
	}
	return args, nil
}

// argsRefusal says what the strict scan refused, in words.
func argsRefusal(err error) error {
	switch {
	case errors.Is(err, rawjson.ErrDuplicate):
		return errors.New("duplicate or case-variant member names")
	case errors.Is(err, rawjson.ErrName):
		return errors.New("a member name with an escape or a non-ASCII character")
	case errors.Is(err, rawjson.ErrTooDeep):
		return errors.New("nested too deeply")
	}
	return errors.New("invalid JSON")
}

// loginRetry reports whether a call_tool call is the retry of an
// authenticate pseudo-tool's call whose login the client was asked to
// complete (it answers the gateway's login request), and the pseudo-tool's
// registry name (name, or the registry name of a served name).
func (g *Gateway) loginRetry(p *mcp.CallToolParamsRaw, name string) (string, bool) {
	if _, answered := p.InputResponses[loginKey]; !answered {
		return "", false
	}
	if canonical, ok := g.canonicalTool(name); ok {
		name = canonical
	}
	server, tool, ok := registry.ParseName(name)
	return name, ok && tool == host.AuthToolName && g.inEndpoint(server)
}

// foundTool resolves call_tool's name: a registry name, or a served name,
// of a tool in the search index (so never one the rules deny).
func (g *Gateway) foundTool(name string) (*registry.Tool, bool) {
	ix := g.search.ix.Load()
	if t, ok := ix.Tool(name); ok {
		return t, true
	}
	if canonical, ok := g.canonicalTool(name); ok {
		if t, ok := ix.Tool(canonical); ok {
			return t, true
		}
	}
	return nil, false
}

// decodeArgs decodes a meta tool's arguments into v, refusing members v
// does not have (known lists them, for the message).
func decodeArgs(raw json.RawMessage, v any, known string) error {
	if len(bytes.TrimSpace(raw)) == 0 {
		raw = json.RawMessage("{}")
	}
	// The gateway decides on these members (call_tool's name): held to
	// the strict scan as a direct call's params are, so that "name" and
	// "Name" (which encoding/json would both take) cannot both be sent.
	var arr [8]rawjson.Member
	if _, err := rawjson.Members(arr[:0], raw); err != nil && !errors.Is(err, rawjson.ErrNotObject) {
		return fmt.Errorf("invalid arguments (%v); the arguments are %s", argsRefusal(err), known)
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	d.DisallowUnknownFields()
	if err := d.Decode(v); err != nil {
		return fmt.Errorf("invalid arguments (%v); the arguments are %s", err, known)
	}
	return nil
}

// metaNameProblems leaves the mode's two names out of the served tools (a
// server's own tool of that name, under bare or conditional naming), and
// reports each.
func metaNameProblems(want map[string]*registry.Tool) []registry.Problem {
	var problems []registry.Problem
	for _, name := range []string{SearchToolName, CallToolName} {
		if t, ok := want[name]; ok {
			delete(want, name)
			problems = append(problems, registry.Problem{Server: t.Server, Detail: fmt.Sprintf(
				"tool %s is not served as %q, the name of the gateway's own tool with --tool-search; %s finds it and %s calls it as %s",
				t.Name, name, SearchToolName, CallToolName, t.Name)})
		}
	}
	return problems
}

// ToolSearch reports whether the gateway is in tool-search mode
// (Options.ToolSearch).
func (g *Gateway) ToolSearch() bool { return g.search != nil }
