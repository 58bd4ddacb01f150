package gateway_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/gateway"
	"github.com/mcphost/mcphost/host/gateway/streamable"
)

// metaTool is a tool that says everything a tool can: title, annotations,
// output schema, icons and _meta (MCP Apps' ui.resourceUri, a vendor hint,
// and a protocol-reserved member the gateway must not pass on).
func metaTool() *mcp.Tool {
	no := false
	return &mcp.Tool{
		Name:        "show",
		Title:       "Show a chart",
		Description: "Shows a chart.",
		InputSchema: map[string]any{"type": "object", "properties": map[string]any{"q": map[string]any{"type": "string"}}},
		OutputSchema: map[string]any{"type": "object", "properties": map[string]any{
			"n": map[string]any{"type": "integer"}}},
		Annotations: &mcp.ToolAnnotations{Title: "Chart", ReadOnlyHint: true, OpenWorldHint: &no},
		Icons:       metaIcons(),
		Meta:        metaMeta(),
	}
}

// metaIcons are the icons of the definitions of metaGateway's server.
func metaIcons() []mcp.Icon {
	return []mcp.Icon{{Source: "https://example.com/chart.png", MIMEType: "image/png", Sizes: []string{"48x48"}, Theme: "light"}}
}

// metaMeta is the _meta of the definitions of metaGateway's server: two
// members to pass, and two protocol-reserved ones and one of the gateway's
// own names to leave out.
func metaMeta() mcp.Meta {
	return mcp.Meta{
		"ui":                                   map[string]any{"resourceUri": "ui://charts/show.html"},
		"anthropic/alwaysLoad":                 true,
		"io.modelcontextprotocol/serverInfo":   map[string]any{"name": "x"},
		"io.modelcontextprotocol/notReserved?": "still reserved by its prefix",
		"dev.mcphost/route":                    "the gateway's own",
	}
}

// passedMeta is metaMeta as a client of the gateway must see it.
var passedMeta = mcp.Meta{"ui": map[string]any{"resourceUri": "ui://charts/show.html"}, "anthropic/alwaysLoad": true}

// metaGateway serves an in-process go-sdk server holding metaTool through
// a gateway with opts, and returns a client session of it (in memory).
func metaGateway(t *testing.T, opts *gateway.Options) *mcp.ClientSession {
	t.Helper()
	return connectInMemory(t, metaServe(t, opts))
}

// metaServe is the synced gateway of metaGateway.
func metaServe(t *testing.T, opts *gateway.Options) *gateway.Gateway {
	t.Helper()
	server := mcp.NewServer(&mcp.Implementation{Name: "s", Version: "1"}, nil)
	server.AddTool(metaTool(), func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{StructuredContent: map[string]any{"n": 1}}, nil
	})
	server.AddPrompt(&mcp.Prompt{Name: "brief", Title: "A brief", Description: "Briefs.", Icons: metaIcons(), Meta: metaMeta()},
		func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{}, nil
		})
	server.AddResource(&mcp.Resource{URI: "ui://charts/show.html", Name: "show", Title: "Chart view", MIMEType: "text/html;profile=mcp-app",
		Icons: metaIcons(), Meta: metaMeta()},
		func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{}, nil
		})
	server.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: "file:///logs/{day}", Name: "logs", Title: "Logs of a day",
		Icons: metaIcons(), Meta: metaMeta()},
		func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{}, nil
		})
	return serveInProcess(t, server, opts)
}

// serveInProcess is a synced gateway with opts over server, in process as
// server "s".
func serveInProcess(t *testing.T, server *mcp.Server, opts *gateway.Options) *gateway.Gateway {
	t.Helper()
	g, _ := syncedGateway(t, inProcessHost(t, map[string]*mcp.Server{"s": server}), opts)
	return g
}

// wantToolFields checks that got carries all metaTool says but its
// reserved _meta members.
func wantToolFields(t *testing.T, where string, got *mcp.Tool) {
	t.Helper()
	want := metaTool()
	if got.Title != want.Title {
		t.Errorf("%s: title %q, want %q", where, got.Title, want.Title)
	}
	if got.Description != want.Description {
		t.Errorf("%s: description %q, want %q", where, got.Description, want.Description)
	}
	if !reflect.DeepEqual(got.Icons, want.Icons) {
		t.Errorf("%s: icons %+v, want %+v", where, got.Icons, want.Icons)
	}
	if !reflect.DeepEqual(got.Meta, passedMeta) {
		t.Errorf("%s: _meta %v, want %v (reserved members left out)", where, got.Meta, passedMeta)
	}
	if a := got.Annotations; a == nil || a.Title != "Chart" || !a.ReadOnlyHint || a.OpenWorldHint == nil || *a.OpenWorldHint {
		t.Errorf("%s: annotations %+v", where, a)
	}
	if o, ok := got.OutputSchema.(map[string]any); !ok || o["type"] != "object" || o["properties"] == nil {
		t.Errorf("%s: output schema %v", where, got.OutputSchema)
	}
}

// TestToolDefinitionPassesThrough: what a server says of a tool — title,
// annotations, output schema, icons, _meta (MCP Apps' ui.resourceUri,
// vendor hints) — reaches a client of the gateway, in tools/list (each
// naming mode) and in search_tools results; the protocol-reserved _meta
// members ("io.modelcontextprotocol/…") do not.
func TestToolDefinitionPassesThrough(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		naming string
		name   string
	}{
		{config.NamingPrefixed, "mcp__s__show"},
		{config.NamingBare, "show"},
	} {
		t.Run(tc.naming, func(t *testing.T) {
			t.Parallel()
			cs := metaGateway(t, &gateway.Options{Naming: tc.naming})
			res, err := cs.ListTools(context.Background(), nil)
			if err != nil || len(res.Tools) != 1 || res.Tools[0].Name != tc.name {
				t.Fatalf("tools/list: %+v %v", res, err)
			}
			wantToolFields(t, "tools/list", res.Tools[0])
		})
	}
	t.Run("search_tools", func(t *testing.T) {
		t.Parallel()
		cs := metaGateway(t, &gateway.Options{ToolSearch: true})
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: gateway.SearchToolName, Arguments: map[string]any{"query": "chart"}})
		if err != nil || res.IsError || len(res.Content) != 1 {
			t.Fatalf("search_tools: %+v %v", res, err)
		}
		var found struct{ Tools []*mcp.Tool }
		if err := json.Unmarshal([]byte(res.Content[0].(*mcp.TextContent).Text), &found); err != nil || len(found.Tools) != 1 {
			t.Fatalf("search_tools result %v: %v", res.Content[0], err)
		}
		wantToolFields(t, "search_tools", found.Tools[0])
	})
}

// TestPromptResourceTemplateDefinitionsPassThrough: the title, icons and
// _meta (less its protocol-reserved members) of a server's prompts,
// resources (an MCP Apps ui:// one) and resource templates reach a client
// of the gateway.
func TestPromptResourceTemplateDefinitionsPassThrough(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cs := metaGateway(t, nil)
	type def struct {
		title string
		icons []mcp.Icon
		meta  mcp.Meta
	}
	var got = map[string]def{}
	if r, err := cs.ListPrompts(ctx, nil); err != nil || len(r.Prompts) != 1 {
		t.Fatalf("prompts/list: %+v %v", r, err)
	} else {
		p := r.Prompts[0]
		got["prompt"] = def{p.Title, p.Icons, p.Meta}
	}
	if r, err := cs.ListResources(ctx, nil); err != nil || len(r.Resources) != 1 || r.Resources[0].URI != "ui://charts/show.html" {
		t.Fatalf("resources/list: %+v %v", r, err)
	} else {
		p := r.Resources[0]
		got["resource"] = def{p.Title, p.Icons, p.Meta}
	}
	if r, err := cs.ListResourceTemplates(ctx, nil); err != nil || len(r.ResourceTemplates) != 1 {
		t.Fatalf("resources/templates/list: %+v %v", r, err)
	} else {
		p := r.ResourceTemplates[0]
		got["template"] = def{p.Title, p.Icons, p.Meta}
	}
	for _, tc := range []struct {
		kind, title string
	}{
		{"prompt", "A brief"},
		{"resource", "Chart view"},
		{"template", "Logs of a day"},
	} {
		d := got[tc.kind]
		if d.title != tc.title {
			t.Errorf("%s: title %q, want %q", tc.kind, d.title, tc.title)
		}
		if !reflect.DeepEqual(d.icons, metaIcons()) {
			t.Errorf("%s: icons %+v, want %+v", tc.kind, d.icons, metaIcons())
		}
		if !reflect.DeepEqual(d.meta, passedMeta) {
			t.Errorf("%s: _meta %v, want %v (reserved members left out)", tc.kind, d.meta, passedMeta)
		}
	}
}

// TestDefinitionsPassThroughHTTP: over the streamable HTTP front, a client
// of each protocol era gets a tool's and a resource's icons and _meta (less
// the reserved members) as a client in memory does.
func TestDefinitionsPassThroughHTTP(t *testing.T) {
	t.Parallel()
	g := metaServe(t, nil)
	srv := httptest.NewServer(streamable.New(g).Handler(nil))
	t.Cleanup(func() {
		srv.CloseClientConnections()
		srv.Close()
	})
	for _, version := range protocols {
		t.Run(version, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			cs := wantListedTool(t, ctx, &mcp.StreamableClientTransport{Endpoint: srv.URL}, version)
			rs, err := cs.ListResources(ctx, nil)
			if err != nil || len(rs.Resources) != 1 {
				t.Fatalf("resources/list: %+v %v", rs, err)
			}
			if r := rs.Resources[0]; !reflect.DeepEqual(r.Meta, passedMeta) || !reflect.DeepEqual(r.Icons, metaIcons()) {
				t.Errorf("resources/list: _meta %v icons %+v", r.Meta, r.Icons)
			}
		})
	}
}

// wantListedTool connects a client of version through transport to a
// gateway of metaServe's, checks the version negotiated and the one tool
// listed (wantToolFields), and returns the session (closed at the test's
// end).
func wantListedTool(t *testing.T, ctx context.Context, transport mcp.Transport, version string) *mcp.ClientSession {
	t.Helper()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c-" + version}, nil).Connect(ctx, transport, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	if got := cs.InitializeResult().ProtocolVersion; got != version {
		t.Fatalf("negotiated %s, want %s", got, version)
	}
	res, err := cs.ListTools(ctx, nil)
	if err != nil || len(res.Tools) != 1 {
		t.Fatalf("tools/list: %+v %v", res, err)
	}
	wantToolFields(t, "tools/list", res.Tools[0])
	return cs
}

// TestToolTitleAsGiven: a tool's title is served as its server gave it —
// not made of its annotations' title, and kept when it equals the name.
func TestToolTitleAsGiven(t *testing.T) {
	t.Parallel()
	server := mcp.NewServer(&mcp.Implementation{Name: "s", Version: "1"}, nil)
	tools := []*mcp.Tool{
		{Name: "annotated", Annotations: &mcp.ToolAnnotations{Title: "From annotations"}},
		{Name: "same", Title: "same"},
		{Name: "titled", Title: "Titled", Annotations: &mcp.ToolAnnotations{Title: "Other"}},
		{Name: "plain"},
	}
	for _, tool := range tools {
		tool.InputSchema = map[string]any{"type": "object"}
		server.AddTool(tool, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{}, nil
		})
	}
	g := serveInProcess(t, server, &gateway.Options{Naming: config.NamingBare})
	ctx := context.Background()
	cs := connectInMemory(t, g)
	res, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, tool := range res.Tools {
		got[tool.Name] = tool.Title
	}
	want := map[string]string{"annotated": "", "same": "same", "titled": "Titled", "plain": ""}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("titles %v, want %v", got, want)
	}
}

// TestDefinitionsPassThroughStdio: on the stdio front, a client of each
// protocol era gets a tool's icons and _meta (less the reserved members).
func TestDefinitionsPassThroughStdio(t *testing.T) {
	t.Parallel()
	for _, version := range protocols {
		t.Run(version, func(t *testing.T) {
			t.Parallel()
			g := metaServe(t, nil)
			inW, outR := servePipes(t, g)
			wantListedTool(t, context.Background(), &mcp.IOTransport{Reader: outR, Writer: inW}, version)
		})
	}
}

// collidingAppsHost is a host of two MCP Apps servers, a and b, each with a
// tool "show" whose ui.resourceUri (and the earlier flat "ui/resourceUri")
// is ui://app/view.html, a resource both offer, read as "view of SERVER";
// and a tool "solo" naming ui://app/only-a.html, which only a offers.
func collidingAppsHost(t testing.TB) *host.Host {
	t.Helper()
	const shared, own = "ui://app/view.html", "ui://app/only-a.html"
	servers := map[string]*mcp.Server{}
	for _, name := range []string{"a", "b"} {
		s := mcp.NewServer(&mcp.Implementation{Name: name, Version: "1"}, nil)
		s.AddTool(&mcp.Tool{Name: "show", InputSchema: map[string]any{"type": "object"},
			Meta: mcp.Meta{"ui": map[string]any{"resourceUri": shared, "visibility": []any{"model", "app"}}, "ui/resourceUri": shared}},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{}, nil
			})
		s.AddTool(&mcp.Tool{Name: "solo", InputSchema: map[string]any{"type": "object"},
			Meta: mcp.Meta{"ui": map[string]any{"resourceUri": own}}},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{}, nil
			})
		text := "view of " + name
		s.AddResource(&mcp.Resource{URI: shared, Name: "view", MIMEType: "text/html;profile=mcp-app"},
			func(_ context.Context, r *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
				return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: r.Params.URI, MIMEType: "text/html;profile=mcp-app", Text: text}}}, nil
			})
		if name == "a" {
			s.AddResource(&mcp.Resource{URI: own, Name: "only", MIMEType: "text/html;profile=mcp-app"},
				func(_ context.Context, r *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
					return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: r.Params.URI, Text: "only a"}}}, nil
				})
		}
		servers[name] = s
	}
	h := inProcessHost(t, servers)
	return h
}

// TestAppsResourceURIsOfCollidingServers: two servers offering the same
// MCP Apps ui:// resource get it served qualified, once each, and each
// server's tool names its own server's (ui.resourceUri, and the earlier
// flat "ui/resourceUri"), whose read reaches that server; a URI one server
// alone offers is left as is.
func TestAppsResourceURIsOfCollidingServers(t *testing.T) {
	t.Parallel()
	const shared, own = "ui://app/view.html", "ui://app/only-a.html"
	h := collidingAppsHost(t)
	g, ctx := syncedGateway(t, h, nil)
	cs := connectInMemory(t, g)
	res, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][2]any{}
	for _, tool := range res.Tools {
		ui, _ := tool.Meta["ui"].(map[string]any)
		got[tool.Name] = [2]any{ui["resourceUri"], tool.Meta["ui/resourceUri"]}
		if tool.Name == "mcp__a__show" && !reflect.DeepEqual(ui["visibility"], []any{"model", "app"}) {
			t.Errorf("%s: ui.visibility %v lost", tool.Name, ui["visibility"])
		}
	}
	want := map[string][2]any{
		"mcp__a__show": {"ui://mcphost/a/app/view.html", "ui://mcphost/a/app/view.html"},
		"mcp__b__show": {"ui://mcphost/b/app/view.html", "ui://mcphost/b/app/view.html"},
		"mcp__a__solo": {own, nil},
		// b lists no such resource (a does): b's tool names b's own,
		// qualified, never a's widget.
		"mcp__b__solo": {"ui://mcphost/b/app/only-a.html", nil},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("resource URIs of the tools %v, want %v", got, want)
	}
	for _, name := range []string{"a", "b"} {
		uri := got["mcp__"+name+"__show"][0].(string)
		r, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
		if err != nil || len(r.Contents) != 1 || r.Contents[0].Text != "view of "+name {
			t.Errorf("read %s: %+v %v, want the view of %s", uri, r, err, name)
		}
	}
	// b's solo names a URI only a lists: its read goes to b (which has
	// none), never to a's widget.
	if r, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "ui://mcphost/b/app/only-a.html"}); err == nil {
		t.Errorf("read of b's solo resource: %+v, want b's not found", r)
	} else if !strings.Contains(err.Error(), "only-a.html") {
		t.Errorf("read of b's solo resource: %v, want b's not found", err)
	}
	for name, uris := range got {
		if u, _ := uris[0].(string); !strings.HasPrefix(u, "ui://") {
			t.Errorf("%s: ui.resourceUri %q: an app bridge takes ui:// URIs only", name, u)
		}
	}
	// search_tools names the same resources.
	sg := gateway.New(h, &gateway.Options{ToolSearch: true})
	t.Cleanup(func() { sg.Close() })
	sg.Sync(ctx)
	scs := connectInMemory(t, sg)
	sr, err := scs.CallTool(ctx, &mcp.CallToolParams{Name: gateway.SearchToolName, Arguments: map[string]any{"query": "show", "server": "b"}})
	if err != nil || sr.IsError || len(sr.Content) != 1 {
		t.Fatalf("search_tools: %+v %v", sr, err)
	}
	var found struct{ Tools []*mcp.Tool }
	if err := json.Unmarshal([]byte(sr.Content[0].(*mcp.TextContent).Text), &found); err != nil || len(found.Tools) == 0 {
		t.Fatalf("search_tools result %v: %v", sr.Content[0], err)
	}
	seen := false
	for _, tool := range found.Tools {
		if tool.Name != "mcp__b__show" {
			continue
		}
		seen = true
		if ui, _ := tool.Meta["ui"].(map[string]any); ui["resourceUri"] != "ui://mcphost/b/app/view.html" {
			t.Errorf("search_tools: %s ui.resourceUri %v, want ui://mcphost/b/app/view.html", tool.Name, ui["resourceUri"])
		}
	}
	if !seen {
		t.Errorf("search_tools found %v, not mcp__b__show", found.Tools)
	}
	// The registry's definitions are left as the servers gave them.
	tools, _ := h.Tools(ctx)
	for _, tool := range tools {
		if ui, _ := tool.Meta["ui"].(map[string]any); tool.Original == "show" && ui["resourceUri"] != shared {
			t.Errorf("registry's %s: ui.resourceUri %v, want %s", tool.Name, ui["resourceUri"], shared)
		}
	}
}
