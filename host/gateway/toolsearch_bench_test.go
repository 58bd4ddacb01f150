package gateway_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/pkoukk/tiktoken-go"
	tiktokenloader "github.com/pkoukk/tiktoken-go-loader"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/gateway"
	"github.com/mcphost/mcphost/host/toolsearch"
	"github.com/mcphost/mcphost/internal/testing/toolcatalog"
)

// BenchmarkToolSearch measures `serve --tool-search` on the benchmark
// catalogue (internal/testing/toolcatalog: 50 servers, 1,000 tools, served over
// streamable HTTP): the tokens a client's model is given (o200k_base, the
// tokenizer of OpenAI's current models) by the full tools/list of a plain
// gateway against the search path — the tools/list of the search mode (its
// two tools) plus one search_tools result, averaged over the catalogue's
// queries; recall@1 and recall@5 of those searches (the share of queries
// whose right tool is first, or among the five results), on all the
// queries and on those that share no word with the right tool's name
// (-noshared: many queries name their tool, which flatters a lexical
// ranker); the time to build
// the index of the 1,000 tools; and the time of one search_tools call
// through the gateway (the loop: a go-sdk client on an in-memory
// connection, the catalogue's queries in turn).
func BenchmarkToolSearch(b *testing.B) {
	ctx := context.Background()
	h := catalogueHost(b)
	plain, searching := gateway.New(h, nil), gateway.New(h, &gateway.Options{ToolSearch: true})
	b.Cleanup(func() { plain.Close(); searching.Close() })
	for _, g := range []*gateway.Gateway{plain, searching} {
		if p := g.Sync(ctx); len(p) > 0 {
			b.Fatal(p)
		}
	}
	tiktoken.SetBpeLoader(tiktokenloader.NewOfflineLoader())
	enc, err := tiktoken.GetEncoding("o200k_base")
	if err != nil {
		b.Fatal(err)
	}
	tokens := func(v any) int {
		j, err := json.Marshal(v)
		if err != nil {
			b.Fatal(err)
		}
		return len(enc.Encode(string(j), nil, nil))
	}

	// The full list, as a plain gateway's client receives it.
	var all []*mcp.Tool
	for t, err := range inMemoryClient(b, plain).Tools(ctx, nil) {
		if err != nil {
			b.Fatal(err)
		}
		all = append(all, t)
	}
	if len(all) != 1000 {
		b.Fatalf("the plain gateway lists %d tools, want 1000", len(all))
	}
	full := tokens(all)

	// The search path: the search mode's list, and a search per query.
	cs := inMemoryClient(b, searching)
	lr, err := cs.ListTools(ctx, nil)
	if err != nil {
		b.Fatal(err)
	}
	listed := tokens(lr.Tools)
	queries := toolcatalog.Queries()
	var results int
	var tally toolcatalog.Tally
	for _, q := range queries {
		text, names := searchCall(b, cs, q.Text)
		results += len(enc.Encode(text, nil, nil))
		tally.Add(q, names, toolsearch.SharedTerms)
	}
	n := float64(len(queries))
	at1, at5, dAt1, dAt5 := tally.Recall()
	if tally.Disjoint == 0 {
		b.Fatal("no query shares no word with its tool's name")
	}

	// Building the index of the 1,000 tools (what a registry change costs).
	tools, _ := h.Tools(ctx)
	const builds = 20
	start := time.Now()
	for range builds {
		toolsearch.New(tools, nil)
	}
	build := time.Since(start) / builds

	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: gateway.SearchToolName, Arguments: map[string]any{"query": queries[i%len(queries)].Text}})
		if err != nil || res.IsError {
			b.Fatal(err, res)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N), "query-µs")
	b.ReportMetric(float64(full), "tokens-full")
	b.ReportMetric(float64(listed)+float64(results)/n, "tokens-search")
	b.ReportMetric(float64(listed), "tokens-list")
	b.ReportMetric(100*at1, "recall@1-%")
	b.ReportMetric(100*at5, "recall@5-%")
	b.ReportMetric(n, "queries")
	// The same on the queries that share no word with the name of a tool
	// that answers them: the ones a ranker cannot find by the name alone.
	b.ReportMetric(100*dAt1, "recall@1-noshared-%")
	b.ReportMetric(100*dAt5, "recall@5-noshared-%")
	b.ReportMetric(float64(tally.Disjoint), "queries-noshared")
	b.ReportMetric(float64(build.Microseconds()), "build-µs")
}

// searchCall calls search_tools and returns its text and the names found.
func searchCall(b *testing.B, cs *mcp.ClientSession, query string) (string, []string) {
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: gateway.SearchToolName, Arguments: map[string]any{"query": query}})
	if err != nil || res.IsError {
		b.Fatalf("search_tools %q: %v %+v", query, err, res)
	}
	text := res.Content[0].(*mcp.TextContent).Text
	var f found
	if err := json.Unmarshal([]byte(text), &f); err != nil {
		b.Fatal(err)
	}
	return text, f.names()
}

// catalogueHost is a host connected to the catalogue's 50 servers, each a
// go-sdk server on streamable HTTP (one listener, a path each).
func catalogueHost(b *testing.B) *host.Host {
	b.Helper()
	byPath := map[string]*mcp.Server{}
	for _, s := range toolcatalog.Servers() {
		srv := mcp.NewServer(&mcp.Implementation{Name: s.Name}, nil)
		for _, t := range s.Tools {
			srv.AddTool(t, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil
			})
		}
		byPath["/"+s.Name] = srv
	}
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(r *http.Request) *mcp.Server { return byPath[r.URL.Path] }, nil))
	var servers []*config.Server
	for _, name := range toolcatalog.Names() {
		servers = append(servers, &config.Server{Name: name, Transport: config.TransportHTTP, URL: hs.URL + "/" + name, Approved: true, ConnectTimeout: 10 * time.Second})
	}
	ctx, cancel := context.WithCancel(context.Background())
	h, err := host.New(&config.Config{Servers: servers, DefaultMode: "allow_all"}, &host.Options{OutputDir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		cancel()
		h.Close()
		hs.CloseClientConnections()
		hs.Close()
	})
	h.ConnectAll(ctx, nil)
	for _, st := range h.Servers(ctx) {
		if st.Error != "" || st.Tools != toolcatalog.ToolsPerServer {
			b.Fatalf("server %s: %d tools, %s", st.Name, st.Tools, strings.TrimSpace(st.Error))
		}
	}
	return h
}

// inMemoryClient connects a go-sdk client to g's server.
func inMemoryClient(b *testing.B, g *gateway.Gateway) *mcp.ClientSession {
	b.Helper()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := g.Server().Connect(context.Background(), st, nil)
	if err != nil {
		b.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench"}, nil).Connect(context.Background(), ct, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		cs.Close()
		ss.Close()
	})
	return cs
}
