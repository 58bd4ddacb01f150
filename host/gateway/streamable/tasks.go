package streamable

import (
	"net/http"

	"github.com/mcphost/mcphost/host/gateway/wire"
)

// serveTasks answers a tasks request (gateway.IsTasksRequest), which the
// go-sdk handler does not know: the gateway routes it to the task's server
// for the request's principal (gateway.ServeTasks). A client of a session
// (2025-11-25) is known by its capabilities; a 2026-07-28 request names its
// own.
func (f *Front) serveTasks(w http.ResponseWriter, r *http.Request, m *wire.Message, hs *httpSession, sessions *httpSessions) {
	var caps []byte
	if hs != nil {
		caps = sessions.caps(hs)
	}
	ctx, cancel := f.gw.Abortable(r.Context())
	defer cancel()
	writeRelayed(w, http.StatusOK, f.gw.ServeTasks(ctx, m, r.Header.Get("Mcp-Protocol-Version"), caps))
}
