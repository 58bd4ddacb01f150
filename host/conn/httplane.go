package conn

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/oauth2"

	"github.com/mcphost/mcphost/internal/jsonrpcmsg"
	"github.com/mcphost/mcphost/internal/rawjson"
)

// httpLane is the raw lane of a streamable HTTP server's session: each raw
// call is a POST of its own on the session, with the headers the go-sdk
// client would send (session id, protocol version, credentials; for
// NewProtocol Mcp-Method and Mcp-Name). The server answers on the POST,
// with a JSON body or an event stream that carries, before the response,
// the call's notifications and (before NewProtocol) the server's own
// requests, which are answered here through the call's Requester — the
// stream names the call, so the tie is exact.
//
// A POST the server refuses before acting on it — 401 or 403 (credentials),
// 404 (the session expired) — ends the call with errRawRefused: the go-sdk
// client sends it then, and handles the refusal as it does for its own.
type httpLane struct {
	c      *Conn
	meta   *rawMeta // captured by the HTTP client (sseRouting)
	url    string
	client *http.Client       // the session's client, without sseRouting
	oauth  auth.OAuthHandler  // nil: none
	opts   *mcp.ClientOptions // the go-sdk client's handlers
	cs     *mcp.ClientSession
}

// newHTTPLane returns the raw lane of session cs over t, whose HTTP client
// captures meta (see sseRouting).
func (c *Conn) newHTTPLane(t *mcp.StreamableClientTransport, cs *mcp.ClientSession, meta *rawMeta, opts *mcp.ClientOptions) *httpLane {
	hc := *t.HTTPClient
	if r, ok := hc.Transport.(*sseRouting); ok {
		hc.Transport = r.base
	}
	return &httpLane{c: c, meta: meta, url: t.Endpoint, client: &hc, oauth: t.OAuthHandler, opts: opts, cs: cs}
}

// takes reports whether a call can go on the lane: the go-sdk client's
// _meta was captured, the tool's name can be a header's value, and, for
// NewProtocol, the tool sends none of its parameters as headers
// (x-mcp-header, which only the go-sdk client sets).
func (l *httpLane) takes(rc RawCall, v string) bool {
	if !l.meta.captured() || (v >= NewProtocol && rc.HeaderParams) {
		return false
	}
	for i := 0; i < len(rc.Tool); i++ {
		if b := rc.Tool[i]; b < 0x20 || b > 0x7e {
			return false
		}
	}
	return true
}

// StartRaw implements rawStarter.
func (l *httpLane) StartRaw(ctx context.Context, req rawRequest, done func(resp []byte, err error)) error {
	id, msg := l.meta.request(req)
	// The call ends with ctx, or when the Manager closes (see call).
	run := func() {
		resp, err := l.call(ctx, id, msg, req)
		if err != nil && (ctx.Err() != nil || l.c.m.ctx.Err() != nil) {
			if err = ctx.Err(); err == nil {
				err = context.Canceled // (the Manager closed)
			}
			// The server may have begun: tell it, as the go-sdk does (not
			// waited for; bounded, and ended when the Manager closes).
			go func() {
				cctx, cancel := context.WithTimeout(l.c.m.ctx, 5*time.Second)
				defer cancel()
				l.post(cctx, cancelled(id), "notifications/cancelled", "")
			}()
		}
		done(resp, err)
	}
	if req.wait {
		run() // (the caller waits for done anyway)
		return nil
	}
	go run()
	return nil
}

// post sends one message on the session; the caller closes the response's
// body.
func (l *httpLane) post(ctx context.Context, msg []byte, method, name string) (*http.Response, error) {
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, l.url, bytes.NewReader(msg))
	if err != nil {
		return nil, err
	}
	// The header's values share one array (as http.Header.Clone does):
	// one allocation for them all, not one each.
	vals := make([]string, 0, 7)
	set := func(k, v string) {
		vals = append(vals, v)
		hr.Header[k] = vals[len(vals)-1 : len(vals) : len(vals)]
	}
	set("Content-Type", "application/json")
	set("Accept", "application/json, text/event-stream")
	if err := l.headers(ctx, set, method, name); err != nil {
		return nil, err
	}
	resp, err := l.client.Do(hr)
	if err != nil {
		return nil, err
	}
	if method == "notifications/cancelled" || method == "" {
		resp.Body.Close()
	}
	return resp, nil
}

// headers sets the session's headers on a request by set (keys in
// canonical form), as the go-sdk client does: protocol version, session
// id, credentials, and at NewProtocol the request's method and name.
func (l *httpLane) headers(ctx context.Context, set func(k, v string), method, name string) error {
	v := l.cs.InitializeResult().ProtocolVersion
	set("Mcp-Protocol-Version", v)
	if sid := l.cs.ID(); sid != "" {
		set("Mcp-Session-Id", sid)
	}
	if v >= NewProtocol && method != "" {
		set("Mcp-Method", method)
		if name != "" {
			set("Mcp-Name", name)
		}
	}
	if l.oauth == nil {
		return nil
	}
	ts, err := l.oauth.TokenSource(ctx)
	if err != nil {
		return errRawRefused
	}
	if ts == nil {
		return nil
	}
	tok, err := ts.Token()
	var re *oauth2.RetrieveError
	switch {
	case err == nil && tok != nil:
		set("Authorization", "Bearer "+tok.AccessToken)
	case err != nil && !(errors.As(err, &re) && re.ErrorCode == "invalid_grant"):
		return errRawRefused // the go-sdk client reports it
	}
	return nil
}

// resume reopens a call's event stream after the event lastID (the server
// closed it, or it broke, before the call's response), as the go-sdk
// client does: a GET with Last-Event-ID.
func (l *httpLane) resume(ctx context.Context, lastID string) (io.ReadCloser, error) {
	hr, err := http.NewRequestWithContext(ctx, http.MethodGet, l.url, nil)
	if err != nil {
		return nil, err
	}
	hr.Header.Set("Accept", "text/event-stream")
	hr.Header.Set("Last-Event-ID", lastID)
	if err := l.headers(ctx, hr.Header.Set, "", ""); err != nil {
		return nil, err
	}
	resp, err := l.client.Do(hr)
	if err != nil {
		return nil, err
	}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); resp.StatusCode != http.StatusOK || mt != "text/event-stream" {
		resp.Body.Close()
		return nil, fmt.Errorf("resuming the call's event stream: HTTP %d, %q", resp.StatusCode, mt)
	}
	return resp.Body, nil
}

// call makes one raw call and returns the server's response. The call
// ends with ctx, or when the Manager closes.
func (l *httpLane) call(ctx context.Context, id string, msg []byte, req rawRequest) ([]byte, error) {
	// The POST lives until its body is read to the end (so that its
	// connection serves the next call), which may be after the call's end:
	// ctx's end, or the Manager's, ends it only until then. (One context
	// for the call, watching both: until the response, pctx ends exactly
	// when the call does.)
	pctx, end := context.WithCancel(context.WithoutCancel(ctx))
	unwatch := context.AfterFunc(ctx, end)
	unwatchM := context.AfterFunc(l.c.m.ctx, end)
	drained := false
	defer func() {
		if !drained {
			unwatch()
			unwatchM()
			end()
		}
	}()
	method, name := "tools/call", req.tool
	if req.method != "" {
		method, name = req.method, headerSafe(req.tool)
	}
	resp, err := l.post(pctx, msg, method, name)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // (the URL may hold a credential)
		}
		if errors.Is(err, errRawRefused) {
			return nil, err
		}
		return nil, fmt.Errorf("sending the call: %w", err)
	}
	defer func() {
		if !drained {
			resp.Body.Close()
		}
	}()
	max := l.c.m.opts.MaxMessageBytes
	if max <= 0 {
		max = DefaultMaxMessageBytes
	}
	switch resp.StatusCode {
	case http.StatusOK:
	case http.StatusUnauthorized, http.StatusForbidden, http.StatusNotFound:
		return nil, errRawRefused
	default:
		// A JSON-RPC error for the call is its answer; anything else fails it.
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		if b = bytes.TrimSpace(b); isResponseTo(b, id) {
			return oneLine(b), nil
		}
		return nil, fmt.Errorf("the server answered the call with HTTP %d", resp.StatusCode)
	}
	mt := mediaType(resp.Header.Get("Content-Type"))
	switch mt {
	case "application/json":
		b, err := io.ReadAll(io.LimitReader(resp.Body, int64(max)+1))
		if err != nil {
			return nil, fmt.Errorf("reading the response: %w", err)
		}
		if len(b) > max {
			return nil, errLineTooLong
		}
		if b = bytes.TrimSpace(b); !isResponseTo(b, id) {
			return nil, errors.New("the server's answer to the call is not its response")
		}
		return oneLine(b), nil
	case "text/event-stream":
		out, last, err := l.stream(pctx, resp.Body, id, req, max)
		if err != nil {
			return nil, err
		}
		// The server ends the stream after the response: it is read to its
		// end after the call's (a body closed unread closes its
		// connection); one the server keeps open is closed after a moment,
		// or when the Manager closes.
		drained = true
		unwatch()
		go func() {
			defer unwatchM()
			t := time.AfterFunc(streamEndWait, end)
			io.Copy(io.Discard, io.LimitReader(last, 1<<20))
			t.Stop()
			last.Close()
			end()
		}()
		return out, nil
	}
	return nil, fmt.Errorf("the server answered the call with content type %q", mt)
}

// mediaType is the media type of a Content-Type header's value as
// mime.ParseMediaType reads it ("" when it finds the value invalid, but
// for its parameters) — without parsing, and so without allocating, the
// two values servers send without parameters.
func mediaType(v string) string {
	switch v {
	case "application/json", "text/event-stream":
		return v
	}
	mt, _, err := mime.ParseMediaType(v)
	if err != nil && !errors.Is(err, mime.ErrInvalidMediaParameter) {
		return ""
	}
	return mt
}

// errEventTooLarge ends a call whose event stream carried an event over the
// size cap.
var errEventTooLarge = errors.New("an event from the server exceeds the size limit")

// stream reads the call's event stream up to its response: notifications go
// to the call, the server's requests are answered through its Requester.
// Only "message" events are read, as the go-sdk client reads them. A
// stream that ends before the response is resumed after its last event, as
// the go-sdk client resumes it. It returns the response and the body it
// came on, not read to its end (the caller ends it).
//
// ctx is the POST's context (see call): until stream returns, it ends
// when the call does; a resumed stream is read under it too.
func (l *httpLane) stream(ctx context.Context, body io.ReadCloser, id string, req rawRequest, max int) ([]byte, io.ReadCloser, error) {
	// The server's requests are answered under a context that ends with
	// the call's stream, made at the first (most calls have none).
	var (
		askCtx context.Context
		cancel context.CancelFunc = func() {}
	)
	var asks sync.WaitGroup
	defer asks.Wait() // (cancel, deferred after, runs first)
	defer func() { cancel() }()
	var resp []byte
	var cur *sseRouter
	route := func(data []byte) []byte {
		if cur.name != "" && cur.name != "message" {
			return nil
		}
		var arr [8]rawjson.Member
		ms, err := rawjson.Members(arr[:0], data)
		if err != nil {
			return nil // as the go-sdk, which drops what it cannot read
		}
		_, hasMethod := rawjson.Find(ms, "method")
		rid, hasID := rawjson.Find(ms, "id")
		switch {
		case !hasMethod:
			if hasID && string(rid.Value) == id {
				resp = oneLine(bytes.Clone(data))
			}
		case hasID:
			// (Answered on a goroutine of its own, while data, which the
			// request's params would alias, is reused for the next event.)
			msg, err := jsonrpcmsg.Decode(bytes.Clone(data))
			if jr, ok := msg.(*jsonrpc.Request); err == nil && ok {
				if askCtx == nil {
					askCtx, cancel = context.WithCancel(ctx)
				}
				actx := askCtx
				asks.Add(1)
				go func() { // ends when answered, or with the call
					defer asks.Done()
					l.answer(actx, jr, req.fc)
				}()
			}
		default:
			if msg, err := jsonrpcmsg.Decode(data); err == nil {
				if jr, ok := msg.(*jsonrpc.Request); ok {
					l.note(ctx, jr, req.fc)
				}
			}
		}
		return nil
	}
	cur = l.c.m.sseRouters.get(max, route)
	defer l.c.m.sseRouters.put(cur) // (what is returned is not read through it)
	var lastID, progressAt string
	var retry time.Duration
	for tries := 0; ; {
		var err error
		if body != nil {
			cur.restart(body)
			for resp == nil && err == nil && !cur.overflow {
				err = cur.skip()
			}
			switch {
			case resp != nil:
				return resp, body, nil
			case cur.overflow:
				body.Close()
				return nil, nil, errEventTooLarge
			}
			body.Close()
			if cur.lastID != "" {
				lastID = cur.lastID
			}
			if cur.retry > 0 {
				retry = cur.retry
			}
		}
		if ctx.Err() != nil {
			return nil, nil, ctx.Err()
		}
		if lastID == "" {
			// Nothing to resume: the call fails (not the session, as the
			// go-sdk client fails only the call).
			return nil, nil, errors.New("the server's event stream ended before its response")
		}
		// tries count the attempts that brought no new event.
		if lastID != progressAt {
			progressAt, tries = lastID, 0
		} else if tries++; tries > maxResumes {
			return nil, nil, fmt.Errorf("%w: the server's event stream ended before its response, %d times without a new event", errTransportClosed, tries)
		}
		delay := retry
		if delay <= 0 {
			delay = time.Second << min(tries, 4)
		}
		select {
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		case <-time.After(delay):
		}
		if body, err = l.resume(ctx, lastID); err != nil {
			body = nil // (tried again, without progress)
			l.c.log.Debug("resuming a relayed call's event stream failed", "error", err)
		}
	}
}

// maxResumes bounds the resumptions of a call's event stream that bring no
// new event (as the go-sdk client's default).
const maxResumes = 5

// streamEndWait bounds the wait for the end of a call's event stream after
// its response.
const streamEndWait = 100 * time.Millisecond

// oneLine returns a JSON message without line breaks (which a server may
// put between tokens): the relay writes it as one line on stdio, or one
// event's data.
func oneLine(b []byte) []byte {
	if !bytes.ContainsAny(b, "\r\n") {
		return b
	}
	var out bytes.Buffer
	if json.Compact(&out, b) != nil {
		return b // (not JSON: the relay refuses it)
	}
	return out.Bytes()
}

// isResponseTo reports whether b is a JSON-RPC response with the given id.
func isResponseTo(b []byte, id string) bool {
	var arr [8]rawjson.Member
	ms, err := rawjson.Members(arr[:0], b)
	if err != nil {
		return false
	}
	rid, ok := rawjson.Find(ms, "id")
	_, isCall := rawjson.Find(ms, "method")
	return ok && !isCall && string(rid.Value) == id
}

// note handles a notification of the call's stream as the go-sdk client's
// handlers would, with log messages going to the call's caller.
func (l *httpLane) note(ctx context.Context, req *jsonrpc.Request, fc *call) {
	o, c := l.opts, l.c
	switch req.Method {
	case "notifications/message":
		var p mcp.LoggingMessageParams
		if json.Unmarshal(req.Params, &p) == nil && c.m.opts.OnLog != nil {
			c.m.opts.OnLog(c.cfg.Name, &p, fc.r)
		}
	case "notifications/progress":
		var p mcp.ProgressNotificationParams
		if json.Unmarshal(req.Params, &p) == nil && fc.progress != nil {
			fc.progress(&p)
		}
	case "notifications/tools/list_changed":
		o.ToolListChangedHandler(ctx, &mcp.ToolListChangedRequest{Params: &mcp.ToolListChangedParams{}})
	case "notifications/resources/list_changed":
		o.ResourceListChangedHandler(ctx, &mcp.ResourceListChangedRequest{Params: &mcp.ResourceListChangedParams{}})
	case "notifications/prompts/list_changed":
		o.PromptListChangedHandler(ctx, &mcp.PromptListChangedRequest{Params: &mcp.PromptListChangedParams{}})
	case "notifications/resources/updated":
		var p mcp.ResourceUpdatedNotificationParams
		if json.Unmarshal(req.Params, &p) == nil {
			o.ResourceUpdatedHandler(ctx, &mcp.ResourceUpdatedNotificationRequest{Params: &p})
		}
	case MethodTaskStatus:
		c.callTaskStatus(req.Params, fc) // (tasknotes.go)
	case "notifications/elicitation/complete":
		var p mcp.ElicitationCompleteParams
		if json.Unmarshal(req.Params, &p) == nil {
			o.ElicitationCompleteHandler(ctx, &mcp.ElicitationCompleteNotificationRequest{Params: &p})
		}
	}
}

// answer answers a server's request of the call's stream through the
// call's Requester (a server before NewProtocol asks by requests of its
// own), and posts the answer on the session.
func (l *httpLane) answer(ctx context.Context, req *jsonrpc.Request, fc *call) {
	var (
		res any
		err error
	)
	switch req.Method {
	case "ping":
		res = struct{}{}
	case "elicitation/create", "sampling/createMessage", "roots/list":
		res, err = l.ask(ctx, req, fc)
	default:
		err = &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "method not found: " + req.Method}
	}
	out := &jsonrpc.Response{ID: req.ID}
	if err == nil {
		out.Result, err = json.Marshal(res)
	}
	if err != nil {
		var je *jsonrpc.Error
		if !errors.As(err, &je) {
			je = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}
		}
		out.Result, out.Error = nil, je
	}
	b, err := jsonrpc.EncodeMessage(out)
	if err != nil {
		return
	}
	if _, err := l.post(ctx, b, "", ""); err != nil {
		l.c.log.Debug("answering the server's request failed", "method", req.Method, "error", err)
	}
}

// ask puts a server's elicitation, sampling or roots request to the call's
// Requester (as fulfilOne does for an input-required result).
func (l *httpLane) ask(ctx context.Context, req *jsonrpc.Request, fc *call) (any, error) {
	if fc.r == nil {
		return nil, errUnsupported(req.Method)
	}
	var ir mcp.InputRequest
	switch req.Method {
	case "elicitation/create":
		ir = new(mcp.ElicitParams)
	case "sampling/createMessage":
		ir = new(mcp.CreateMessageParams)
	default:
		ir = new(mcp.ListRootsParams)
	}
	if len(req.Params) > 0 {
		if err := json.Unmarshal(req.Params, ir); err != nil {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "invalid params: " + err.Error()}
		}
	}
	res, err := fulfilOne(ctx, fc.r, ir)
	if err != nil {
		return nil, err
	}
	if p, ok := ir.(*mcp.ElicitParams); ok {
		er, _ := res.(*mcp.ElicitResult)
		if err := checkContent(p, er); err != nil {
			return nil, err
		}
	}
	return res, nil
}
