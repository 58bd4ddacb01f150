// Package demoserver is the small MCP server bundled with mcphost for the
// example configuration, the README's main job and the tests. It runs over
// stdio, streamable HTTP or SSE and offers a few tools that exercise the host:
// echo, add, slow (progress), large (oversized output), fail (isError),
// add_tool (tools/list_changed), stats (call counts) and crash. With
// Options.Passthrough (-passthrough) it also offers what a gateway passes
// through besides tools: a resource whose content names the server, a
// resource template and prompt arguments with completions, resource
// subscriptions (the touch tool), an elicitation during a call (ask, and
// ask_old as tools of protocol versions before 2026-07-28 ask), a roots/list
// request (roots_old) and log messages (log). With Options.Schemas
// (-schemas) it offers tools whose input schemas LLM tool formats restrict
// (schema_*), for the tests of host/llmtools.
package demoserver

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/internal/wsmcp"
)

// Options configures the server.
type Options struct {
	// Name is the server's implementation name. OPTIONAL: "mcphost-demo".
	Name string
	// Exit is called by the crash tool. OPTIONAL: without it, crash is not offered.
	Exit func(code int)
	// EchoDescription replaces the echo tool's description (to test pinning). OPTIONAL.
	EchoDescription string
	// ExtraTools are more echo tools, by name. OPTIONAL.
	ExtraTools []string
	// ExtraPrompts are more prompts, by name; each says its name and the
	// server's. OPTIONAL.
	ExtraPrompts []string
	// ExtraResources are more text resources, by URI; each says its URI and
	// the server's name. OPTIONAL.
	ExtraResources []string
	// ProtocolVersions narrows the protocol versions the server negotiates
	// (to test a server of an older version). OPTIONAL: all the go-sdk's.
	ProtocolVersions []string
	// Passthrough adds the features a gateway passes through besides tools
	// (see the package comment). OPTIONAL.
	Passthrough bool
	// NoInitialize refuses initialize (method not found), as a server of
	// 2026-07-28 only may: clients must use server/discover. OPTIONAL.
	NoInitialize bool
	// Schemas adds tools whose input schemas LLM tool formats restrict
	// (schema_*: see schemaTools). OPTIONAL.
	Schemas bool
	// Skills declares the Skills extension and serves two skills (see
	// skills.go). OPTIONAL.
	Skills bool
	// SkillsClientRequired refuses the Skills methods to clients that did
	// not declare the extension, as some servers do. OPTIONAL.
	SkillsClientRequired bool
}

// Definitions is the JSON of the -definitions file: what a run of the server
// offers, so a test can change it between runs (a restart with other tools).
type Definitions struct {
	EchoDescription string   `json:"echo_description,omitempty"`
	ExtraTools      []string `json:"extra_tools,omitempty"`
	ExtraPrompts    []string `json:"extra_prompts,omitempty"`
	ExtraResources  []string `json:"extra_resources,omitempty"`
}

type echoArgs struct {
	Message string `json:"message" jsonschema:"the text to echo back"`
}
type addArgs struct {
	A float64 `json:"a" jsonschema:"first addend"`
	B float64 `json:"b" jsonschema:"second addend"`
}
type addOut struct {
	Sum float64 `json:"sum"`
}
type slowArgs struct {
	Milliseconds int `json:"milliseconds,omitempty" jsonschema:"how long to work, default 1000"`
	Steps        int `json:"steps,omitempty" jsonschema:"progress notifications to send, default 5"`
}
type largeArgs struct {
	Chars int `json:"chars,omitempty" jsonschema:"length of the text to return, default 150000"`
}
type failArgs struct {
	Message string `json:"message,omitempty" jsonschema:"the error text"`
}
type addToolArgs struct {
	Name string `json:"name" jsonschema:"name of the new tool (it echoes its input)"`
}
type crashArgs struct {
	Code int `json:"code,omitempty" jsonschema:"exit status"`
}
type touchArgs struct {
	URI string `json:"uri" jsonschema:"the resource to report updated"`
}
type askArgs struct {
	Question string `json:"question,omitempty" jsonschema:"what to ask the user"`
}
type logArgs struct {
	Level   string `json:"level,omitempty" jsonschema:"the log level, default info"`
	Logger  string `json:"logger,omitempty" jsonschema:"the logger name"`
	Message string `json:"message" jsonschema:"the message to log"`
	AfterMS int    `json:"after_ms,omitempty" jsonschema:"how long to keep the call open after logging, in milliseconds"`
}

// askKey names the ask tool's question among its input requests.
const askKey = "answer"

// Completion candidates: a template variable's and a prompt argument's.
var (
	itemCandidates = []string{"apple", "apricot", "banana"}
	nameCandidates = []string{"Ada", "Alan", "Grace"}
)

// New returns the demo server.
func New(opts *Options) *mcp.Server {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Name == "" {
		o.Name = "mcphost-demo"
	}
	var mu sync.Mutex
	counts := map[string]int{} // tool calls, and (un)subscribe requests as "resources/(un)subscribe"
	count := func(name string) {
		mu.Lock()
		counts[name]++
		mu.Unlock()
	}
	sopts := &mcp.ServerOptions{Instructions: "A demo server bundled with mcphost.", SupportedProtocolVersions: o.ProtocolVersions}
	if o.Passthrough {
		sopts.CompletionHandler = completions(o.Name)
		sopts.SubscribeHandler = func(context.Context, *mcp.SubscribeRequest) error { count("resources/subscribe"); return nil }
		sopts.UnsubscribeHandler = func(context.Context, *mcp.UnsubscribeRequest) error { count("resources/unsubscribe"); return nil }
	}
	if o.Skills {
		var settings map[string]any
		json.Unmarshal(skillsSettings, &settings)
		sopts.Capabilities = &mcp.ServerCapabilities{Logging: &mcp.LoggingCapabilities{}, Extensions: map[string]any{skillsExtension: settings}}
	}
	s := mcp.NewServer(&mcp.Implementation{Name: o.Name, Version: "1.0.0"}, sopts)
	if o.Skills {
		addSkills(s, o.Name, o.SkillsClientRequired)
	}
	if o.NoInitialize {
		s.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
			return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
				if method == "initialize" {
					return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "initialize is not supported: use server/discover (2026-07-28)"}
				}
				return next(ctx, method, req)
			}
		})
	}
	readOnly := &mcp.ToolAnnotations{ReadOnlyHint: true, Title: "Echo"}
	echoDesc := "Echoes the message back."
	if o.EchoDescription != "" {
		echoDesc = o.EchoDescription
	}
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: echoDesc, Annotations: readOnly},
		func(_ context.Context, _ *mcp.CallToolRequest, a echoArgs) (*mcp.CallToolResult, any, error) {
			count("echo")
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: a.Message}}}, nil, nil
		})
	for _, name := range o.ExtraTools {
		mcp.AddTool(s, &mcp.Tool{Name: name, Description: "An extra echo tool."},
			func(_ context.Context, _ *mcp.CallToolRequest, a echoArgs) (*mcp.CallToolResult, any, error) {
				count(name)
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: name + ": " + a.Message}}}, nil, nil
			})
	}
	mcp.AddTool(s, &mcp.Tool{Name: "add", Description: "Adds two numbers.", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(_ context.Context, _ *mcp.CallToolRequest, a addArgs) (*mcp.CallToolResult, addOut, error) {
			count("add")
			return nil, addOut{Sum: a.A + a.B}, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "slow", Description: "Works for a while, reporting progress."},
		func(ctx context.Context, req *mcp.CallToolRequest, a slowArgs) (*mcp.CallToolResult, any, error) {
			count("slow")
			if a.Milliseconds <= 0 {
				a.Milliseconds = 1000
			}
			if a.Steps <= 0 {
				a.Steps = 5
			}
			step := time.Duration(a.Milliseconds) * time.Millisecond / time.Duration(a.Steps)
			token := req.Params.GetProgressToken()
			for i := 1; i <= a.Steps; i++ {
				select {
				case <-ctx.Done():
					count("slow_cancelled") // the client sent notifications/cancelled
					return nil, nil, ctx.Err()
				case <-time.After(step):
				}
				if token != nil {
					req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{
						ProgressToken: token, Progress: float64(i), Total: float64(a.Steps),
						Message: fmt.Sprintf("step %d of %d", i, a.Steps),
					})
				}
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("done after %d steps", a.Steps)}}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "large", Description: "Returns a long text."},
		func(_ context.Context, _ *mcp.CallToolRequest, a largeArgs) (*mcp.CallToolResult, any, error) {
			count("large")
			if a.Chars <= 0 {
				a.Chars = 150_000
			}
			if a.Chars > 50<<20 {
				return nil, nil, errors.New("chars must be at most 52428800")
			}
			line := "0123456789abcdefghijklmnopqrstuvwxyz\n"
			text := strings.Repeat(line, a.Chars/len(line)+1)[:a.Chars]
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "fail", Description: "Always fails (isError)."},
		func(_ context.Context, _ *mcp.CallToolRequest, a failArgs) (*mcp.CallToolResult, any, error) {
			count("fail")
			if a.Message == "" {
				a.Message = "this tool always fails"
			}
			return nil, nil, errors.New(a.Message)
		})
	mcp.AddTool(s, &mcp.Tool{Name: "add_tool", Description: "Adds an echo tool with the given name (the server then sends tools/list_changed)."},
		func(_ context.Context, _ *mcp.CallToolRequest, a addToolArgs) (*mcp.CallToolResult, any, error) {
			count("add_tool")
			if a.Name == "" {
				return nil, nil, errors.New("name is required")
			}
			name := a.Name
			mcp.AddTool(s, &mcp.Tool{Name: name, Description: "Added at run time; echoes its message."},
				func(_ context.Context, _ *mcp.CallToolRequest, a echoArgs) (*mcp.CallToolResult, any, error) {
					count(name)
					return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: name + ": " + a.Message}}}, nil, nil
				})
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "added " + name}}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "stats", Description: "Reports how often each tool was called (and, with -passthrough, how often resources were subscribed to and unsubscribed from).", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(_ context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, map[string]int, error) {
			mu.Lock()
			defer mu.Unlock()
			out := map[string]int{}
			for k, v := range counts {
				out[k] = v
			}
			return nil, out, nil
		})
	if o.Exit != nil {
		mcp.AddTool(s, &mcp.Tool{Name: "crash", Description: "Exits the server process at once (for crash tests)."},
			func(_ context.Context, _ *mcp.CallToolRequest, a crashArgs) (*mcp.CallToolResult, any, error) {
				fmt.Fprintln(os.Stderr, "demo server: crashing on request")
				o.Exit(a.Code + 1)
				return nil, nil, nil
			})
	}
	s.AddResource(&mcp.Resource{URI: "demo://readme", Name: "readme", MIMEType: "text/plain", Description: "A short text."},
		func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "text/plain", Text: "This is the mcphost demo server."}}}, nil
		})
	s.AddResource(&mcp.Resource{URI: "demo://pixel.png", Name: "pixel", MIMEType: "image/png", Description: "A 1x1 PNG."},
		func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "image/png", Blob: pixelPNG}}}, nil
		})
	s.AddPrompt(&mcp.Prompt{Name: "greet", Description: "Greets someone.", Arguments: []*mcp.PromptArgument{{Name: "name", Required: true}}},
		func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "Say hello to " + req.Params.Arguments["name"] + "."}}}}, nil
		})
	for _, name := range o.ExtraPrompts {
		s.AddPrompt(&mcp.Prompt{Name: name, Description: "An extra prompt."},
			func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
				return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: name + " of " + o.Name}}}}, nil
			})
	}
	for _, uri := range o.ExtraResources {
		s.AddResource(&mcp.Resource{URI: uri, Name: uri, MIMEType: "text/plain", Description: "An extra resource."},
			func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
				return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "text/plain", Text: uri + " of " + o.Name}}}, nil
			})
	}
	if o.Passthrough {
		addPassthrough(s, o.Name, count)
	}
	if o.Schemas {
		addSchemaTools(s, count)
	}
	return s
}

// addPassthrough adds what a gateway passes through besides tools.
func addPassthrough(s *mcp.Server, name string, count func(string)) {
	s.AddResource(&mcp.Resource{URI: "demo://whoami", Name: "whoami", MIMEType: "text/plain", Description: "Names the server."},
		func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "text/plain", Text: "I am " + name + "."}}}, nil
		})
	s.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: "demo://items/{item}", Name: "item", MIMEType: "text/plain", Description: "An item, by name (completable)."},
		func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			item := strings.TrimPrefix(req.Params.URI, "demo://items/")
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "text/plain", Text: "item " + item + " of " + name}}}, nil
		})
	s.AddPrompt(&mcp.Prompt{Name: "introduce", Description: "Introduces someone to this server (completable).", Arguments: []*mcp.PromptArgument{{Name: "who", Required: true}}},
		func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "Introduce " + req.Params.Arguments["who"] + " to " + name + "."}}}}, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "touch", Description: "Reports a resource updated (notifications/resources/updated to its subscribers)."},
		func(ctx context.Context, _ *mcp.CallToolRequest, a touchArgs) (*mcp.CallToolResult, any, error) {
			count("touch")
			if a.URI == "" {
				return nil, nil, errors.New("uri is required")
			}
			if err := s.ResourceUpdated(ctx, &mcp.ResourceUpdatedNotificationParams{URI: a.URI}); err != nil {
				return nil, nil, err
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "touched " + a.URI}}}, nil, nil
		})
	// ask is written in the multi-round-trip form (input requests, SEP-2322):
	// a 2026-07-28 client gets them in the result and retries with the
	// answer; for a client of an earlier version the go-sdk sends
	// elicitation/create during the call and calls the handler again with
	// the answer. (ServerSession.Elicit is refused on 2026-07-28 sessions.)
	mcp.AddTool(s, &mcp.Tool{Name: "ask", Description: "Asks the user a question (form elicitation) and returns the answer."},
		func(_ context.Context, req *mcp.CallToolRequest, a askArgs) (*mcp.CallToolResult, any, error) {
			if resp, ok := req.Params.InputResponses[askKey]; ok {
				count("ask")
				er, _ := resp.(*mcp.ElicitResult)
				if er == nil || er.Action != "accept" {
					action := "no answer"
					if er != nil {
						action = er.Action
					}
					return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "the user did not answer (" + action + ")"}}}, nil, nil
				}
				answer, _ := er.Content["answer"].(string)
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "answer: " + answer}}}, nil, nil
			}
			if a.Question == "" {
				a.Question = "What is your answer?"
			}
			return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{askKey: &mcp.ElicitParams{
				Mode:    "form",
				Message: a.Question,
				RequestedSchema: map[string]any{
					"type":       "object",
					"properties": map[string]any{"answer": map[string]any{"type": "string"}},
					"required":   []string{"answer"},
				},
			}}}, nil, nil
		})
	// client_capabilities says what the client told the server at
	// initialize (sessions before 2026-07-28).
	mcp.AddTool(s, &mcp.Tool{Name: "client_capabilities", Description: "Returns the client capabilities of the session's initialize, as JSON."},
		func(_ context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			var caps any
			if p := req.Session.InitializeParams(); p != nil {
				caps = p.Capabilities
			}
			b, err := json.Marshal(caps)
			if err != nil {
				return nil, nil, err
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}}, nil, nil
		})
	// ask_old is ask as tools written for protocol versions before
	// 2026-07-28 are: it sends elicitation/create of its own during the call
	// (ServerSession.Elicit), which the go-sdk refuses on 2026-07-28
	// sessions. The form has an optional field with a default.
	mcp.AddTool(s, &mcp.Tool{Name: "ask_old", Description: "Asks the user a question by an elicitation/create request of its own (protocol versions before 2026-07-28) and returns the answer."},
		func(ctx context.Context, req *mcp.CallToolRequest, a askArgs) (*mcp.CallToolResult, any, error) {
			count("ask_old")
			if a.Question == "" {
				a.Question = "What is your answer?"
			}
			er, err := req.Session.Elicit(ctx, &mcp.ElicitParams{
				Mode:    "form",
				Message: a.Question,
				RequestedSchema: map[string]any{
					"type": "object",
					"properties": map[string]any{
						"answer": map[string]any{"type": "string"},
						"mood":   map[string]any{"type": "string", "default": "calm"},
					},
					"required": []string{"answer"},
				},
			})
			if err != nil {
				return nil, nil, fmt.Errorf("asking: %w", err)
			}
			if er.Action != "accept" {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "the user did not answer (" + er.Action + ")"}}}, nil, nil
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("answer: %v (mood: %v)", er.Content["answer"], er.Content["mood"])}}}, nil, nil
		})
	// roots_old asks the client for its roots by a roots/list request of its
	// own, as tools written for protocol versions before 2026-07-28 do.
	mcp.AddTool(s, &mcp.Tool{Name: "roots_old", Description: "Lists the client's roots by a roots/list request of its own (protocol versions before 2026-07-28)."},
		func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			count("roots_old")
			res, err := req.Session.ListRoots(ctx, nil)
			if err != nil {
				return nil, nil, fmt.Errorf("listing roots: %w", err)
			}
			uris := make([]string, 0, len(res.Roots))
			for _, r := range res.Roots {
				uris = append(uris, r.URI)
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "roots: " + strings.Join(uris, " ")}}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "log", Description: "Sends a log message (notifications/message) at the client's log level or above."},
		func(ctx context.Context, req *mcp.CallToolRequest, a logArgs) (*mcp.CallToolResult, any, error) {
			count("log")
			if a.Level == "" {
				a.Level = "info"
			}
			err := req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: mcp.LoggingLevel(a.Level), Logger: a.Logger, Data: a.Message})
			if err != nil {
				return nil, nil, err
			}
			select {
			case <-ctx.Done():
				return nil, nil, ctx.Err()
			case <-time.After(time.Duration(a.AfterMS) * time.Millisecond):
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "logged"}}}, nil, nil
		})
}

// completions completes the item template's variable and the introduce
// prompt's argument from fixed candidates; each value is suffixed with
// "@" and the server's name, so that a test sees which server answered.
func completions(server string) func(context.Context, *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
	return func(_ context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
		var candidates []string
		switch ref := req.Params.Ref; {
		case ref.Type == "ref/resource" && ref.URI == "demo://items/{item}" && req.Params.Argument.Name == "item":
			candidates = itemCandidates
		case ref.Type == "ref/prompt" && ref.Name == "introduce" && req.Params.Argument.Name == "who":
			candidates = nameCandidates
		}
		values := []string{}
		for _, c := range candidates {
			if strings.HasPrefix(c, req.Params.Argument.Value) {
				values = append(values, c+"@"+server)
			}
		}
		return &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: values, Total: len(values)}}, nil
	}
}

// pixelPNG is a 1x1 transparent PNG.
var pixelPNG = []byte{
	0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52,
	0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0x1f, 0x15, 0xc4,
	0x89, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9c, 0x63, 0x00, 0x01, 0x00, 0x00,
	0x05, 0x00, 0x01, 0x0d, 0x0a, 0x2d, 0xb4, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4e, 0x44, 0xae,
	0x42, 0x60, 0x82,
}

// Main runs the demo server as a program: stdio by default, or
// -http ADDR (streamable HTTP at /mcp), -sse ADDR (SSE at /sse),
// -ws ADDR (WebSocket at /mcp) or -tcp ADDR (a line of JSON per message).
func Main(args []string, stderr io.Writer, exit func(int)) int {
	fs := flag.NewFlagSet("mcphost-demo", flag.ContinueOnError)
	fs.SetOutput(stderr)
	httpAddr := fs.String("http", "", "serve streamable HTTP on `ADDR` (path /mcp)")
	stateless := fs.Bool("stateless", false, "with -http: serve without sessions (the go-sdk serves 2026-07-28 over HTTP only so)")
	sseAddr := fs.String("sse", "", "serve SSE on `ADDR` (path /sse)")
	wsAddr := fs.String("ws", "", "serve MCP over WebSocket on `ADDR` (path /mcp, subprotocol mcp)")
	tcpAddr := fs.String("tcp", "", "serve newline-delimited JSON-RPC on TCP `ADDR`, a session per connection (for the transport-tcp example plugin)")
	name := fs.String("name", "mcphost-demo", "implementation name to report")
	echoDesc := fs.String("echo-description", "", "replace the echo tool's description")
	defsFile := fs.String("definitions", "", "read the echo description and extra tools, prompts and resources from this JSON `FILE` at start")
	protocol := fs.String("protocol", "", "negotiate only this protocol `VERSION` (e.g. 2025-11-25)")
	passthrough := fs.Bool("passthrough", false, "also offer a resource template, completions, subscriptions (touch), elicitation (ask) and logging (log)")
	noInitialize := fs.Bool("no-initialize", false, "refuse initialize, as a server of 2026-07-28 only may (clients must use server/discover)")
	skills := fs.Bool("skills", false, "declare the Skills extension and serve two skills (skills/list, skills/get, skill:// resources)")
	skillsRequired := fs.Bool("skills-client-required", false, "with -skills: refuse the skills methods to clients that did not declare the extension")
	schemas := fs.Bool("schemas", false, "also offer tools whose input schemas LLM tool formats restrict ($ref, oneOf, enums, non-object schemas, …)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	var defs Definitions
	if *defsFile != "" {
		b, err := os.ReadFile(*defsFile)
		if err == nil {
			err = json.Unmarshal(b, &defs)
		}
		if err != nil {
			fmt.Fprintf(stderr, "mcphost-demo: -definitions: %v\n", err)
			return 2
		}
		if defs.EchoDescription != "" {
			*echoDesc = defs.EchoDescription
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var versions []string
	if *protocol != "" {
		if !slices.Contains(mcp.SupportedProtocolVersions(), *protocol) {
			fmt.Fprintf(stderr, "mcphost-demo: -protocol: unsupported version %q\n", *protocol)
			return 2
		}
		versions = []string{*protocol}
	}
	srv := New(&Options{ProtocolVersions: versions, Name: *name, Exit: exit, EchoDescription: *echoDesc, ExtraTools: defs.ExtraTools,
		ExtraPrompts: defs.ExtraPrompts, ExtraResources: defs.ExtraResources, Passthrough: *passthrough, NoInitialize: *noInitialize, Schemas: *schemas, Skills: *skills, SkillsClientRequired: *skillsRequired})
	logger := log.New(stderr, "mcphost-demo: ", 0)
	var handler http.Handler
	addr := *httpAddr
	switch {
	case *httpAddr != "":
		mux := http.NewServeMux()
		mux.Handle("/mcp", mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{Stateless: *stateless}))
		handler = mux
	case *wsAddr != "":
		addr = *wsAddr
		mux := http.NewServeMux()
		mux.Handle("/mcp", wsmcp.Handler(ctx, srv))
		handler = mux
	case *sseAddr != "":
		addr = *sseAddr
		mux := http.NewServeMux()
		mux.Handle("/sse", mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return srv }, nil))
		handler = mux
	case *tcpAddr != "":
		return serveTCP(ctx, srv, *tcpAddr, logger)
	default:
		if err := srv.Run(ctx, &mcp.StdioTransport{}); err != nil && ctx.Err() == nil {
			logger.Print(err)
			return 1
		}
		return 0
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		logger.Print(err)
		return 1
	}
	logger.Printf("listening on http://%s", ln.Addr())
	hs := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		hs.Shutdown(sctx)
	}()
	if err := hs.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		logger.Print(err)
		return 1
	}
	return 0
}

// ChildEnv is the environment variable that makes a test binary act as the
// demo server (see RunIfChild).
const ChildEnv = "MCPHOST_DEMO_CHILD"

// RunIfChild runs the demo server and exits if the process was started as one
// (ChildEnv=1). Test packages call it first in TestMain, so tests can start the
// demo server as a real child process from their own binary.
func RunIfChild() {
	if os.Getenv(ChildEnv) != "1" {
		return
	}
	os.Exit(Main(os.Args[1:], os.Stderr, os.Exit))
}
