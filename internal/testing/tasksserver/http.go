package tasksserver

import (
	"encoding/base64"
	"errors"
	"io"
	"net/http"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// maxBody bounds a request body.
const maxBody = 4 << 20

// ServeHTTP serves the stateless streamable HTTP wire: each POST carries one
// JSON-RPC message and is answered with one JSON response (202 for
// notifications and responses). There are no sessions, so a request's client
// capabilities are those in its _meta. The Mcp-Method and Mcp-Name headers,
// where present, must match the body (SEP-2243), else -32020.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "only POST is served (no sessions, no standalone stream)", http.StatusMethodNotAllowed)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	if err != nil {
		http.Error(w, "reading the request: "+err.Error(), http.StatusRequestEntityTooLarge)
		return
	}
	req, jerr := parseMessage(body)
	if jerr == nil && req == nil {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	if jerr == nil {
		jerr = checkHeaders(r.Header, req)
	}
	var id jsonrpc.ID
	if req != nil {
		if !req.id.IsValid() && jerr == nil {
			w.WriteHeader(http.StatusAccepted) // a notification: nothing to do.
			return
		}
		id = req.id
	}
	var result any
	var callErr error
	if jerr != nil {
		callErr = jerr
	} else {
		result, callErr = s.handle(r.Context(), nil, req)
	}
	data, err := response(id, result, callErr)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(httpStatus(r.Header.Get("Mcp-Protocol-Version"), callErr))
	_, _ = w.Write(data)
}

// httpStatus is the HTTP status of an answer: for 2026-07-28 requests
// (SEP-2575, SEP-2243) a protocol error maps to 404 or 400.
func httpStatus(version string, err error) int {
	var jerr *jsonrpc.Error
	if version < "2026-07-28" || !errors.As(err, &jerr) {
		return http.StatusOK
	}
	switch jerr.Code {
	case jsonrpc.CodeMethodNotFound:
		return http.StatusNotFound
	case jsonrpc.CodeInvalidParams, jsonrpc.CodeParseError, jsonrpc.CodeInvalidRequest,
		CodeHeaderMismatch, CodeMissingRequiredClientCapability:
		return http.StatusBadRequest
	}
	return http.StatusOK
}

// checkHeaders validates the SEP-2243 routing headers present against the
// body. Absent headers are accepted (clients before 2026-07-28 send none).
func checkHeaders(h http.Header, req *request) *jsonrpc.Error {
	if v := h.Values("Mcp-Method"); len(v) > 0 {
		if len(v) > 1 || strings.TrimSpace(v[0]) != req.method {
			return &jsonrpc.Error{Code: CodeHeaderMismatch, Message: "the Mcp-Method header does not match the request's method"}
		}
	}
	want, ok := req.nameHeader()
	if v := h.Values("Mcp-Name"); ok && len(v) > 0 {
		if len(v) > 1 || decodeHeaderValue(strings.TrimSpace(v[0])) != want {
			return &jsonrpc.Error{Code: CodeHeaderMismatch, Message: "the Mcp-Name header does not match the request's params"}
		}
	}
	return nil
}

// decodeHeaderValue decodes SEP-2243's "=?base64?…?=" form of a header
// value; any other value is returned as it is.
func decodeHeaderValue(v string) string {
	enc, ok := strings.CutPrefix(v, "=?base64?")
	if !ok {
		return v
	}
	enc, ok = strings.CutSuffix(enc, "?=")
	if !ok {
		return v
	}
	b, err := base64.StdEncoding.DecodeString(enc)
	if err != nil {
		return v
	}
	return string(b)
}
