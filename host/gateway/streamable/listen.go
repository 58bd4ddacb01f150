package streamable

import (
	"errors"
	"net/http"

	"github.com/mcphost/mcphost/host/gateway"
	"github.com/mcphost/mcphost/host/gateway/wire"
)

// listenRequests returns how many subscriptions/listen requests a POST
// body holds (each element of a batch counts), and the id to answer a
// refusal with (nil, null, for a batch).
func listenRequests(body *wire.Body) (n int, id []byte) {
	if m := body.One(); m != nil {
		if listenRequest(m) {
			return 1, m.ID
		}
		return 0, nil
	}
	return body.Listens(), nil
}

// listenRequest reports whether m is a subscriptions/listen request (a
// message with that method, however escaped, and an id).
func listenRequest(m *wire.Message) bool {
	return m.Kind == wire.KindRequest && m.MethodIs(wire.MethodListen)
}

// admitListen admits the listen requests of a POST body of owner, or
// answers it 503 with a JSON-RPC error and reports false. It returns r
// with the admission in its context, for the streams' handlers, and
// release, which counts them out when the POST is answered.
func (f *Front) admitListen(w http.ResponseWriter, r *http.Request, owner string, body *wire.Body, max, perPrincipal int) (_ *http.Request, release func(), ok bool) {
	n, id := listenRequests(body)
	if n == 0 {
		return r, func() {}, true
	}
	ctx, release, err := f.gw.AdmitListen(r.Context(), owner, n, max, perPrincipal)
	var capped *gateway.ListenCapsError
	if errors.As(err, &capped) {
		writeJSONRPCError(w, http.StatusServiceUnavailable, wire.Error(id, gateway.CodeTooManySessions, capped.Error(), nil))
		reason := "too many subscription streams"
		if capped.PerPrincipal {
			reason += " for this principal"
		}
		f.refused(r, http.StatusServiceUnavailable, reason)
		return r, nil, false
	}
	return r.WithContext(ctx), release, true
}
