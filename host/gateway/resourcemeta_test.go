package gateway_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"reflect"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host/config"
)

// widgetURI is the MCP Apps resource both servers of widgetServers offer.
const widgetURI = "ui://widget/app.html"

// widgetServers are two go-sdk servers, a and b, over streamable HTTP, each
// with a tool "open" whose _meta names widgetURI, that resource (its own
// HTML: "<p>NAME</p>"), a template and a prompt, all saying everything a
// definition can (title, icons, _meta, annotations, size, MIME type), and
// reads and prompts answering with _meta.
func widgetServers(t *testing.T) []*config.Server {
	t.Helper()
	var out []*config.Server
	for _, name := range []string{"a", "b"} {
		s := mcp.NewServer(&mcp.Implementation{Name: name, Version: "1"}, nil)
		s.AddTool(&mcp.Tool{Name: "open", InputSchema: map[string]any{"type": "object"},
			Meta: mcp.Meta{"ui": map[string]any{"resourceUri": widgetURI}}},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{}, nil
			})
		html := "<p>" + name + "</p>"
		s.AddResource(widgetResource(), func(_ context.Context, r *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Meta: mcp.Meta{"read/by": name, "io.modelcontextprotocol/serverInfo": map[string]any{"name": "x"}},
				Contents: []*mcp.ResourceContents{{URI: r.Params.URI, MIMEType: "text/html;profile=mcp-app", Text: html,
					Meta: mcp.Meta{"ui": map[string]any{"csp": map[string]any{"connectDomains": []any{"https://api.example.com"}}}}}}}, nil
		})
		s.AddResourceTemplate(widgetTemplate(), func(_ context.Context, r *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: r.Params.URI, Text: "log"}}}, nil
		})
		s.AddPrompt(&mcp.Prompt{Name: "brief"}, func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Meta: mcp.Meta{"prompt/by": name},
				Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "hi", Meta: mcp.Meta{"c": 1}}}}}, nil
		})
		hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
		t.Cleanup(hs.Close)
		out = append(out, &config.Server{Name: name, Transport: config.TransportHTTP, URL: hs.URL, Approved: true, ConnectTimeout: 5 * time.Second})
	}
	return out
}

func widgetAnnotations() *mcp.Annotations {
	return &mcp.Annotations{Audience: []mcp.Role{"user"}, Priority: 0.5, LastModified: "2026-11-28T10:00:00Z"}
}

func widgetResource() *mcp.Resource {
	return &mcp.Resource{URI: widgetURI, Name: "app", Title: "The widget", Description: "A widget.", MIMEType: "text/html;profile=mcp-app",
		Size: 42, Annotations: widgetAnnotations(), Icons: metaIcons(), Meta: metaMeta()}
}

func widgetTemplate() *mcp.ResourceTemplate {
	return &mcp.ResourceTemplate{URITemplate: "file:///logs/{day}", Name: "logs", Title: "Logs of a day", Description: "Logs.",
		MIMEType: "text/plain", Annotations: widgetAnnotations(), Icons: metaIcons(), Meta: metaMeta()}
}

// TestResourceDefinitionsAndAppsEndToEnd: through the gateway's HTTP front,
// for clients of both eras, resources and templates keep title, icons,
// _meta (less reserved members), annotations, size and MIME type (served
// under qualified URIs, as two servers offer them); each server's MCP Apps
// tool names its own server's widget, whose read returns that server's
// HTML with its _meta and the contents' _meta; prompts/get keeps _meta.
func TestResourceDefinitionsAndAppsEndToEnd(t *testing.T) {
	t.Parallel()
	p := ptServe(t, ptOptions{servers: widgetServers(t)})
	if len(p.problems) != 0 {
		t.Fatalf("problems %v", p.problems)
	}
	ctx := context.Background()
	for _, version := range protocols {
		t.Run(version, func(t *testing.T) {
			t.Parallel()
			cs := p.dial(t, version, nil)
			rl, err := cs.ListResources(ctx, nil)
			if err != nil || len(rl.Resources) != 2 {
				t.Fatalf("resources/list: %+v %v", rl, err)
			}
			for _, r := range rl.Resources {
				want := widgetResource()
				want.URI, want.Meta = r.URI, passedMeta
				if r.URI != "ui://mcphost/a/widget/app.html" && r.URI != "ui://mcphost/b/widget/app.html" || !reflect.DeepEqual(r, want) {
					t.Errorf("resources/list: %+v\nwant %+v", r, want)
				}
			}
			tl, err := cs.ListResourceTemplates(ctx, nil)
			if err != nil || len(tl.ResourceTemplates) != 2 {
				t.Fatalf("resources/templates/list: %+v %v", tl, err)
			}
			for _, rt := range tl.ResourceTemplates {
				want := widgetTemplate()
				want.URITemplate, want.Meta = rt.URITemplate, passedMeta
				if !reflect.DeepEqual(rt, want) {
					t.Errorf("resources/templates/list: %+v\nwant %+v", rt, want)
				}
			}
			tools, err := cs.ListTools(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			uris := map[string]string{}
			for _, tool := range tools.Tools {
				ui, _ := tool.Meta["ui"].(map[string]any)
				uri, _ := ui["resourceUri"].(string)
				uris[tool.Name] = uri
			}
			for _, name := range []string{"a", "b"} {
				uri := uris["mcp__"+name+"__open"]
				if uri != "ui://mcphost/"+name+"/widget/app.html" {
					t.Errorf("mcp__%s__open: ui.resourceUri %q, want its own server's", name, uri)
					continue
				}
				r, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
				if err != nil || len(r.Contents) != 1 {
					t.Fatalf("read %s: %+v %v", uri, r, err)
				}
				c := r.Contents[0]
				if c.Text != "<p>"+name+"</p>" || c.MIMEType != "text/html;profile=mcp-app" || c.Meta["ui"] == nil {
					t.Errorf("read %s: %+v, want %s's widget, with its _meta", uri, c, name)
				}
				if si, _ := r.Meta["io.modelcontextprotocol/serverInfo"].(map[string]any); si["name"] == "x" {
					t.Errorf("read %s: the server's reserved _meta passed: %v", uri, r.Meta)
				}
				if r.Meta["read/by"] != name {
					t.Errorf("read %s: result _meta %v, want read/by %s", uri, r.Meta, name)
				}
				g, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "mcp__" + name + "__brief"})
				if err != nil || g.Meta["prompt/by"] != name || len(g.Messages) != 1 {
					t.Errorf("prompts/get of %s: %+v %v, want _meta prompt/by", name, g, err)
				}
			}
		})
	}
}
