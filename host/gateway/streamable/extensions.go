package streamable

import (
	"net/http"

	"github.com/mcphost/mcphost/host/gateway"
	"github.com/mcphost/mcphost/host/gateway/wire"
)

// extensionHTTP answers, on a session (a client before 2026-07-28), a
// request of a method an extension adds (gateway.ExtensionMethod:
// skills/list, skills/get, resources/directory/read): the go-sdk's session transport would refuse
// it with a plain-text 400, knowing only the standard methods. (Without a
// session, the go-sdk's own stateless handler hands it to the server.)
// It reports whether it answered.
func (f *Front) extensionHTTP(w http.ResponseWriter, r *http.Request, m *wire.Message, hs *httpSession) bool {
	if hs == nil || !gateway.ExtensionMethod(m) {
		return false
	}
	writeJSONRPCError(w, http.StatusOK, f.gw.ServeExtension(r.Context(), hs.ss, m))
	return true
}
