package gateway

import (
	"context"
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/gateway/wire"
	"github.com/mcphost/mcphost/host/permissions"
	"github.com/mcphost/mcphost/host/registry"
	"github.com/mcphost/mcphost/host/telemetry"
	"github.com/mcphost/mcphost/internal/rawjson"
)

// Telemetry of the gateway's front (Options.Telemetry): a SERVER span and
// a mcp.server.operation.duration measurement per downstream request the
// gateway answers (not per notification), on both of its paths:
//
//   - the go-sdk server's: telemetryMiddleware, the outermost receiving
//     middleware, so that a refusal of the drain is measured too;
//   - the relay's (host/gateway/stdio, httprelay.go over HTTP): a
//     relaySpan from where a qualifying tools/call starts to where its
//     answer is written, refusals and errors included.
//
// The span's context is the one the request is handled with, so that the
// host's spans of the call (tool call, permission decision, upstream
// request) are its children. A relayed call that the relay does not take
// after all goes on to the go-sdk server with its span (carries): it is
// one request, measured once, from its arrival.
//
// The go-sdk server gives a middleware no JSON-RPC id and no transport, so
// the gateway passes them, with a carried span's token, in headers of the
// request's RequestExtra, which the middleware sees: over HTTP in the
// request's own headers (the handler strips any a client sent), over stdio
// in a RequestExtra the stdio front attaches (PipeExtra).
// None of this runs, and nothing is allocated for it, with telemetry off.

// The gateway's internal headers, for telemetryMiddleware.
const (
	// hdrRequestID is the request's JSON-RPC id, as text.
	hdrRequestID = "Mcphost-Telemetry-Request-Id"
	// hdrPipe marks a request that came over stdio.
	hdrPipe = "Mcphost-Telemetry-Pipe"
	// hdrCarry is the token of the span of a relayed call that the relay
	// did not take (carries).
	hdrCarry = "Mcphost-Telemetry-Carry"
)

// errTypeOther is error.type when the cause is unknown (the semantic
// conventions' fallback value).
const errTypeOther = "_OTHER"

// pipeMark is hdrPipe's value. (Shared, never modified.)
var pipeMark = []string{"1"}

// telemetryMiddleware spans and measures every request the go-sdk server
// handles (see above); it is added, outermost, only with telemetry on.
func (g *Gateway) telemetryMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if strings.HasPrefix(method, "notifications/") {
			return next(ctx, method, req)
		}
		info := telemetry.RequestInfo{Transport: telemetry.TransportPipe}
		var carry []string
		if ex := req.GetExtra(); ex != nil && ex.Header != nil {
			h := ex.Header
			if len(h[hdrPipe]) == 0 {
				info.Transport = telemetry.TransportTCP
				ctx = g.tel.ExtractHTTP(ctx, h)
			}
			if v := h[hdrRequestID]; len(v) == 1 {
				info.RequestID = v[0]
			}
			carry = h[hdrCarry]
		}
		rs := g.carries.take(carry)
		switch {
		case rs != nil:
			// The relay did not take this call: its span, and its
			// decision, go on here.
			ctx = host.WithDecisionNote(trace.ContextWithSpan(ctx, trace.SpanFromContext(rs.ctx)), &rs.note)
		case len(carry) > 0:
			return next(ctx, method, req) // (its span was ended: abandoned)
		default:
			rs = &relaySpan{}
			if ss, ok := req.GetSession().(*mcp.ServerSession); ok && ss != nil {
				info.SessionID = LogSessionID(ss.ID())
			}
			if r, ok := req.(interface{ ProtocolVersion() string }); ok {
				info.ProtocolVersion = r.ProtocolVersion()
			}
			info.Meta = metaOf(req)
			if method == telemetry.MethodToolsCall || method == telemetry.MethodPromptsGet {
				ctx = host.WithDecisionNote(ctx, &rs.note) // (one decision: the label's is the gate's)
			}
			rs.target, info.Server = g.targetLabel(host.WithCaller(ctx, principalOf(req), ""), method, targetOf(req))
			rs.start = time.Now()
			ctx, rs.span = g.tel.StartRequest(ctx, method, rs.target, info)
		}
		res, err := next(ctx, method, req)
		switch r, _ := res.(*mcp.CallToolResult); {
		case err != nil:
			rs.span.End(err)
			g.tel.RecordRequest(ctx, method, rs.target, time.Since(rs.start), telemetry.ErrorType(err))
		case r != nil && r.IsError:
			rs.span.EndWith(telemetry.ErrorTypeToolError)
			g.tel.RecordRequest(ctx, method, rs.target, time.Since(rs.start), telemetry.ErrorTypeToolError)
		default:
			rs.span.End(nil)
			g.tel.RecordRequest(ctx, method, rs.target, time.Since(rs.start), "")
		}
		return res, err
	}
}

// targetOf is the span target of a request: the tool (tools/call) or the
// prompt (prompts/get) as the client named it, else "".
func targetOf(req mcp.Request) string {
	switch r := req.(type) {
	case *mcp.CallToolRequest:
		if r.Params != nil {
			return r.Params.Name
		}
	case *mcp.GetPromptRequest:
		if r.Params != nil {
			return r.Params.Name
		}
	}
	return ""
}

// targetLabel is the span target, and metric label, of a request of
// method naming target (targetOf): target itself when it names a tool (or
// prompt) that ctx's caller is served — tool search's own two tools
// included —, else telemetry.TargetUnknown: never a name a client made
// up, nor one hidden from the caller. (A per-user server's prompts are
// not labelled: which exist is known only by listing them.) For a served tool of an upstream server it
// also returns that server (telemetry.RequestInfo.Server), "" otherwise.
func (g *Gateway) targetLabel(ctx context.Context, method, target string) (label, server string) {
	if target == "" {
		return "", ""
	}
	switch method {
	case telemetry.MethodToolsCall:
		if g.search != nil && (target == SearchToolName || target == CallToolName) {
			return target, ""
		}
		name, ok := g.canonicalTool(target)
		return g.toolLabel(ctx, target, name, ok)
	case telemetry.MethodPromptsGet:
		g.mu.Lock()
		p, ok := g.exposed.prompts[target]
		g.mu.Unlock()
		if ok && g.h.Serving().Decision(ctx, p.Name).Behavior != permissions.Deny {
			return target, ""
		}
	}
	return telemetry.TargetUnknown, ""
}

// toolLabel is targetLabel of a tools/call naming target, which resolves
// to the served tool name (ok) of g's shared servers.
func (g *Gateway) toolLabel(ctx context.Context, target, name string, ok bool) (label, server string) {
	if !ok {
		name, ok = g.userToolName(ctx, target) // (a per-user server's)
	}
	if ok && g.h.Serving().ToolVisible(ctx, name) {
		server, _, _ = registry.ParseName(name)
		return target, server
	}
	return telemetry.TargetUnknown, ""
}

// metaOf returns a request's params._meta, or nil.
func metaOf(req mcp.Request) map[string]any {
	p := req.GetParams()
	if p == nil {
		return nil
	}
	if v := reflect.ValueOf(p); v.Kind() == reflect.Pointer && v.IsNil() {
		return nil // (a method whose params may be absent)
	}
	return p.GetMeta()
}

// relaySpan is the server span of a request and the start of its duration.
// A nil *relaySpan (telemetry off, no checks) does nothing; one with a nil
// ctx (telemetry off, checks configured) only carries note.
type relaySpan struct {
	ctx    context.Context // holds span
	span   telemetry.Span
	start  time.Time
	target string // the tool as the client named it
	// note is the tools/call's permission decision, taken once (by the
	// label, the relay or the gate: host.DecisionNote) and carried with
	// the span to the go-sdk server when the relay does not take the call.
	note host.DecisionNote
}

// startRelayMessage starts the span of the relayed tools/call m, with id
// key (rawjson.IDKey) and the trace context members of its _meta
// (RelayRequest.Trace), under ctx; it returns ctx itself and nil with
// telemetry off. It reads the tool's name as m holds it, decoded and
// resolved already (wire.Message.Call, Tool).
//
// With telemetry off but hooks or interceptors configured, it returns a
// relaySpan without a span: it carries the call's DecisionNote to the
// go-sdk server if the relay hands the call over (decisionMiddleware), so
// that the checks the relay ran (PreToolUse hooks, request interceptors)
// do not run again there.
func (g *Gateway) startRelayMessage(ctx context.Context, m *wire.Message, key, version, session, transport string, trace []byte) (context.Context, *relaySpan) {
	if !g.tel.Enabled() {
		if !g.relayChecked(ctx, m) {
			return ctx, nil
		}
		rs := &relaySpan{} // (no span, no ctx: nothing to end or measure)
		return host.WithDecisionNote(ctx, &rs.note), rs
	}
	rs := &relaySpan{start: time.Now()}
	ctx = host.WithDecisionNote(ctx, &rs.note)
	info := telemetry.RequestInfo{SessionID: session, ProtocolVersion: version, Transport: transport}
	if c, ok := m.Call(); ok && c.Name != "" {
		if g.search != nil && (c.Name == SearchToolName || c.Name == CallToolName) {
			rs.target = c.Name
		} else {
			name, ok := g.resolveTool(m, c.Name)
			rs.target, info.Server = g.toolLabel(ctx, c.Name, name, ok)
		}
	}
	if len(key) > 1 {
		info.RequestID = key[1:] // (the key is the id's kind, then its value)
	}
	if trace != nil {
		info.Meta = traceMeta(trace)
	}
	rs.ctx, rs.span = g.tel.StartRequest(ctx, telemetry.MethodToolsCall, rs.target, info)
	return rs.ctx, rs
}

// relayChecked reports whether a hook or interceptor checks the tools/call
// m: only such a call needs its DecisionNote carried to the go-sdk path
// when telemetry is off (a call no check matches runs none on the relay).
// Tool search's own tools count as checked when any check exists: their
// call_tool goes through the gate with the tool it names.
func (g *Gateway) relayChecked(ctx context.Context, m *wire.Message) bool {
	s := g.h.Serving()
	if !s.HasChecks() {
		return false
	}
	c, ok := m.Call()
	if !ok || c.Name == "" {
		return false
	}
	if g.search != nil && (c.Name == SearchToolName || c.Name == CallToolName) {
		return true
	}
	name, ok := g.resolveTool(m, c.Name)
	return ok && s.ToolChecked(ctx, name)
}

// endRelay ends rs with err (nil: success) and measures the request.
func (g *Gateway) endRelay(rs *relaySpan, err error) {
	if rs == nil || rs.ctx == nil { // (nil ctx: no span, telemetry off)
		return
	}
	rs.span.End(err)
	g.tel.RecordRequest(rs.ctx, telemetry.MethodToolsCall, rs.target, time.Since(rs.start), telemetry.ErrorType(err))
}

// endRelayWith ends rs with the error class errType ("": success) and
// measures the request.
func (g *Gateway) endRelayWith(rs *relaySpan, errType string) {
	if rs == nil || rs.ctx == nil { // (nil ctx: no span, telemetry off)
		return
	}
	rs.span.EndWith(errType)
	g.tel.RecordRequest(rs.ctx, telemetry.MethodToolsCall, rs.target, time.Since(rs.start), errType)
}

// endRelayAnswer ends rs by the response out that was written: a JSON-RPC
// error by its code, a result with isError as a tool error.
func (g *Gateway) endRelayAnswer(rs *relaySpan, out []byte) {
	if rs == nil || rs.ctx == nil { // (nil ctx: no span, telemetry off)
		return
	}
	code, isErr := answerError(out)
	switch {
	case code != 0:
		g.endRelay(rs, &jsonrpc.Error{Code: code})
	case isErr:
		g.endRelayWith(rs, telemetry.ErrorTypeToolError)
	default:
		g.endRelayWith(rs, "")
	}
}

// answerError reads a JSON-RPC response: its error's code (0 if none, or
// not an integer), or whether its result has isError set.
func answerError(resp []byte) (code int64, isError bool) {
	var arr [8]rawjson.Member
	ms, err := rawjson.Members(arr[:0], resp)
	if err != nil {
		return 0, false
	}
	if e, ok := rawjson.Find(ms, "error"); ok {
		var earr [4]rawjson.Member
		es, _ := rawjson.Members(earr[:0], e.Value)
		c, _ := rawjson.Find(es, "code")
		code, err := strconv.ParseInt(string(c.Value), 10, 64)
		if err != nil || code == 0 {
			return 0, true // (an error all the same)
		}
		return code, false
	}
	result, ok := rawjson.Find(ms, "result")
	if !ok {
		return 0, false
	}
	var rarr [8]rawjson.Member
	rs, err := rawjson.Members(rarr[:0], result.Value)
	if err != nil {
		return 0, false
	}
	v, _ := rawjson.Find(rs, "isError")
	return 0, string(v.Value) == "true"
}

// carries are the spans of relayed calls that the relay did not take,
// carried to the go-sdk server, by token (hdrCarry).
type carries struct {
	mu sync.Mutex
	n  uint64
	m  map[string]*relaySpan
}

// put keeps rs and returns its token.
func (cs *carries) put(rs *relaySpan) string {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	cs.n++
	tok := strconv.FormatUint(cs.n, 36)
	if cs.m == nil {
		cs.m = map[string]*relaySpan{}
	}
	cs.m[tok] = rs
	return tok
}

// take returns the span of the token in tok (an hdrCarry header's
// values) and forgets it; nil if there is none (no token, or its span was
// taken or abandoned).
func (cs *carries) take(tok []string) *relaySpan {
	if len(tok) != 1 {
		return nil
	}
	cs.mu.Lock()
	defer cs.mu.Unlock()
	rs := cs.m[tok[0]]
	delete(cs.m, tok[0])
	return rs
}

// abandon ends the span of tok, if the go-sdk server answered its request
// without the middleware taking it (a refusal before any handler, or the
// client gone): with err, or errTypeOther if err is nil.
func (g *Gateway) abandon(tok []string, err error) {
	rs := g.carries.take(tok)
	if rs == nil {
		return
	}
	if err != nil {
		g.endRelay(rs, err)
		return
	}
	g.endRelayWith(rs, errTypeOther)
}

// idKeyOf is rawjson.IDKey of a decoded id ("" if it has none).
func idKeyOf(id jsonrpc.ID) string {
	switch v := id.Raw().(type) {
	case string:
		return "s" + v
	case int64:
		return "n" + strconv.FormatInt(v, 10)
	}
	return ""
}

// traceMeta decodes the trace context members relayable collected.
func traceMeta(trace []byte) map[string]any {
	var m map[string]any
	if json.Unmarshal(append(append([]byte{'{'}, trace...), '}'), &m) != nil {
		return nil
	}
	return m
}
