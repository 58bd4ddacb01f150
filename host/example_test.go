package host_test

import (
	"context"
	"errors"
	"fmt"
	"log"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/config"
)

// calculator is a built-in MCP server of the program: it runs in the same
// process, linked to the host in memory.
func calculator() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "calc", Version: "1.0.0"}, nil)
	type pair struct {
		A float64 `json:"a" jsonschema:"the first number"`
		B float64 `json:"b" jsonschema:"the second number"`
	}
	type sum struct {
		Sum float64 `json:"sum"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "add", Description: "Adds two numbers.", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(_ context.Context, _ *mcp.CallToolRequest, in pair) (*mcp.CallToolResult, sum, error) {
			return nil, sum{in.A + in.B}, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "divide", Description: "Divides a by b."},
		func(_ context.Context, _ *mcp.CallToolRequest, in pair) (*mcp.CallToolResult, any, error) {
			if in.B == 0 {
				return nil, nil, fmt.Errorf("division by zero")
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprint(in.A / in.B)}}}, nil, nil
		})
	return s
}

// The README's library snippet: load the configuration, start a host with a
// built-in server, list the tools and call one.
func Example() {
	ctx := context.Background()
	cfg, diags := config.Load(&config.LoadOptions{
		Files:   []string{"testdata/example.hcl"},                 // servers, permissions, settings
		Dynamic: []*config.Server{config.InProcessServer("calc")}, // a built-in server
	})
	if diags.HasErrors() {
		log.Fatal(diags)
	}
	h, err := host.New(cfg, &host.Options{
		InProcess: map[string]*mcp.Server{"calc": calculator()},
	})
	if err != nil {
		log.Fatal(err)
	}
	defer h.Close()

	tools, problems := h.Tools(ctx) // every server's tools, as mcp__SERVER__TOOL
	for _, t := range tools {
		fmt.Println(t.Name)
	}
	for _, p := range problems {
		fmt.Println("problem:", p)
	}
	res, err := h.CallTool(ctx, "mcp__calc__add", map[string]any{"a": 2, "b": 3}, nil)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Content[0].(*mcp.TextContent).Text)
	// Output:
	// mcp__calc__add
	// mcp__calc__divide
	// {"sum":5}
}

// New takes a loaded configuration; nothing connects until first used.
func ExampleNew() {
	cfg, diags := config.Load(&config.LoadOptions{
		Files:   []string{"testdata/example.hcl"},
		Dynamic: []*config.Server{config.InProcessServer("calc")},
	})
	if diags.HasErrors() {
		log.Fatal(diags)
	}
	h, err := host.New(cfg, &host.Options{InProcess: map[string]*mcp.Server{"calc": calculator()}})
	if err != nil {
		log.Fatal(err)
	}
	defer h.Close()
	for _, s := range h.Servers(context.Background()) {
		fmt.Println(s.Name, s.Transport, s.State)
	}
	// An in-process server must be in the configuration too.
	_, err = host.New(cfg, &host.Options{InProcess: map[string]*mcp.Server{"other": calculator()}})
	fmt.Println(err)
	// Output:
	// calc inprocess pending
	// in-process server "calc" has no implementation: give it in Options.InProcess
}

// Tools lists the registry: canonical names, descriptions and the
// properties derived from the servers' annotations.
func ExampleHost_Tools() {
	h := exampleHost(nil)
	defer h.Close()
	tools, _ := h.Tools(context.Background())
	for _, t := range tools {
		fmt.Printf("%s (server %s, tool %s): %s read-only=%v\n", t.Name, t.Server, t.Original, t.Description, t.ReadOnly)
	}
	// Output:
	// mcp__calc__add (server calc, tool add): Adds two numbers. read-only=true
	// mcp__calc__divide (server calc, tool divide): Divides a by b. read-only=false
}

// CallTool checks permissions, connects if needed and calls the tool. A
// result with isError set comes with a *host.ToolError; other errors (an
// unknown tool, a denied call, a server down) have no result.
func ExampleHost_CallTool() {
	h := exampleHost(nil)
	defer h.Close()
	ctx := context.Background()
	res, err := h.CallTool(ctx, "mcp__calc__divide", map[string]any{"a": 1, "b": 4}, nil)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(host.TextOf(res.Content))
	res, err = h.CallTool(ctx, "mcp__calc__divide", map[string]any{"a": 1, "b": 0}, nil)
	var te *host.ToolError
	fmt.Println(errors.As(err, &te), res.IsError, err)
	_, err = h.CallTool(ctx, "mcp__calc__nope", nil, nil)
	fmt.Println(err)
	// Output:
	// 0.25
	// true true tool mcp__calc__divide reported an error: division by zero
	// no such tool "mcp__calc__nope" on server "calc"
}

// OnElicit answers a server's questions during a call: here a tool that
// asks for confirmation in the multi-round-trip form of 2026-07-28 (the
// host retries the call with the answer; for earlier protocol versions the
// server sends elicitation/create and OnElicit answers it the same way).
func ExampleOptions_onElicit() {
	s := calculator()
	mcp.AddTool(s, &mcp.Tool{Name: "reset", Description: "Resets the memory, once confirmed."},
		func(_ context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			if r, ok := req.Params.InputResponses["confirm"].(*mcp.ElicitResult); ok {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "reset: " + r.Action}}}, nil, nil
			}
			return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"confirm": &mcp.ElicitParams{
				Mode: "form", Message: "Reset the memory?",
				RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{}},
			}}}, nil, nil
		})
	h := exampleHost(&host.Options{
		InProcess: map[string]*mcp.Server{"calc": s},
		OnElicit: func(_ context.Context, server string, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			fmt.Printf("%s asks: %s\n", server, req.Params.Message)
			return &mcp.ElicitResult{Action: "accept"}, nil
		},
	})
	defer h.Close()
	res, err := h.CallTool(context.Background(), "mcp__calc__reset", nil, nil)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Content[0].(*mcp.TextContent).Text)
	// Output:
	// calc asks: Reset the memory?
	// reset: accept
}

// exampleHost is the examples' host: the calculator, in process.
func exampleHost(o *host.Options) *host.Host {
	cfg, diags := config.Load(&config.LoadOptions{
		Files:   []string{"testdata/example.hcl"},
		Dynamic: []*config.Server{config.InProcessServer("calc")},
	})
	if diags.HasErrors() {
		log.Fatal(diags)
	}
	if o == nil {
		o = &host.Options{InProcess: map[string]*mcp.Server{"calc": calculator()}}
	}
	h, err := host.New(cfg, o)
	if err != nil {
		log.Fatal(err)
	}
	return h
}
