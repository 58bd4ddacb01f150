package streamable

import (
	"net/http"
	"sync/atomic"

	"github.com/mcphost/mcphost/host/conn"
	"github.com/mcphost/mcphost/host/gateway"
	"github.com/mcphost/mcphost/host/gateway/wire"
	"github.com/mcphost/mcphost/internal/rawjson"
)

// codeHeaderMismatch is SEP-2243's error of a 2026-07-28 request whose
// routing headers (Mcp-Method, Mcp-Name) do not match its body.
const codeHeaderMismatch = -32020

// serveTasks answers a tasks request (gateway.IsTasksRequest), which the
// go-sdk handler does not know: the gateway routes it to the task's server
// for the request's principal (gateway.ServeTasks). A client of a session
// (2025-11-25) is known by its capabilities; a 2026-07-28 request names its
// own, and its routing headers must match its body (Mcp-Method the method,
// Mcp-Name the task id the client holds), as the go-sdk handler checks
// those of the methods it knows. A 2025-11-25 tasks/get or tasks/result of
// a session answers with an event stream when statuses of its task are
// written on it before its response (deliverNote: no GET of the session).
func (f *Front) serveTasks(w http.ResponseWriter, r *http.Request, m *wire.Message, hs *httpSession, sessions *httpSessions) {
	version := r.Header.Get("Mcp-Protocol-Version")
	if version >= conn.NewProtocol {
		var taskID []byte
		if p, ok := m.Param("taskId"); ok {
			if s, ok := rawjson.String(p.Value); ok {
				taskID = []byte(s)
			}
		}
		method := m.Method[1 : len(m.Method)-1]
		mm, hasMethod := r.Header["Mcp-Method"]
		mn, hasName := r.Header["Mcp-Name"]
		if hasMethod && (len(mm) != 1 || mm[0] != string(method)) || hasName && taskID != nil && (len(mn) != 1 || mn[0] != string(taskID)) {
			f.refused(r, http.StatusBadRequest, "header mismatch")
			writeRelayed(w, http.StatusBadRequest, wire.Error(m.ID, codeHeaderMismatch, "Header mismatch: Mcp-Method and Mcp-Name must match the request's method and params.taskId", nil))
			return
		}
	}
	var caps []byte
	if hs != nil {
		caps = sessions.caps(hs)
	}
	ctx, cancel := f.gw.Abortable(r.Context())
	defer cancel()
	rw := &relayWriter{w: w}
	var sunk atomic.Bool // a status was sent on the request's stream
	polling := false
	if hs != nil {
		ctx = gateway.WithNoteSink(ctx, func(key string, msg []byte) {
			sunk.Store(true)
			hs.notes.Add(gateway.QueuedNote{Key: key, Msg: msg})
		})
		if id := polledTask(m, version); id != "" {
			// Its task's statuses may go on this POST's stream
			// (deliverNote).
			polling = true
			defer sessions.poll(hs, id, rw)()
		}
	}
	resp := f.gw.ServeTasks(ctx, m, version, caps)
	status := http.StatusOK
	if version >= conn.NewProtocol {
		status = errorStatus(resp)
	}
	if polling && sunk.Load() {
		sessions.flushNotes(r.Context(), hs)
	}
	rw.final(status, resp)
}

// polledTask is the task id (the client's) of m, a 2025-11-25 tasks/get or
// tasks/result under version, whose task's statuses may go on its stream;
// "" for another request.
func polledTask(m *wire.Message, version string) string {
	if version >= conn.NewProtocol || !m.IsMethod("tasks/get") && !m.IsMethod("tasks/result") {
		return ""
	}
	p, ok := m.Param("taskId")
	if !ok {
		return ""
	}
	id, _ := rawjson.String(p.Value)
	return string(id)
}
