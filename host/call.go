package host

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host/conn"
	"github.com/mcphost/mcphost/host/redact"
	"github.com/mcphost/mcphost/host/registry"
	"github.com/mcphost/mcphost/host/telemetry"
)

// MaxResultChars is the largest tool output (in characters) returned inline;
// larger output is written to a file and replaced by a pointer to it.
const MaxResultChars = 100_000

// previewChars is how much of an oversized output the pointer message shows.
const previewChars = 1000

// CallOptions configures one tool call. Nil means defaults.
type CallOptions struct {
	// OnProgress receives the server's progress notifications. OPTIONAL.
	OnProgress func(*mcp.ProgressNotificationParams)
	// Timeout overrides the server's tool_timeout: how long the call may go
	// without a result or a progress notification. The server's
	// max_tool_duration (at least Timeout) still caps the whole call.
	// OPTIONAL.
	Timeout time.Duration
	// Meta is sent as the request's _meta. OPTIONAL.
	Meta mcp.Meta
	// Approved says the caller has already asked about this call and the
	// answer was allow (the gateway asks its client itself). It satisfies an
	// ask decision, never a deny.
	Approved bool
	// CallerAsks says the caller asks its own user: an ask decision fails
	// with *ApprovalRequiredError, and a call of a needs-auth server's
	// authenticate pseudo-tool with *LoginRequiredError, instead of using
	// Options.Ask and Options.PresentAuthURL.
	CallerAsks bool
	// Requester answers what the server asks during this call
	// (elicitation, sampling, roots): the downstream client of a gateway
	// call. OPTIONAL: Options.OnElicit and Options.OnCreateMessage.
	Requester conn.Requester
	// ReturnInputRequests returns an input-required result (the server
	// needs answers before it can finish, protocol 2026-07-28) to the caller
	// instead of answering through Requester and retrying. The caller
	// retries with InputResponses and RequestState.
	ReturnInputRequests bool
	// InputResponses and RequestState retry a call that returned an
	// input-required result. OPTIONAL.
	InputResponses mcp.InputResponseMap
	RequestState   string
	// ClientVersion is the protocol version of the client the call is
	// made for (a gateway's downstream client): a client before 2026-07-28
	// calling a server of 2026-07-28 whose block has legacy_session may be
	// served by a second session of the server at 2025-11-25, where the
	// server may ask by requests of its own (see conn.CallOptions).
	// OPTIONAL: "" is this host's own.
	ClientVersion string
	// Tasks, if set, says the caller can carry a task result (SEP-2663)
	// and names its task (see conn.CallOptions.Tasks): a retry answered
	// with a task returns it under conn.TaskResultKey. OPTIONAL.
	Tasks conn.TaskIDs
	// Task is the task parameter of a 2025-11-25 task-augmented call (raw
	// JSON; see conn.CallOptions.Task). OPTIONAL.
	Task []byte
	// CannotAsk says that Requester cannot put the server's own requests
	// to the client during the call (a stateless client): such a call
	// stays on the server's first session (see conn.CallOptions).
	CannotAsk bool
}

// ErrDenied is returned for a call the permission rules do not allow.
var ErrDenied = errors.New("permission denied")

// MaxInputRounds bounds the input-required rounds of one call (a server
// that keeps asking), and MaxURLElicitations the -32042 retries.
const (
	MaxInputRounds     = 10
	MaxURLElicitations = 3
)

// ToolError is returned (with the result) when a tool reports isError.
type ToolError struct {
	Tool   string
	Result *mcp.CallToolResult
}

func (e *ToolError) Error() string {
	return fmt.Sprintf("tool %s reported an error: %s", e.Tool, TextOf(e.Result.Content))
}

// CallTool passes a call through the gate (lookup, pin, permission, login,
// limits; see gate.go), calls the tool within the server's limits
// (tool_timeout without a result or progress, max_tool_duration in all; a
// *TimeoutError, after which the server was sent notifications/cancelled),
// answers what the server asks meanwhile (input-required rounds, and
// -32042 URL elicitations, up to MaxURLElicitations), and processes the
// result (oversized output is written to a file). A result with isError set
// is returned together with a *ToolError. args may be any JSON-marshalable
// value or json.RawMessage.
func (h *Host) CallTool(ctx context.Context, name string, args any, opts *CallOptions) (res *mcp.CallToolResult, err error) {
	server, _, ok := registry.ParseName(name) // (once: every later step is given it)
	if h.tel.Enabled() {
		var span telemetry.Span
		ctx, span = h.tel.StartToolCall(ctx, server, name)
		defer func() { span.End(err) }()
	}
	return h.callTool(ctx, name, server, ok, args, opts)
}

// callTool is CallTool without the span; server and ok are
// registry.ParseName's of name.
func (h *Host) callTool(ctx context.Context, name, server string, ok bool, args any, opts *CallOptions) (*mcp.CallToolResult, error) {
	var o CallOptions
	if opts != nil {
		o = *opts
	}
	mode := gateAsk
	if o.CallerAsks {
		mode = gateCallerAsks
	}
	g, err := h.gate(ctx, name, server, ok, o.Approved, o.Timeout, mode, callArgs{value: args})
	if err != nil {
		return nil, err // a call that is not allowed never reaches the server
	}
	t := g.tool
	if g.login {
		return h.callAuthTool(ctx, t.Server)
	}
	if g.plan != nil && g.call.Args != nil {
		args = g.call.Args // (the hooks' updatedInput, the interceptors' mutations)
	}
	req := o.Requester
	if req == nil {
		req = h.requester(t.Server)
	}
	req = h.withElicitHooks(ctx, req, t.Server, g.call)
	checkCtx := ctx // (the checks of the result are not the server's time)
	ctx, limit := limitCall(ctx, g.idle, g.most)
	defer limit.stop()
	params := &mcp.CallToolParams{Name: t.Original, Arguments: args, Meta: h.withLogLevel(o.Meta), InputResponses: o.InputResponses, RequestState: o.RequestState}
	var ih *inputHooks
	if o.ReturnInputRequests || o.InputResponses != nil {
		ih = h.inputHooksFor(ctx, t.Server, g.call)
	}
	if ih != nil && o.InputResponses != nil {
		if params.InputResponses, err = ih.after(ctx, o.InputResponses); err != nil {
			err = fmt.Errorf("calling %s: %w", name, err)
			h.checkFailure(ctx, g, err, 0)
			return nil, err
		}
	}
	copts := &conn.CallOptions{
		// Progress is always asked for: it is how a long call shows it is
		// alive, restarting the idle timeout (never the cap).
		OnProgress: func(p *mcp.ProgressNotificationParams) {
			limit.progress()
			if o.OnProgress != nil {
				o.OnProgress(p)
			}
		},
		Verify: func(ctx context.Context, cs *mcp.ClientSession, sessionGen uint64) error {
			if sessionGen == g.gen {
				return nil // the session t was listed and checked on
			}
			return h.recheck(ctx, cs, t)
		},
		Requester:     req,
		ClientVersion: o.ClientVersion,
		CannotAsk:     o.CannotAsk,
	}
	if !t.HeaderParams && !g.checksResult() {
		// (A retry sent raw carries no parameters in HTTP headers: such a
		// tool's retry goes through the go-sdk client. A task's result
		// is not there to check when the call returns: a tool whose
		// results are checked is called without task augmentation, which
		// a receiver may serve as a plain call.)
		copts.Tasks, copts.Task = o.Tasks, o.Task
	}
	start := time.Now()
	for rounds, urls := 0, 0; ; {
		res, err := h.conns.Call(ctx, t.Server, params, copts)
		if err != nil {
			if terr := limit.err(ctx, name); terr != nil {
				h.checkFailure(checkCtx, g, terr, time.Since(start))
				return nil, terr // the go-sdk has sent notifications/cancelled
			}
			if els, ok := conn.URLElicitations(err); ok && urls < MaxURLElicitations {
				urls++
				if err := h.conns.ElicitURLs(ctx, t.Server, req, els); err != nil {
					err = redact.Error(fmt.Errorf("calling %s: %w", name, err))
					h.checkFailure(checkCtx, g, err, time.Since(start))
					return nil, err
				}
				continue // every elicitation completed: retry
			}
			// The error may quote the server (its answer, its stderr).
			err = redact.Error(fmt.Errorf("calling %s: %w", name, err))
			h.checkFailure(checkCtx, g, err, time.Since(start))
			return nil, err
		}
		if res.InputRequests != nil {
			if rounds++; rounds > MaxInputRounds {
				return nil, fmt.Errorf("calling %s: the server asked for input more than %d times", name, MaxInputRounds)
			}
			if o.ReturnInputRequests {
				if ih == nil {
					return res, nil
				}
				// The Elicitation hooks see the questions first. The
				// ones they answer are not put to the client; when they
				// answer all, the call goes on upstream. Otherwise the
				// client gets the rest: its retry does not carry the
				// hooks' answers (the host keeps no state between
				// rounds), so the server asks those again, and the
				// hooks answer them again in that round.
				answered, rest, err := ih.before(checkCtx, res.InputRequests)
				if err != nil {
					err = fmt.Errorf("calling %s: %w", name, err)
					h.checkFailure(checkCtx, g, err, time.Since(start))
					return nil, err
				}
				if rest != nil {
					res.InputRequests = rest
					return res, nil
				}
				params.InputResponses, params.RequestState = answered, res.RequestState
				continue
			}
			responses, err := conn.Fulfil(ctx, req, res.InputRequests)
			if err != nil {
				err = fmt.Errorf("calling %s: %w", name, err)
				h.checkFailure(checkCtx, g, err, time.Since(start))
				return nil, err
			}
			params.InputResponses, params.RequestState = responses, res.RequestState
			continue
		}
		// The response interceptors and the PostToolUse hooks see the
		// result before anything is written to a file.
		res, err = h.checkResult(checkCtx, g, res, time.Since(start))
		if err != nil {
			return nil, err
		}
		res, err = h.processResult(t, res)
		if err != nil {
			return nil, err
		}
		if res.IsError {
			return res, &ToolError{Tool: name, Result: res}
		}
		return res, nil
	}
}

// listedGeneration returns the session generation that a registry lookup of
// a tool of server, made right after, is known to describe: the lists of a
// session are dropped before the next session is used (see
// conn.Options.OnListChanged), so a lookup reflects this generation or, if
// the server reconnects in between, a later one. Before the first connect
// it is 1: the first session.
func (h *Host) listedGeneration(ctx context.Context, server string) uint64 {
	return max(h.conns.Generation(ctx, server), 1)
}

// recheck checks a tool again on a session other than the one it was listed
// on (the server restarted, perhaps with other definitions and without a
// list_changed): a tool whose definition no longer matches its pin is
// refused, as is one the server no longer offers. Nothing is sent then.
func (h *Host) recheck(ctx context.Context, cs *mcp.ClientSession, t *registry.Tool) error {
	var found *mcp.Tool
	if caps := cs.InitializeResult().Capabilities; caps != nil && caps.Tools != nil {
		for mt, err := range cs.Tools(conn.ListingTools(ctx), nil) { // (execution kept: conn/execution.go)
			if err != nil {
				return fmt.Errorf("listing the tools of %s again after it reconnected: %w", t.Server, err)
			}
			if mt.Name == t.Original {
				found = mt
				break
			}
		}
	}
	if found == nil {
		return fmt.Errorf("%w %q: server %q reconnected and no longer offers it", registry.ErrNotFound, t.Name, t.Server)
	}
	now := *t
	now.Fingerprint, now.PriorFingerprint = registry.Fingerprint(found), registry.PriorFingerprint(found)
	return h.pins.check(&now)
}

// processResult writes output above MaxResultChars to a file and replaces it
// with a short pointer. Images and audio are kept.
func (h *Host) processResult(t *registry.Tool, res *mcp.CallToolResult) (*mcp.CallToolResult, error) {
	var text strings.Builder
	chars := 0
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			chars += utf8.RuneCountInString(tc.Text)
			if text.Len() > 0 {
				text.WriteByte('\n')
			}
			text.WriteString(tc.Text)
		}
	}
	var structured []byte
	if res.StructuredContent != nil {
		b, err := json.Marshal(res.StructuredContent)
		if err == nil && utf8.RuneCount(b) > MaxResultChars {
			structured = b
		}
	}
	if chars <= MaxResultChars && structured == nil {
		return res, nil
	}
	out := *res
	if chars > MaxResultChars {
		path, err := h.writeOutput(t.Name, ".txt", []byte(text.String()))
		if err != nil {
			return nil, fmt.Errorf("saving the oversized output of %s: %w", t.Name, err)
		}
		preview := []rune(text.String())[:previewChars]
		kept := []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf(
			"Output too large (%d characters); the full text was saved to %s\nFirst %d characters:\n%s",
			chars, path, previewChars, string(preview))}}
		for _, c := range res.Content {
			if _, ok := c.(*mcp.TextContent); !ok {
				kept = append(kept, c)
			}
		}
		out.Content = kept
	}
	if structured != nil {
		path, err := h.writeOutput(t.Name, ".json", structured)
		if err != nil {
			return nil, fmt.Errorf("saving the oversized structured output of %s: %w", t.Name, err)
		}
		out.StructuredContent = nil
		out.Content = append(out.Content, &mcp.TextContent{Text: fmt.Sprintf(
			"Structured output too large (%d bytes); saved to %s", len(structured), path)})
	}
	return &out, nil
}

// writeOutput writes data to a new owner-only file in the output directory.
func (h *Host) writeOutput(name, ext string, data []byte) (string, error) {
	if err := os.MkdirAll(h.outputDir, 0o700); err != nil {
		return "", err
	}
	var rnd [4]byte
	rand.Read(rnd[:])
	base := fmt.Sprintf("%s-%s-%s%s", registry.Normalize(name), time.Now().UTC().Format("20060102T150405"), hex.EncodeToString(rnd[:]), ext)
	path := filepath.Join(h.outputDir, base)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return "", err
	}
	return path, f.Close()
}

// TextOf flattens content to text for simple callers: text as is, images and
// audio as [Image: mime] / [Audio: mime], resource links and embedded resources
// by URI, joined by newlines.
func TextOf(content []mcp.Content) string {
	var parts []string
	for _, c := range content {
		switch c := c.(type) {
		case *mcp.TextContent:
			parts = append(parts, c.Text)
		case *mcp.ImageContent:
			parts = append(parts, "[Image: "+c.MIMEType+"]")
		case *mcp.AudioContent:
			parts = append(parts, "[Audio: "+c.MIMEType+"]")
		case *mcp.ResourceLink:
			parts = append(parts, "[Resource: "+c.URI+"]")
		case *mcp.EmbeddedResource:
			if c.Resource != nil {
				if c.Resource.Text != "" {
					parts = append(parts, c.Resource.Text)
				} else {
					parts = append(parts, "[Resource: "+c.Resource.URI+"]")
				}
			}
		}
	}
	return strings.Join(parts, "\n")
}

// Prompts returns the unified prompt list of the active servers.
func (h *Host) Prompts(ctx context.Context) ([]*registry.Prompt, []registry.Problem) {
	return h.PromptsOf(ctx, h.ActiveServers())
}

// PromptsOf is Prompts for the given servers.
func (h *Host) PromptsOf(ctx context.Context, servers []string) ([]*registry.Prompt, []registry.Problem) {
	shared, own, view := h.splitServers(ctx, servers)
	ps, problems := h.reg.Prompts(ctx, shared)
	if view != nil {
		p2, pr2 := view.Prompts(ctx, own)
		ps, problems = append(ps, p2...), append(problems, pr2...)
		sort.Slice(ps, func(i, j int) bool { return ps[i].Name < ps[j].Name })
	}
	return ps, problems
}

// GetPrompt retrieves a prompt by registry name with arguments.
func (h *Host) GetPrompt(ctx context.Context, name string, args map[string]string) (*mcp.GetPromptResult, error) {
	return h.GetPromptResult(ctx, name, &mcp.GetPromptParams{Arguments: args})
}

// Resources returns the resources of the active servers (or of one server).
func (h *Host) Resources(ctx context.Context, server string) ([]*registry.Resource, []registry.Problem) {
	servers := h.ActiveServers()
	if server != "" {
		servers = []string{server}
	}
	return h.ResourcesOf(ctx, servers)
}

// ResourcesOf is Resources for the given servers.
func (h *Host) ResourcesOf(ctx context.Context, servers []string) ([]*registry.Resource, []registry.Problem) {
	shared, own, view := h.splitServers(ctx, servers)
	rs, problems := h.reg.Resources(ctx, shared)
	if view != nil {
		r2, p2 := view.Resources(ctx, own)
		rs, problems = append(rs, r2...), append(problems, p2...)
	}
	return rs, problems
}

// ResourceContent is one piece of a read resource: text, or a blob that was
// decoded and written to File (images are also kept as Blob).
type ResourceContent struct {
	URI      string `json:"uri"`
	MIMEType string `json:"mime_type,omitempty"`
	Text     string `json:"text,omitempty"`
	File     string `json:"file,omitempty"`
	Blob     []byte `json:"-"`
}

// ReadResource reads a resource by URI. If server is empty, the server is
// found from the resource lists.
func (h *Host) ReadResource(ctx context.Context, server, uri string) ([]ResourceContent, error) {
	if server == "" {
		rs, _ := h.Resources(ctx, "")
		for _, r := range rs {
			if r.URI == uri {
				server = r.Server
				break
			}
		}
		if server == "" {
			return nil, fmt.Errorf("no server lists resource %q; name the server", uri)
		}
	}
	res, err := h.ReadResourceResult(ctx, server, &mcp.ReadResourceParams{URI: uri})
	if err != nil {
		return nil, err
	}
	var out []ResourceContent
	for _, c := range res.Contents {
		rc := ResourceContent{URI: c.URI, MIMEType: c.MIMEType, Text: c.Text}
		if c.Blob != nil {
			rc.Blob = c.Blob // the go-sdk has base64-decoded it already
			ext := ".bin"
			if exts, _ := mime.ExtensionsByType(c.MIMEType); len(exts) > 0 {
				ext = exts[0]
			}
			path, err := h.writeOutput(server+"-resource", ext, c.Blob)
			if err != nil {
				return nil, fmt.Errorf("saving blob of %s: %w", uri, err)
			}
			rc.File = path
		}
		out = append(out, rc)
	}
	return out, nil
}

// callAuthTool runs a server's login for its authenticate pseudo-tool.
func (h *Host) callAuthTool(ctx context.Context, server string) (*mcp.CallToolResult, error) {
	if h.present == nil {
		return nil, fmt.Errorf("%s needs a login: run `mcphost auth login %s`", server, server)
	}
	if err := h.Login(ctx, server, h.present); err != nil {
		return nil, fmt.Errorf("logging in to %s: %w", server, err)
	}
	return h.loginResult(ctx, server), nil
}
