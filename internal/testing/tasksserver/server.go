// Package tasksserver is a small MCP server that implements the 2026-07-28
// tasks extension (SEP-2663, "io.modelcontextprotocol/tasks") with exactly
// the fixture tools the official conformance suite's tasks scenarios call:
// greet, slow_compute, failing_job, protocol_error_job, confirm_delete,
// multi_input and test_tool_with_task. It exists so that those scenarios can
// be run against a server that passes them directly, and through mcphost in
// front of it (scripts/conformance.sh, part "tasks").
//
// It serves the stateless 2026-07-28 wire over HTTP ([Server.ServeHTTP]: one
// POST per request, client capabilities in each request's _meta, SEP-2243
// Mcp-Method/Mcp-Name header checks) and newline-delimited JSON-RPC over
// stdio ([Server.ServeStdio]: an initialize handshake whose capabilities
// apply to the session's requests unless a request's _meta carries its own).
//
// The JSON-RPC is written by hand on go-sdk's jsonrpc message types, not on
// go-sdk's mcp.Server: go-sdk v1.8.0 has no tasks support. Its server answers
// tasks/get, tasks/update and tasks/cancel with -32601 before any middleware
// could see them, and its CallToolResult cannot carry a CreateTaskResult
// (resultType "task" with the task's fields at the top level), so neither
// the methods nor the tool results the extension needs can be produced
// through it.
//
// The 2025-11-25 experimental tasks (the `task` parameter, capabilities.tasks,
// tasks/result, tasks/list) are not implemented: the suite has no scenario
// for them, and SEP-2663 requires tasks/result and tasks/list to be answered
// with -32601. A legacy `task` parameter on tools/call is ignored.
package tasksserver

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// Extension is the capability key of the tasks extension (SEP-2663).
const Extension = "io.modelcontextprotocol/tasks"

// Error codes beyond JSON-RPC's own.
const (
	// CodeHeaderMismatch (SEP-2243): an Mcp-Method or Mcp-Name header
	// disagrees with the request body.
	CodeHeaderMismatch = -32020
	// CodeMissingRequiredClientCapability (SEP-2575): the request needs a
	// client capability the client did not declare.
	CodeMissingRequiredClientCapability = -32021
)

// Protocol versions the server answers at; the last is the newest.
var supportedVersions = []string{"2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"}

const newestVersion = "2026-07-28"

// Options configures a Server. The zero value is usable.
type Options struct {
	// TTL is how long a task stays readable after it was created
	// (reported as ttlMs). Default 5 minutes.
	TTL time.Duration
	// PollInterval is the poll interval suggested to clients
	// (pollIntervalMs). Default 200ms.
	PollInterval time.Duration
	// JobDelay is how long failing_job, protocol_error_job and the
	// follow-up work of the input tools take. Default 300ms.
	JobDelay time.Duration
	// Now returns the current time; default time.Now.
	Now func() time.Time
}

// Server is a tasks-capable MCP server. Its tasks run in goroutines it owns:
// Close cancels them and waits for them.
type Server struct {
	opts   Options
	tools  map[string]*tool
	order  []string
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu    sync.Mutex
	tasks map[string]*task
}

// New returns a Server.
func New(opts Options) *Server {
	if opts.TTL <= 0 {
		opts.TTL = 5 * time.Minute
	}
	if opts.PollInterval <= 0 {
		opts.PollInterval = 200 * time.Millisecond
	}
	if opts.JobDelay <= 0 {
		opts.JobDelay = 300 * time.Millisecond
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &Server{opts: opts, ctx: ctx, cancel: cancel, tasks: map[string]*task{}, tools: map[string]*tool{}}
	for _, t := range fixtures(opts.JobDelay) {
		s.tools[t.name] = t
		s.order = append(s.order, t.name)
	}
	return s
}

// Close cancels the tasks still running and waits for them to end.
func (s *Server) Close() error {
	s.cancel()
	s.wg.Wait()
	return nil
}

// session is what a connection knows across requests: on stdio, the
// capabilities the client declared at initialize; over stateless HTTP,
// nothing.
type session struct {
	mu   sync.Mutex
	caps *clientCaps
}

func (ss *session) setCaps(c *clientCaps) {
	if ss == nil {
		return
	}
	ss.mu.Lock()
	ss.caps = c
	ss.mu.Unlock()
}

func (ss *session) getCaps() *clientCaps {
	if ss == nil {
		return nil
	}
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return ss.caps
}

// handle answers one request: a result or a *jsonrpc.Error.
func (s *Server) handle(ctx context.Context, ss *session, req *request) (any, error) {
	caps := req.caps
	if caps == nil {
		caps = ss.getCaps()
	}
	switch req.method {
	case "initialize":
		return s.initialize(ss, req)
	case "server/discover":
		return map[string]any{
			"resultType":        "complete",
			"cacheScope":        "public",
			"ttlMs":             0,
			"supportedVersions": supportedVersions,
			"capabilities":      serverCapabilities(),
			"serverInfo":        serverInfo(),
		}, nil
	case "ping":
		return map[string]any{}, nil
	case "tools/list":
		tools := make([]any, 0, len(s.order))
		for _, name := range s.order {
			tools = append(tools, s.tools[name].describe())
		}
		return map[string]any{"resultType": "complete", "cacheScope": "public", "ttlMs": 0, "tools": tools}, nil
	case "tools/call":
		return s.callTool(ctx, caps, req)
	case "tasks/get", "tasks/update", "tasks/cancel":
		if !caps.hasTasks() {
			return nil, missingTasksCapability()
		}
		switch req.method {
		case "tasks/get":
			return s.getTask(req.taskID)
		case "tasks/update":
			return s.updateTask(req.taskID, req.inputResponses)
		default:
			return s.cancelTask(req.taskID)
		}
	}
	return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "method not found: " + req.method}
}

func (s *Server) initialize(ss *session, req *request) (any, error) {
	var p struct {
		ProtocolVersion string      `json:"protocolVersion"`
		Capabilities    *clientCaps `json:"capabilities"`
	}
	if err := unmarshalParams(req.params, &p); err != nil {
		return nil, err
	}
	ss.setCaps(p.Capabilities)
	version := newestVersion
	for _, v := range supportedVersions {
		if v == p.ProtocolVersion {
			version = v
		}
	}
	return map[string]any{
		"protocolVersion": version,
		"capabilities":    serverCapabilities(),
		"serverInfo":      serverInfo(),
	}, nil
}

func serverCapabilities() map[string]any {
	return map[string]any{
		"tools":      map[string]any{},
		"extensions": map[string]any{Extension: map[string]any{}},
	}
}

func serverInfo() map[string]any {
	return map[string]any{"name": "mcphost-tasksserver", "version": "0.1.0"}
}

func missingTasksCapability() *jsonrpc.Error {
	return &jsonrpc.Error{
		Code:    CodeMissingRequiredClientCapability,
		Message: "the client did not declare the " + Extension + " extension",
		Data:    json.RawMessage(`{"requiredCapabilities":{"extensions":{"` + Extension + `":{}}}}`),
	}
}

func invalidParams(format string, args ...any) *jsonrpc.Error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf(format, args...)}
}

// newTaskID returns 128 random bits, hex-encoded.
func newTaskID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+).
	return hex.EncodeToString(b[:])
}
