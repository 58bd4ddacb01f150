package conn

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"mime"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/internal/rawjson"
)

// ErrNoRawLane is a request the go-sdk client has no call for (the tasks
// methods) to a server whose connection has no raw lane to carry it (an
// in-process server).
var ErrNoRawLane = errors.New("the server's connection cannot carry this request")

// TaskIDs names the tasks a server creates as its callers see them: the
// gateway gives each task id a server returns an id of its own, which tells
// it the task's server, the protocol version of the session that created it
// (version) and its owner (see the gateway's tasks.go). Outward is called on
// the connection's read loop, with the context of the call that created the
// task: it must not block.
type TaskIDs interface {
	Outward(ctx context.Context, server, version, upstreamID string) string
}

// Request sends one request of method — one the go-sdk client has no call
// for: the tasks methods, or a tools/call with a task parameter (2025-11-25)
// — to server, on the session that serves clients of protocol version (see
// forVersion), and returns the server's raw response. params are the
// members of the request's params without braces; caps the capabilities of
// the client the request is made for; name what it names (the Mcp-Name
// header over streamable HTTP at NewProtocol: the task id; "" for none) (sent in _meta to a session of
// NewProtocol, whose requests stand alone). It waits for a slot of the
// server's concurrency cap and for its session as a call does; ctx bounds
// the wait and the request (the server is then sent
// notifications/cancelled). A lost connection fails the request (and is
// reconnected as for a call); it is not sent again.
func (m *Manager) Request(ctx context.Context, server, version, method, name string, params, caps []byte) ([]byte, error) {
	c := m.For(ctx, server)
	if c == nil {
		return nil, fmt.Errorf("%s: %w", server, ErrNoRawLane)
	}
	c = c.forVersion(ctx, version, true) // (where a call of an older client that can be asked went, and its task lives)
	release, err := c.acquire(ctx)
	if err != nil {
		return nil, err
	}
	defer release()
	cs, _, err := c.sessionGen(ctx)
	if err != nil {
		return nil, err
	}
	raw := c.rawLane(cs)
	if raw == nil {
		return nil, fmt.Errorf("%s: %w", server, ErrNoRawLane)
	}
	if cs.InitializeResult().ProtocolVersion < NewProtocol {
		caps = nil // (told at initialize)
	}
	fc := newCall(c.cfg.Name, nil, nil)
	fc.taskStatus = taskStatusFrom(ctx)
	left := c.inflight.add(fc)
	defer left()
	type result struct {
		resp []byte
		err  error
	}
	ch := make(chan result, 1)
	err = raw.StartRaw(ctx, rawRequest{method: method, tool: name, params: params, caps: caps, fc: fc, wait: true}, func(resp []byte, err error) {
		ch <- result{resp, err}
	})
	if err != nil {
		if connectionGone(err) {
			c.drop(cs, err)
		}
		return nil, fmt.Errorf("%s: sending %s: %w", server, method, err)
	}
	r := <-ch
	switch {
	case errors.Is(r.err, errRawRefused):
		return nil, fmt.Errorf("%s: %s: %w", server, method, r.err)
	case r.err != nil:
		if connectionGone(r.err) {
			c.drop(cs, r.err)
		}
		return nil, fmt.Errorf("%s: %s: %w", server, method, r.err)
	}
	c.noteSuccess()
	return r.resp, nil
}

// taskResult is resp, a task result (resultType "task") of server whose
// result's members are rs (their offsets from base in resp), with its
// taskId replaced by what ids names it (unchanged when it has no string
// taskId); up is the server's task id and outward the one given for it
// ("" both when unchanged).
func taskResult(ctx context.Context, ids TaskIDs, server, version string, resp []byte, rs []rawjson.Member, base int) (out []byte, up, outward string) {
	tid, ok := rawjson.Find(rs, "taskId")
	if !ok {
		return resp, "", ""
	}
	up, ok = rawjson.String(tid.Value)
	if !ok {
		return resp, "", ""
	}
	outward = ids.Outward(ctx, server, version, up)
	q := appendJSONString(nil, outward)
	out = make([]byte, 0, len(resp)+len(q))
	out = append(out, resp[:base+tid.Start]...)
	out = append(out, q...)
	return append(out, resp[base+tid.End:]...), up, outward
}

// createTaskResult is resp, a response of c's session of version (before
// NewProtocol) to a task-augmented tools/call made for r, with the id of
// the task of its CreateTaskResult (result.task.taskId) named by ids, and
// the task's status notifications watched (watchTask); anything else is
// returned as it is. flush, when not nil, passes on the task's statuses
// read before resp: to call once out was handed on (watchTask).
func (c *Conn) createTaskResult(ctx context.Context, ids TaskIDs, r Requester, version string, resp []byte) (out []byte, flush func()) {
	out, up, outward := createTaskResultOf(ctx, ids, c.cfg.Name, version, resp)
	if up != "" {
		flush = c.watchTask(ctx, ids, r, version, up, outward)
	}
	return out, flush
}

// createTaskResultOf is createTaskResult for server's session, without the
// watch: it returns the task's upstream and outward ids too ("" when resp
// is no CreateTaskResult).
func createTaskResultOf(ctx context.Context, ids TaskIDs, server, version string, resp []byte) (out []byte, up, outward string) {
	var arr [8]rawjson.Member
	ms, err := rawjson.Members(arr[:0], resp)
	if err != nil {
		return resp, "", ""
	}
	result, ok := rawjson.Find(ms, "result")
	if !ok {
		return resp, "", ""
	}
	rs, err := rawjson.Members(nil, result.Value)
	if err != nil {
		return resp, "", ""
	}
	task, ok := rawjson.Find(rs, "task")
	if !ok || len(task.Value) == 0 || task.Value[0] != '{' {
		return resp, "", ""
	}
	ts, err := rawjson.Members(nil, task.Value)
	if err != nil {
		return resp, "", ""
	}
	return taskResult(ctx, ids, server, version, resp, ts, result.Start+task.Start)
}

// headerSafe is s if it can be a header's value as it is (printable
// ASCII), else "".
func headerSafe(s string) string {
	for i := 0; i < len(s); i++ {
		if b := s[i]; b < 0x20 || b > 0x7e {
			return ""
		}
	}
	return s
}

// noteCapabilities records whether result, the server's answer to the
// initialize, declares capabilities.tasks (2025-11-25's experimental
// tasks, which the go-sdk client does not decode), and reports whether it
// was an answer with capabilities (an initialize's, or a
// server/discover's).
func (c *Conn) noteCapabilities(result []byte) bool {
	var r struct {
		Capabilities *struct {
			Tasks json.RawMessage `json:"tasks"`
		} `json:"capabilities"`
	}
	if len(result) == 0 || json.Unmarshal(result, &r) != nil || r.Capabilities == nil {
		return false // (not an initialize result)
	}
	c.tasks.Store(len(r.Capabilities.Tasks) > 0 && r.Capabilities.Tasks[0] == '{')
	return true
}

// noteCapabilitiesOf is noteCapabilities of a whole response message.
func (c *Conn) noteCapabilitiesOf(msg []byte) bool {
	var m struct {
		Result json.RawMessage `json:"result"`
	}
	return json.Unmarshal(msg, &m) == nil && m.Result != nil && c.noteCapabilities(m.Result)
}

// tasksCapture reads the capabilities of a streamable HTTP server's
// initialize answer (noteCapabilities) from the answers to the go-sdk
// client's requests made without a session and before NewProtocol (its
// initialize; of a server without sessions, every request): JSON read
// whole (noteOpening), an event stream's data as it is read (sseCapture).
// Other answers pass untouched.
type tasksCapture struct {
	base http.RoundTripper
	c    *Conn
	seen atomic.Bool // an initialize result was read: nothing more to read
}

func (t *tasksCapture) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(req)
	if err != nil || resp.Body == nil || req.Method != http.MethodPost || t.seen.Load() ||
		req.Header.Get("Mcp-Session-Id") != "" || req.Header.Get("Mcp-Protocol-Version") >= NewProtocol {
		return resp, err
	}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt == "text/event-stream" {
		resp.Body = &sseCapture{ReadCloser: resp.Body, t: t}
	} else if t.c.noteOpening(resp) {
		t.seen.Store(true)
	}
	return resp, nil
}

// sseCapture passes an event stream on, keeping its first maxOpeningBody
// bytes, whose data lines it reads for noteCapabilities at the stream's
// end (or close).
type sseCapture struct {
	io.ReadCloser
	t *tasksCapture

	mu   sync.Mutex
	buf  []byte
	done bool
}

func (s *sseCapture) Read(p []byte) (int, error) {
	n, err := s.ReadCloser.Read(p)
	s.mu.Lock()
	if !s.done && len(s.buf) < maxOpeningBody {
		s.buf = append(s.buf, p[:n]...)
	}
	s.mu.Unlock()
	if err != nil {
		s.scan()
	}
	return n, err
}

func (s *sseCapture) Close() error {
	s.scan()
	return s.ReadCloser.Close()
}

// scan reads the kept events' data, once.
func (s *sseCapture) scan() {
	s.mu.Lock()
	buf, done := s.buf, s.done
	s.buf, s.done = nil, true
	s.mu.Unlock()
	if done {
		return
	}
	for _, line := range bytes.Split(buf, []byte("\n")) {
		if data, ok := bytes.CutPrefix(bytes.TrimRight(line, "\r"), []byte("data:")); ok && bytes.Contains(data, []byte(`"capabilities"`)) {
			if s.t.c.noteCapabilitiesOf(bytes.TrimSpace(data)) {
				s.t.seen.Store(true)
			}
		}
	}
}

// maxOpeningBody bounds the answer to a request without a session that
// noteOpening reads (an initialize result is small).
const maxOpeningBody = 1 << 20

// noteOpening reads the JSON answer to a request of the go-sdk client made
// without a session (its initialize) for noteCapabilitiesOf, gives resp a
// body of the same bytes, and reports whether it was an initialize's.
func (c *Conn) noteOpening(resp *http.Response) bool {
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxOpeningBody+1))
	rest := resp.Body
	resp.Body = readCloser{io.MultiReader(bytes.NewReader(b), rest), rest}
	return err == nil && len(b) <= maxOpeningBody && c.noteCapabilitiesOf(b)
}

type readCloser struct {
	io.Reader
	io.Closer
}

// HasTasks reports whether any server's session (ctx's user's, for a
// per-user server; its second session too) declared capabilities.tasks
// (2025-11-25's experimental tasks) at its initialize.
func (m *Manager) HasTasks(ctx context.Context) bool {
	for _, name := range m.Names() {
		c := m.For(ctx, name)
		if c == nil {
			continue
		}
		if c.tasks.Load() {
			return true
		}
		c.legacy.mu.Lock()
		lc := c.legacy.c
		c.legacy.mu.Unlock()
		if lc != nil && lc.tasks.Load() {
			return true
		}
	}
	return false
}

// TaskResultKey is the _meta key under which Call returns a task result
// (SEP-2663's resultType "task") of a retry sent raw (see callRawRetry): its
// value is a TaskResult, a type JSON never decodes to, so a server's own
// _meta member of that name is never taken for one.
const TaskResultKey = "mcphost/task-result"

// TaskResult is the raw JSON object of a task result whose taskId was
// named by CallOptions.Tasks, as Call returns it (TaskResultKey).
type TaskResult []byte

// TaskResultOf returns the task result res carries (TaskResultKey), if
// any.
func TaskResultOf(res *mcp.CallToolResult) (TaskResult, bool) {
	if res == nil || res.Meta == nil {
		return nil, false
	}
	t, ok := res.Meta[TaskResultKey].(TaskResult)
	return t, ok
}

// extensionTasks is the id of the 2026-07-28 tasks extension (SEP-2663).
const extensionTasks = "io.modelcontextprotocol/tasks"

// declaresTasks reports whether caps, a client's capabilities as a request
// of NewProtocol carries them (metaCapabilities), declare the tasks
// extension: the server may then answer a call with a task.
func declaresTasks(caps map[string]any) bool {
	exts, _ := caps["extensions"].(map[string]any)
	_, ok := exts[extensionTasks]
	return ok
}

// capsWithoutTasks returns caps, a client's capabilities as a request of
// NewProtocol carries them, without the tasks extension: those of a call
// whose caller cannot carry a task result (CallOptions.Tasks,
// RawCall.Tasks nil), so that the server answers it with a plain result.
// caps is returned as it is when it does not declare the extension.
func capsWithoutTasks(caps map[string]any) map[string]any {
	exts, _ := caps["extensions"].(map[string]any)
	if _, ok := exts[extensionTasks]; !ok {
		return caps
	}
	out := maps.Clone(caps)
	if len(exts) == 1 {
		delete(out, "extensions")
		return out
	}
	e := maps.Clone(exts)
	delete(e, extensionTasks)
	out["extensions"] = e
	return out
}

// rawCapsWithoutTasks is capsWithoutTasks of the raw JSON object caps
// (nil: none); caps is returned as it is when it does not declare the
// extension, or is not an object the server could read either.
func rawCapsWithoutTasks(caps []byte) []byte {
	if caps == nil || !bytes.Contains(caps, []byte(extensionTasks)) {
		return caps
	}
	var m map[string]any
	if err := json.Unmarshal(caps, &m); err != nil {
		return caps
	}
	b, err := json.Marshal(capsWithoutTasks(m))
	if err != nil {
		return caps
	}
	return b
}

// serverDeclaresTasks reports whether the server of cs declared the tasks
// extension: only then may it answer a call with a task.
func serverDeclaresTasks(cs *mcp.ClientSession) bool {
	ir := cs.InitializeResult()
	if ir == nil || ir.Capabilities == nil {
		return false
	}
	_, ok := ir.Capabilities.Extensions[extensionTasks]
	return ok
}

// callRawRetry sends p, a call the server may answer with a task (the
// retry of a multi-round-trip call, with its input responses and request
// state, or a call of a client that declared the tasks extension; before
// NewProtocol, a call with the task parameter task), on
// cs's raw lane rather than through the go-sdk client, whose
// CallToolResult cannot hold a task result: a task result comes back
// with its taskId named by ids, under TaskResultKey; any other result is
// decoded as the go-sdk client would, and an error response is returned
// as a *jsonrpc.Error. sent is false when cs has no raw lane (nothing was
// sent: the go-sdk client sends the call).
func (c *Conn) callRawRetry(ctx context.Context, cs *mcp.ClientSession, p *mcp.CallToolParams, caps map[string]any, task []byte, fc *call, ids TaskIDs) (res *mcp.CallToolResult, sent bool, err error) {
	raw := c.rawLane(cs)
	if raw == nil {
		return nil, false, nil
	}
	var params []byte
	member := func(key string, v any) error {
		b, err := json.Marshal(v)
		if err != nil {
			return fmt.Errorf("encoding the call's %s: %w", key, err)
		}
		if len(params) > 0 {
			params = append(params, ',')
		}
		params = append(appendJSONString(params, key), ':')
		params = append(params, b...)
		return nil
	}
	args := p.Arguments
	if args == nil {
		args = map[string]any{}
	}
	if err := member("name", p.Name); err != nil {
		return nil, false, err
	}
	if err := member("arguments", args); err != nil {
		return nil, false, err
	}
	if len(p.InputResponses) > 0 {
		if err := member("inputResponses", p.InputResponses); err != nil {
			return nil, false, err
		}
	}
	if p.RequestState != "" {
		if err := member("requestState", p.RequestState); err != nil {
			return nil, false, err
		}
	}
	if task != nil {
		params = append(append(params, `,"task":`...), task...)
	}
	// The request's own _meta members (a progress token, its log level, …)
	// go with the raw lane's reserved ones (the log level is the request's
	// own: never among those the raw lane captured).
	var extra []byte
	for k, v := range p.Meta {
		if strings.HasPrefix(k, "io.modelcontextprotocol/") && k != mcp.MetaKeyLogLevel {
			continue
		}
		b, err := json.Marshal(v)
		if err != nil {
			return nil, false, fmt.Errorf("encoding the call's _meta: %w", err)
		}
		if len(extra) > 0 {
			extra = append(extra, ',')
		}
		extra = append(appendJSONString(extra, k), ':')
		extra = append(extra, b...)
	}
	var capsJSON []byte
	if caps != nil {
		if capsJSON, err = json.Marshal(caps); err != nil {
			return nil, false, fmt.Errorf("encoding the client's capabilities: %w", err)
		}
	}
	type result struct {
		resp []byte
		err  error
	}
	ch := make(chan result, 1)
	err = raw.StartRaw(ctx, rawRequest{method: "tools/call", tool: p.Name, params: params, caps: capsJSON, trace: extra, fc: fc, wait: true}, func(resp []byte, err error) {
		ch <- result{resp, err}
	})
	if err == nil {
		r := <-ch
		err = r.err
		if err == nil {
			return decodeRetry(ctx, ids, c.cfg.Name, cs.InitializeResult().ProtocolVersion, r.resp, func(version, up, outward string) {
				if flush := c.watchTask(ctx, ids, fc.r, version, up, outward); flush != nil {
					flush() // (the result is decoded for the go-sdk server, which writes it later: nothing to wait for here)
				}
			})
		}
	}
	if errors.Is(err, errRawRefused) {
		return nil, false, nil // (the go-sdk client sends it, handling what the server refused)
	}
	if connectionGone(err) {
		c.drop(cs, err)
	}
	return nil, true, fmt.Errorf("sending tools/call: %w", err)
}

// decodeRetry decodes resp, a server's raw response to a retry sent by
// callRawRetry.
func decodeRetry(ctx context.Context, ids TaskIDs, server, version string, resp []byte, watch func(version, up, outward string)) (*mcp.CallToolResult, bool, error) {
	older := version < NewProtocol
	if older {
		var up, outward string
		resp, up, outward = createTaskResultOf(ctx, ids, server, version, resp) // (a 2025-11-25 task's id named)
		if up != "" && watch != nil {
			watch(version, up, outward) // (its status notifications passed on)
		}
	} else if out, ok := completeResultTasks(ctx, resp, false, ids, server, version); ok {
		resp = out // (a task's id named; not for another input round, ok false)
	}
	var env struct {
		Result json.RawMessage `json:"result"`
		Error  *jsonrpc.Error  `json:"error"`
	}
	if err := json.Unmarshal(resp, &env); err != nil {
		return nil, true, fmt.Errorf("decoding the server's response: %w", err)
	}
	if env.Error != nil {
		return nil, true, env.Error
	}
	if env.Result == nil {
		return nil, true, errors.New("the server's response has neither result nor error")
	}
	var rt struct {
		ResultType string          `json:"resultType"`
		Task       json.RawMessage `json:"task"` // (a 2025-11-25 CreateTaskResult's)
	}
	if err := json.Unmarshal(env.Result, &rt); err != nil {
		return nil, true, fmt.Errorf("decoding the server's result: %w", err)
	}
	if !older && rt.ResultType == "task" || older && len(rt.Task) > 0 && rt.Task[0] == '{' {
		return &mcp.CallToolResult{Meta: mcp.Meta{TaskResultKey: TaskResult(env.Result)}}, true, nil
	}
	res := &mcp.CallToolResult{}
	if err := json.Unmarshal(env.Result, res); err != nil {
		return nil, true, fmt.Errorf("decoding the server's result: %w", err)
	}
	return res, true, nil
}
