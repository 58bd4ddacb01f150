package conn

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/mcphost/mcphost/host/redact"
	"github.com/mcphost/mcphost/internal/jsonrpcmsg"
)

// requestRejections is the http.RoundTripper under a streamable HTTP
// server's go-sdk client that keeps one refused request from ending the
// session. The go-sdk client (v1.8.0) fails the whole connection — every
// call in flight, of every user sharing it — when a POST is answered with an
// HTTP error whose body is not a JSON-RPC error response it can decode: a
// plain-text "400 Bad Request", or the TypeScript SDK's error response with
// "id": null (its answer to an unsupported protocol version header, say).
// Such an answer to a request is that request's failure: it is given the
// request's id, so the go-sdk fails that call alone, with the server's
// words. 401, 403 and 404 keep their meaning to the go-sdk (authorization,
// a lost session), and answers to notifications and responses are left as
// they are.
type requestRejections struct {
	base http.RoundTripper
}

// rejectionShown caps the part of a server's error body put in the error.
const rejectionShown = 200

func (t *requestRejections) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(req)
	if err != nil || req.Method != http.MethodPost || resp.StatusCode < 400 || resp.StatusCode >= 500 || req.GetBody == nil {
		return resp, err
	}
	switch resp.StatusCode {
	case http.StatusUnauthorized, http.StatusForbidden, http.StatusNotFound, http.StatusTooManyRequests:
		return resp, nil // the go-sdk's own handling (429 is transient to it)
	}
	id, ok := requestID(req)
	if !ok {
		return resp, nil
	}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	if msg, err := jsonrpc.DecodeMessage(body); err == nil {
		if r, ok := msg.(*jsonrpc.Response); ok && r.Error != nil && r.ID == id {
			resp.Body = io.NopCloser(bytes.NewReader(body)) // already the call's answer
			return resp, nil
		}
	}
	out, err := jsonrpc.EncodeMessage(&jsonrpc.Response{ID: id, Error: rejection(resp.StatusCode, body)})
	if err != nil {
		return nil, fmt.Errorf("encoding the server's refusal: %w", err)
	}
	resp.Body = io.NopCloser(bytes.NewReader(out))
	resp.ContentLength = int64(len(out))
	resp.Header = resp.Header.Clone()
	resp.Header.Set("Content-Type", "application/json")
	resp.Header.Set("Content-Length", strconv.Itoa(len(out)))
	return resp, nil
}

// requestID is the id of the JSON-RPC request req posts, if it posts one.
func requestID(req *http.Request) (jsonrpc.ID, bool) {
	rc, err := req.GetBody()
	if err != nil {
		return jsonrpc.ID{}, false
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		return jsonrpc.ID{}, false
	}
	msg, err := jsonrpcmsg.Decode(b)
	if err != nil {
		return jsonrpc.ID{}, false
	}
	r, ok := msg.(*jsonrpc.Request)
	if !ok || !r.IsCall() {
		return jsonrpc.ID{}, false
	}
	return r.ID, true
}

// rejection is the JSON-RPC error for an HTTP error answer to a request:
// the code and message of the JSON-RPC error it holds, if any, else
// invalid request with the status and the start of the body (scrubbed of
// secrets, cut, on one line).
func rejection(status int, body []byte) *jsonrpc.Error {
	var e struct {
		Error *struct {
			Code    int64  `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &e) == nil && e.Error != nil && e.Error.Message != "" {
		return &jsonrpc.Error{Code: e.Error.Code, Message: shownRejection(e.Error.Message)}
	}
	msg := fmt.Sprintf("the server refused the request: HTTP %d %s", status, http.StatusText(status))
	if s := shownRejection(string(body)); s != "" {
		msg += ": " + s
	}
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: msg}
}

func shownRejection(s string) string {
	s = strings.Join(strings.Fields(redact.String(s)), " ")
	if len(s) > rejectionShown {
		n := rejectionShown
		for n > 0 && !utf8.RuneStart(s[n]) {
			n--
		}
		s = s[:n] + "…"
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}
