package gateway

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host/conn"
	"github.com/mcphost/mcphost/host/gateway/cluster"
	"github.com/mcphost/mcphost/host/gateway/wire"
	"github.com/mcphost/mcphost/host/state"
	"github.com/mcphost/mcphost/internal/mcpmeta"
	"github.com/mcphost/mcphost/internal/rawjson"
	"github.com/mcphost/mcphost/internal/sealbox"
)

// Tasks through the gateway: the 2026-07-28 tasks extension (SEP-2663: a
// tools/call answered with resultType "task"; tasks/get, tasks/update,
// tasks/cancel) and the 2025-11-25 experimental tasks (a tools/call with a
// task parameter answered with a CreateTaskResult; tasks/get,
// tasks/result, tasks/list, tasks/cancel).
//
// A task id an upstream returns never reaches the client as it is: the
// client gets a task id of the gateway's own, "mcpt-" and the base64url of
// the server's name, the protocol version of the session that created the
// task and the upstream's task id, followed by a MAC (HMAC-SHA256, keyed
// for cluster.TaskIDPurpose from MCPHOST_SESSION_KEYS) over those and the
// ID of the principal the task was created for. Why a MAC rather than a
// table in the state backend:
//   - routing needs no lookup: tasks/get, tasks/update, tasks/result and
//     tasks/cancel go to the server and the upstream id the id names, on
//     any replica given the same keys, with nothing written to the shared
//     state per task and nothing to expire;
//   - a task id is good for its principal only: the MAC of a stolen id
//     does not verify under another principal's ID, and the answer is then
//     exactly that of an id never issued (-32602, task not found), so
//     nothing tells one from the other;
//   - the upstream's task id is not secret from the principal that created
//     the task (a client connected directly sees it), and ids that do not
//     verify are refused before anything is sent upstream.
//
// tasks/list (2025-11-25) is the one method a MAC cannot serve: an
// upstream lists every task of its session, which a shared server's
// session holds for every principal. The gateway keeps, per principal, the
// tasks it named for it (taskTable, in memory, bounded) and lists only
// those, merged across servers. So that a task created through another
// replica is listed too, each is also recorded in the shared state
// (cluster.TasksKey: sealed, the latest maxOwnedTasks per principal,
// expiring ownedTTL after the latest), written apart from the call that
// created it (taskTable.record) and read by tasks/list.
//
// A 2025-11-25 task's status notifications reach the session that created
// it only, under its id (tasknotes.go; conn's tasknotes.go catches them).
//
// The calls that use no tasks stay on the relay path as they were: a task
// result is recognized by the scan the relay already makes of a
// 2026-07-28 result (conn.completeResult), and a 2025-11-25 CreateTaskResult
// only for a call that sent a task parameter.

// ExtensionTasks is the id of the 2026-07-28 tasks extension (SEP-2663).
const ExtensionTasks = "io.modelcontextprotocol/tasks"

// CodeMissingCapability is SEP-2575's error of a request that needs a
// capability the client did not declare (for the tasks methods, the tasks
// extension).
const CodeMissingCapability = -32021

// missingTasksData is the data of a CodeMissingCapability error for the
// tasks extension (SEP-2575: the capabilities the request needs).
var missingTasksData = []byte(`{"requiredCapabilities":{"extensions":{"` + ExtensionTasks + `":{}}}}`)

// codeInvalidParams is JSON-RPC's invalid params: SEP-2663's answer for an
// unknown task id.
const codeInvalidParams = -32602

// TasksRequestTimeout bounds a tasks request to a task's server (but for
// tasks/result, which waits for the task's end): a server that does not
// answer by then is answered for with an error.
const TasksRequestTimeout = time.Minute

// taskIDPrefix starts every task id the gateway issues.
const taskIDPrefix = "mcpt-"

// taskMACLen is how many bytes of the MAC a task id carries.
const taskMACLen = 16

// maxOwnedTasks bounds the tasks taskTable keeps per principal (for
// tasks/list): past it, the oldest are forgotten.
const maxOwnedTasks = 1024

// ownedTTL is how long a principal's record of tasks in the shared state
// (cluster.TasksKey) lives after its latest task.
const ownedTTL = 24 * time.Hour

// ownedQueue bounds the tasks waiting to be recorded in the shared state;
// past it, a task is recorded on this replica only (and logged).
const ownedQueue = 256

// taskTable holds the keys of the task ids the gateway issues, and, per
// principal, the 2025-11-25 tasks it named (for tasks/list).
type taskTable struct {
	once sync.Once
	keys [][]byte // (the first signs; each verifies, for a rotation)

	mu    sync.Mutex
	owned map[string][]taskRef // by principal ID, oldest first

	// The recording of tasks in the shared state: queue feeds the
	// recorder goroutine (start), which ends with the gateway's life and
	// closes done (wait).
	queue chan ownedTask
	done  chan struct{}
	box   *sealbox.Box // (cluster.TaskListPurpose)

	// request sends a tasks request to a task's server (nil: the host's,
	// host.Serving.Request; tests set one of their own).
	request func(ctx context.Context, server, version, method, name string, params, caps []byte) ([]byte, error)
}

// upstream sends a tasks request to a task's server (taskTable.request).
func (g *Gateway) upstream(ctx context.Context, server, version, method, name string, params, caps []byte) ([]byte, error) {
	if g.tasks.request != nil {
		return g.tasks.request(ctx, server, version, method, name, params, caps)
	}
	return g.h.Serving().Request(ctx, server, version, method, name, params, caps)
}

// ownedTask is a task to record for principal.
type ownedTask struct {
	principal string
	ref       taskRef
}

// taskRef is one task: its server, the protocol version of the session
// that created it, and the upstream's id.
type taskRef struct {
	server, version, upstream string
}

// storedRef is a taskRef in the shared state's record.
type storedRef struct {
	S string `json:"s"`
	V string `json:"v"`
	U string `json:"u"`
}

// start starts g's recorder of tasks in the shared state (owned by the
// gateway: Close ends it, and waits for it).
func (t *taskTable) start(g *Gateway) {
	t.queue = make(chan ownedTask, ownedQueue)
	t.done = make(chan struct{})
	t.box = g.keys.Box(cluster.TaskListPurpose)
	life := g.life
	go func() {
		defer close(t.done)
		for {
			select {
			case <-life.Done():
				return
			case o := <-t.queue:
				if err := t.record(life, g.state, o); err != nil {
					g.log.Warn("recording a task in the shared state failed: other replicas will not list it", "server", o.ref.server, "error", err)
				}
			}
		}
	}()
}

// wait waits for the recorder's end (the gateway's life ended).
func (t *taskTable) wait() {
	if t.done != nil {
		<-t.done
	}
}

// enqueue has o recorded in the shared state, without blocking.
func (t *taskTable) enqueue(o ownedTask) bool {
	select {
	case t.queue <- o:
		return true
	default:
		return false
	}
}

// record adds o to its principal's record in st (read, changed and
// written again under the record's lease, so that replicas recording at
// once lose none).
func (t *taskTable) record(ctx context.Context, st state.Backend, o ownedTask) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	key := cluster.TasksKey(o.principal)
	var release func()
	for {
		var err error
		release, err = st.Lease(ctx, key+":lease", 10*time.Second)
		if err == nil {
			break
		}
		if !errors.Is(err, state.ErrHeld) {
			return fmt.Errorf("taking the lease of the record: %w", err)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("taking the lease of the record: %w", ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
	defer release()
	refs, err := t.stored(ctx, st, o.principal)
	if err != nil {
		return err
	}
	add := storedRef{S: o.ref.server, V: o.ref.version, U: o.ref.upstream}
	for _, r := range refs {
		if r == add {
			return nil
		}
	}
	refs = append(refs, add)
	if len(refs) > maxOwnedTasks {
		refs = refs[len(refs)-maxOwnedTasks:]
	}
	b, err := json.Marshal(refs)
	if err != nil {
		return fmt.Errorf("encoding the record: %w", err)
	}
	if err := st.Put(ctx, key, t.box.Seal(nil, b, []byte(key)), ownedTTL); err != nil {
		return fmt.Errorf("writing the record: %w", err)
	}
	return nil
}

// stored returns principal's record in st (none: nil).
func (t *taskTable) stored(ctx context.Context, st state.Backend, principal string) ([]storedRef, error) {
	key := cluster.TasksKey(principal)
	sealed, err := st.Get(ctx, key)
	if errors.Is(err, state.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the record of tasks: %w", err)
	}
	b, err := t.box.Open(nil, sealed, []byte(key))
	if err != nil {
		return nil, fmt.Errorf("opening the record of tasks: %w", err)
	}
	var refs []storedRef
	if err := json.Unmarshal(b, &refs); err != nil {
		return nil, fmt.Errorf("decoding the record of tasks: %w", err)
	}
	return refs, nil
}

// taskKeys are the keys of task ids.
func (g *Gateway) taskKeys() [][]byte {
	g.tasks.once.Do(func() { g.tasks.keys = g.keys.MACKeys(cluster.TaskIDPurpose) })
	return g.tasks.keys
}

// own records t as one of principal's tasks, and reports whether it was
// new.
func (t *taskTable) own(principal string, ref taskRef) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.owned == nil {
		t.owned = map[string][]taskRef{}
	}
	refs := t.owned[principal]
	for _, r := range refs {
		if r == ref {
			return false
		}
	}
	if len(refs) >= maxOwnedTasks {
		refs = append(refs[:0], refs[1:]...)
	}
	t.owned[principal] = append(refs, ref)
	return true
}

// ownedBy returns principal's tasks on server.
func (t *taskTable) ownedBy(principal, server string) map[string]taskRef {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := map[string]taskRef{}
	for _, r := range t.owned[principal] {
		if r.server == server {
			out[r.upstream] = r
		}
	}
	return out
}

// sealTask is the task id the client of principal gets for ref.
func sealTask(key []byte, principal string, ref taskRef) string {
	b := make([]byte, 0, 2*binary.MaxVarintLen64+len(ref.server)+len(ref.version)+len(ref.upstream)+taskMACLen)
	b = binary.AppendUvarint(b, uint64(len(ref.server)))
	b = append(b, ref.server...)
	b = binary.AppendUvarint(b, uint64(len(ref.version)))
	b = append(b, ref.version...)
	b = append(b, ref.upstream...)
	b = append(b, taskMAC(key, principal, b)...)
	return taskIDPrefix + base64.RawURLEncoding.EncodeToString(b)
}

// openTask returns the task a task id names, if it is one the gateway
// issued to principal under one of keys.
func openTask(keys [][]byte, principal, id string) (ref taskRef, ok bool) {
	rest, ok := cutPrefix(id, taskIDPrefix)
	if !ok {
		return ref, false
	}
	b, err := base64.RawURLEncoding.DecodeString(rest)
	if err != nil || len(b) < taskMACLen+2 {
		return ref, false
	}
	payload, mac := b[:len(b)-taskMACLen], b[len(b)-taskMACLen:]
	verified := false
	for _, key := range keys {
		if hmac.Equal(mac, taskMAC(key, principal, payload)) {
			verified = true
			break
		}
	}
	if !verified {
		return ref, false
	}
	field := func() (string, bool) {
		n, k := binary.Uvarint(payload)
		if k <= 0 || n > uint64(len(payload)-k) {
			return "", false
		}
		s := string(payload[k : k+int(n)])
		payload = payload[k+int(n):]
		return s, true
	}
	if ref.server, ok = field(); !ok {
		return ref, false
	}
	if ref.version, ok = field(); !ok {
		return ref, false
	}
	ref.upstream = string(payload)
	return ref, ref.server != "" && ref.upstream != ""
}

func cutPrefix(s, prefix string) (string, bool) {
	if len(s) < len(prefix) || s[:len(prefix)] != prefix {
		return s, false
	}
	return s[len(prefix):], true
}

// taskMAC is the MAC of a task id's payload for principal.
func taskMAC(key []byte, principal string, payload []byte) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte("mcphost task id\x00"))
	m.Write([]byte(principal))
	m.Write([]byte{0})
	m.Write(payload)
	return m.Sum(nil)[:taskMACLen]
}

// taskIDs is the gateway as the conn.TaskIDs of its relayed calls.
type taskIDs Gateway

// Outward implements conn.TaskIDs: the task id ctx's caller gets for the
// task upstreamID that server's session of version created.
func (t *taskIDs) Outward(ctx context.Context, server, version, upstreamID string) string {
	g := (*Gateway)(t)
	who := callerID(ctx)
	ref := taskRef{server: server, version: version, upstream: upstreamID}
	if version < conn.NewProtocol && g.tasks.own(who, ref) && !g.tasks.enqueue(ownedTask{who, ref}) {
		g.log.Warn("too many tasks waiting to be recorded in the shared state: other replicas will not list this one", "server", server)
	}
	return sealTask(g.taskKeys()[0], who, ref)
}

// IsTasksRequest reports whether m is a request of a tasks method
// ("tasks/…", spelled without escapes), which the gateway answers itself
// (ServeTasks): the go-sdk server knows none of them.
func IsTasksRequest(m *wire.Message) bool {
	return m.Kind == wire.KindRequest && len(m.Method) > 8 && bytes.HasPrefix(m.Method, []byte(`"tasks/`))
}

// ServeTasks answers the tasks request m (IsTasksRequest) of a client of
// protocol version whose capabilities (its initialize's, raw JSON; nil:
// unknown) are caps, for ctx's caller, and returns the JSON-RPC response
// to write. A 2026-07-28 request's _meta names its version and
// capabilities, which take precedence. The task the request names is
// looked up by its id (openTask): one the gateway did not issue to this
// caller is answered -32602, as an unknown task; else the request goes to
// the task's server with the upstream's id, and its answer comes back
// with the gateway's id in place of the upstream's.
func (g *Gateway) ServeTasks(ctx context.Context, m *wire.Message, version string, caps []byte) []byte {
	method := string(m.Method[1 : len(m.Method)-1])
	for _, e := range m.Meta() {
		switch string(e.Key) {
		case "io.modelcontextprotocol/protocolVersion":
			if v, ok := rawjson.String(e.Value); ok {
				version = v
			}
		case "io.modelcontextprotocol/clientCapabilities":
			caps = e.Value
		}
	}
	modern := version >= conn.NewProtocol
	switch {
	case modern && method != "tasks/get" && method != "tasks/update" && method != "tasks/cancel",
		!modern && method != "tasks/get" && method != "tasks/result" && method != "tasks/list" && method != "tasks/cancel":
		return wire.Error(m.ID, -32601, "Method not found: "+method, nil)
	case modern && !hasExtension(caps, ExtensionTasks):
		return wire.Error(m.ID, CodeMissingCapability, "Missing required client capability: extensions."+ExtensionTasks, missingTasksData)
	case method == "tasks/list":
		return g.listTasks(ctx, m, version)
	}
	tid, ok := m.Param("taskId")
	var id string
	if ok {
		id, ok = rawjson.String(tid.Value)
	}
	if !ok {
		return wire.Error(m.ID, codeInvalidParams, "Invalid params: taskId must be a string", nil)
	}
	ref, ok := openTask(g.taskKeys(), callerID(ctx), id)
	if !ok || (ref.version >= conn.NewProtocol) != modern {
		return wire.Error(m.ID, codeInvalidParams, "Task not found: "+id, nil)
	}
	// params as the client sent them, but for the upstream's task id and
	// the client's _meta (the session's own, and the client's
	// capabilities, are sent instead).
	var params []byte
	for _, p := range m.ParamsMembers() {
		if string(p.Key) == "_meta" {
			continue
		}
		if len(params) > 0 {
			params = append(params, ',')
		}
		params = append(append(append(params, '"'), p.Key...), `":`...)
		if string(p.Key) == "taskId" {
			q, _ := json.Marshal(ref.upstream)
			params = append(params, q...)
			continue
		}
		params = append(params, p.Value...)
	}
	if !modern {
		caps = nil
	}
	if method != "tasks/result" { // (which waits for the task's end)
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, TasksRequestTimeout)
		defer cancel()
	}
	if sink := noteSinkOf(ctx); sink != nil && !modern {
		// Statuses the server sends on this request's own stream belong
		// to its caller, which owns id (it passed openTask).
		upstream := ref.upstream
		ctx = conn.WithTaskStatus(ctx, func(params json.RawMessage) {
			out, err := renameStatus(params, upstream, id)
			if err != nil {
				return // (another task's: not the caller's to see)
			}
			sink(id, wire.Notification(conn.MethodTaskStatus, out))
		})
	}
	resp, err := g.upstream(ctx, ref.server, ref.version, method, ref.upstream, params, caps)
	if err != nil {
		g.log.Warn("tasks request failed", "method", method, "server", ref.server, "error", err)
		return wire.Error(m.ID, jsonrpc.CodeInternalError, method+": the task's server could not be reached", nil)
	}
	out, ok := rewriteTaskResponse(resp, m.ID, ref.upstream, id)
	if !ok {
		return wire.Error(m.ID, jsonrpc.CodeInternalError, method+": invalid response from the task's server", nil)
	}
	return out
}

// hasExtension reports whether caps (a raw capabilities object) declare
// the extension id.
func hasExtension(caps []byte, id string) bool {
	if len(caps) == 0 {
		return false
	}
	var c struct {
		Extensions map[string]json.RawMessage `json:"extensions"`
	}
	if json.Unmarshal(caps, &c) != nil {
		return false
	}
	_, ok := c.Extensions[id]
	return ok
}

// errNotTask is an upstream's response that is not a JSON-RPC response.
var errNotTask = errors.New("not a JSON-RPC response")

// rewriteTaskResponse is resp, an upstream's response to a tasks request
// about its task upstream, under the client's id, with every mention of
// upstream as a task id (result.taskId, result._meta's related-task)
// replaced by the client's id for it, outward. An error response passes
// as it is (under the client's id).
func rewriteTaskResponse(resp, clientID []byte, upstream, outward string) ([]byte, bool) {
	var env struct {
		Result json.RawMessage `json:"result"`
	}
	if err := json.Unmarshal(resp, &env); err != nil {
		return nil, false
	}
	if env.Result == nil {
		return wire.RewriteResponse(resp, clientID)
	}
	result, err := renameTask(env.Result, func(id string) (string, bool) {
		return outward, id == upstream
	})
	if err != nil {
		return nil, false
	}
	return wire.Result(clientID, result), true
}

// relatedTask is the _meta key naming the task a 2025-11-25 result
// belongs to.
const relatedTask = "io.modelcontextprotocol/related-task"

// renameTask returns result (a JSON object) with its taskId and its
// _meta's related-task taskId renamed by rename (kept when rename says
// false).
func renameTask(result json.RawMessage, rename func(string) (string, bool)) (json.RawMessage, error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(result, &obj); err != nil {
		return nil, err
	}
	if obj == nil {
		return nil, errNotTask
	}
	set := func(o map[string]json.RawMessage) bool {
		var id string
		if raw, ok := o["taskId"]; !ok || json.Unmarshal(raw, &id) != nil {
			return false
		}
		nid, ok := rename(id)
		if !ok {
			return false
		}
		o["taskId"], _ = json.Marshal(nid)
		return true
	}
	changed := set(obj)
	if raw, ok := obj["_meta"]; ok {
		var meta map[string]json.RawMessage
		if json.Unmarshal(raw, &meta) == nil {
			var rt map[string]json.RawMessage
			if r, ok := meta[relatedTask]; ok && json.Unmarshal(r, &rt) == nil && rt != nil && set(rt) {
				meta[relatedTask], _ = json.Marshal(rt)
				obj["_meta"], _ = json.Marshal(meta)
				changed = true
			}
		}
	}
	if !changed {
		return result, nil
	}
	return json.Marshal(obj)
}

// listTasks answers a 2025-11-25 tasks/list: the caller's tasks, merged
// across the servers (each asked for its list; a server that fails or
// knows no tasks/list adds none), each under the caller's id for it. No
// cursor is given: the list is whole.
func (g *Gateway) listTasks(ctx context.Context, m *wire.Message, version string) []byte {
	ctx, cancel := context.WithTimeout(ctx, TasksRequestTimeout)
	defer cancel()
	who := callerID(ctx)
	tasks := []json.RawMessage{}
	// (The caller's tasks created through other replicas too.)
	shared, err := g.tasks.stored(ctx, g.state, who)
	if err != nil {
		g.log.Warn("tasks/list: the shared record of tasks could not be read: listing this replica's", "error", err)
	}
	for _, server := range g.h.Serving().ServerNames() {
		mine := g.tasks.ownedBy(who, server)
		for _, r := range shared {
			if r.S == server && r.V < conn.NewProtocol {
				mine[r.U] = taskRef{server: r.S, version: r.V, upstream: r.U}
			}
		}
		if len(mine) == 0 {
			continue
		}
		var cursor string
		for range 100 { // (pages: bounded)
			var params []byte
			if cursor != "" {
				q, _ := json.Marshal(cursor)
				params = append([]byte(`"cursor":`), q...)
			}
			resp, err := g.h.Serving().Request(ctx, server, version, "tasks/list", "", params, nil)
			if err != nil {
				g.log.Warn("tasks/list failed", "server", server, "error", err)
				break
			}
			var r struct {
				Result *struct {
					Tasks      []json.RawMessage `json:"tasks"`
					NextCursor string            `json:"nextCursor"`
				} `json:"result"`
			}
			if json.Unmarshal(resp, &r) != nil || r.Result == nil {
				break
			}
			for _, t := range r.Result.Tasks {
				named := false
				out, err := renameTask(t, func(id string) (string, bool) {
					ref, ok := mine[id]
					if !ok {
						return "", false
					}
					named = true
					return sealTask(g.taskKeys()[0], who, ref), true
				})
				if err == nil && named {
					tasks = append(tasks, out)
				}
			}
			if cursor = r.Result.NextCursor; cursor == "" {
				break
			}
		}
	}
	b, _ := json.Marshal(map[string]any{"tasks": tasks})
	return wire.Result(m.ID, b)
}

// tasksCapability is the tasks capability the gateway declares to a
// client before 2026-07-28 when a server declared one (2025-11-25's
// experimental tasks): what it routes — task-augmented tools/call,
// tasks/list and tasks/cancel (tasks/get and tasks/result need no
// declaration).
var tasksCapability = json.RawMessage(`{"list":{},"cancel":{},"requests":{"tools":{"call":{}}}}`)

// tasksCapsMiddleware declares the tasks the gateway routes when a server
// (the caller's, for per-user ones) declared them: to a client before
// 2026-07-28, the tasks capability in its initialize result — the go-sdk's
// ServerCapabilities has no field for it: the result is given one of its
// own (initializeWithTasks); to one of 2026-07-28 (initialize,
// server/discover), the tasks extension in capabilities.extensions, which
// is declared only when a server declared it. A tools/call whose retry was
// answered with a task (conn.TaskResultOf) is answered with that task as
// it is (taskResultOut).
func (g *Gateway) tasksCapsMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if err == nil && method == "tools/call" {
			if r, ok := res.(*mcp.CallToolResult); ok {
				if t, ok := conn.TaskResultOf(r); ok {
					return &taskResultOut{raw: t}, nil
				}
			}
			return res, err
		}
		if err != nil || method != "initialize" && method != "server/discover" {
			return res, err
		}
		switch r := res.(type) {
		case *mcp.InitializeResult:
			if r.ProtocolVersion < conn.NewProtocol {
				if g.h.Serving().HasTasks(ctx) {
					return &initializeWithTasks{InitializeResult: r}, nil
				}
				return res, err
			}
			r.Capabilities = g.withTasksExtension(ctx, r.Capabilities)
		case *mcp.DiscoverResult:
			r.Capabilities = g.withTasksExtension(ctx, r.Capabilities)
		}
		return res, err
	}
}

// taskResultOut is a task result (SEP-2663's resultType "task") of a
// call's retry (conn.TaskResultOf), written as the server gave it but for
// its taskId (already the client's): the go-sdk's CallToolResult has no
// field for it.
type taskResultOut struct {
	mcp.ResultBase
	raw conn.TaskResult
}

// MarshalJSON writes the task result as it is.
func (r *taskResultOut) MarshalJSON() ([]byte, error) { return r.raw, nil }

// withTasksExtension returns caps declaring the tasks extension if and
// only if a server declared it (a copy when it changes).
func (g *Gateway) withTasksExtension(ctx context.Context, caps *mcp.ServerCapabilities) *mcp.ServerCapabilities {
	has := g.h.Serving().HasExtension(ctx, ExtensionTasks)
	declared := false
	if caps != nil {
		_, declared = caps.Extensions[ExtensionTasks]
	}
	if has == declared {
		return caps
	}
	c := &mcp.ServerCapabilities{}
	if caps != nil {
		*c = *caps
	}
	c.Extensions = maps.Clone(c.Extensions)
	if has {
		if c.Extensions == nil {
			c.Extensions = map[string]any{}
		}
		c.Extensions[ExtensionTasks] = map[string]any{}
	} else {
		delete(c.Extensions, ExtensionTasks)
	}
	return c
}

// initializeWithTasks is an initialize result whose capabilities declare
// tasksCapability.
type initializeWithTasks struct {
	*mcp.InitializeResult
}

// MarshalJSON encodes the result with capabilities.tasks added.
func (r *initializeWithTasks) MarshalJSON() ([]byte, error) {
	b, err := json.Marshal(r.InitializeResult)
	if err != nil {
		return nil, err
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(b, &obj); err != nil {
		return nil, err
	}
	var caps map[string]json.RawMessage
	if c, ok := obj["capabilities"]; ok {
		if err := json.Unmarshal(c, &caps); err != nil {
			return nil, err
		}
	}
	if caps == nil {
		caps = map[string]json.RawMessage{}
	}
	caps["tasks"] = tasksCapability
	if obj["capabilities"], err = json.Marshal(caps); err != nil {
		return nil, err
	}
	return json.Marshal(obj)
}

// taskMetaKey is the _meta member under which a 2025-11-25 task-augmented
// tools/call that the go-sdk server answers carries its task parameter
// (CarryTask): the go-sdk's CallToolParams have no field for it. Its name
// ends with a random suffix drawn once per process, so that no client can
// pass a task parameter under it itself (a member a client names
// "dev.mcphost/task" is no task parameter: the call stays a plain one).
var taskMetaKey = mcpmeta.GatewayPrefix + "task-" + rand.Text()

// CarryTask returns line, a tools/call request m whose task parameter (a
// 2025-11-25 task-augmented call) the go-sdk server is to see, with that
// parameter moved into its _meta under taskMetaKey, where callTool finds
// it and sends it upstream (a call of such a client is then answered with
// the upstream's CreateTaskResult, its task under an id of the
// gateway's). ok is false when m has no task parameter (line is to be
// passed as it is). Only such calls are decoded here.
func CarryTask(m *wire.Message, line []byte) (out []byte, ok bool) {
	c, ok := m.Call()
	if !ok || c.Task == nil {
		return line, false
	}
	return CarryTaskOf(line)
}

// CarryTaskOf is CarryTask of line, a tools/call request already parsed
// (one the relay took, when the raw lane does not take it after all): ok
// is false when it has no task parameter.
func CarryTaskOf(line []byte) (out []byte, ok bool) {
	var env map[string]json.RawMessage
	if json.Unmarshal(line, &env) != nil {
		return line, false
	}
	var params map[string]json.RawMessage
	if json.Unmarshal(env["params"], &params) != nil || params == nil || params["task"] == nil {
		return line, false
	}
	var meta map[string]json.RawMessage
	if raw, ok := params["_meta"]; ok && json.Unmarshal(raw, &meta) != nil {
		return line, false
	}
	if meta == nil {
		meta = map[string]json.RawMessage{} // (none, or "_meta": null: as {})
	}
	meta[taskMetaKey] = params["task"]
	delete(params, "task")
	var err error
	if params["_meta"], err = json.Marshal(meta); err != nil {
		return line, false
	}
	if env["params"], err = json.Marshal(params); err != nil {
		return line, false
	}
	if out, err = json.Marshal(env); err != nil {
		return line, false
	}
	return out, true
}

// carriedTask takes the task parameter CarryTask put in meta out of it
// (raw JSON; nil: none, or not an object).
func carriedTask(meta mcp.Meta) []byte {
	v, ok := meta[taskMetaKey]
	if !ok {
		return nil
	}
	delete(meta, taskMetaKey)
	b, err := json.Marshal(v)
	if err != nil || len(b) == 0 || b[0] != '{' {
		return nil
	}
	return b
}
