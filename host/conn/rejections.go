package conn

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/hashicorp/go-hclog"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/mcphost/mcphost/host/gateway/wire"
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
// words — unless the session itself is refused: a server that restarted
// answers every request of the old session so (the TypeScript SDK's example
// server: 400 "No valid session ID provided"), and the host must make a new
// one. So a refused request of a session (one with an Mcp-Session-Id) is
// first followed by a ping on the same session; when the ping is refused
// too (an HTTP 4xx), or the refused request was a ping, the go-sdk is told
// the session is gone as the specification has servers say it (404), and the
// host makes a new session and sends the call once more (Manager.Do). Such an
// answer to a notification, which has no answer to fail, is logged, and
// passed to the go-sdk as accepted (202). 401, 403 and 404 keep their
// meaning to the go-sdk (authorization, a lost session), and answers to
// responses are left as they are.
type requestRejections struct {
	base http.RoundTripper
	log  hclog.Logger
}

const (
	// rejectionShown caps the part of a server's error body put in the error.
	rejectionShown = 200
	// probeTimeout bounds the ping that tells a refused request from a
	// refused session.
	probeTimeout = 10 * time.Second
)

func (t *requestRejections) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(req)
	if err != nil || resp.StatusCode < 400 || resp.StatusCode >= 500 {
		return resp, err
	}
	if req.Method == http.MethodGet && resp.StatusCode == http.StatusBadRequest && req.Header.Get("Mcp-Session-Id") != "" {
		// The session's stream of server messages, refused: if the session
		// is, tell the go-sdk so, as for a call below. (Else the go-sdk
		// fails the connection with an error no one can tell from others.)
		if t.sessionRefused(req) {
			t.log.Warn("the server refused the session's stream and a ping on the session; making a new session")
			resp.Body.Close()
			return sessionGone(resp), nil
		}
		return resp, nil
	}
	if req.Method != http.MethodPost || req.GetBody == nil {
		return resp, nil
	}
	switch resp.StatusCode {
	case http.StatusUnauthorized, http.StatusForbidden, http.StatusNotFound, http.StatusTooManyRequests:
		return resp, nil // the go-sdk's own handling (429 is transient to it)
	}
	msg, ok := postedRequest(req)
	if !ok {
		return resp, nil
	}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	if !msg.IsCall() {
		t.log.Warn("the server refused a notification", "method", msg.Method, "error", rejection(resp.StatusCode, body).Message)
		resp.StatusCode, resp.Status = http.StatusAccepted, "202 Accepted"
		resp.Body, resp.ContentLength = http.NoBody, 0
		resp.Header = resp.Header.Clone()
		resp.Header.Del("Content-Type")
		resp.Header.Del("Content-Length")
		return resp, nil
	}
	if req.Header.Get("Mcp-Session-Id") != "" && (msg.Method == "ping" || t.sessionRefused(req)) {
		// The session is gone: to the go-sdk, as the specification says a
		// server tells it (404).
		t.log.Warn("the server refused a request and a ping on its session; making a new session", "method", msg.Method, "error", rejection(resp.StatusCode, body).Message)
		return sessionGone(resp), nil
	}
	id := msg.ID
	if answer, err := jsonrpc.DecodeMessage(body); err == nil {
		if r, ok := answer.(*jsonrpc.Response); ok && r.Error != nil && r.ID == id {
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

// sessionGone makes resp the answer by which a server says a session is
// gone (404, no body): the go-sdk fails the connection with
// mcp.ErrSessionMissing, and the host makes a new session (Manager.Do).
func sessionGone(resp *http.Response) *http.Response {
	resp.StatusCode, resp.Status = http.StatusNotFound, "404 Not Found"
	resp.Body, resp.ContentLength = http.NoBody, 0
	resp.Header = resp.Header.Clone()
	resp.Header.Del("Content-Type")
	resp.Header.Del("Content-Length")
	return resp
}

// probeID is the id of the ping sent after a refused request. Its answer
// is read here only (its id is not one of the go-sdk's, which are
// numbers).
const probeID = `"mcphost-probe"`

// sessionRefused reports whether the server refuses a ping posted with the
// headers of req (its session, protocol version and authorization): an
// HTTP 4xx other than 429. A ping that fails otherwise (a network error, a
// timeout, a 5xx) tells nothing about the session, which is kept.
func (t *requestRejections) sessionRefused(req *http.Request) bool {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(req.Context()), probeTimeout)
	defer cancel()
	probe := req.Clone(ctx)
	probe.Method = http.MethodPost
	probe.Header.Set("Content-Type", "application/json")
	probe.Header.Set("Accept", "application/json, text/event-stream")
	probe.Header.Del("Last-Event-Id")
	body := wire.Request([]byte(probeID), "ping", nil)
	probe.Body = io.NopCloser(bytes.NewReader(body))
	probe.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	probe.ContentLength = int64(len(body))
	probe.Header.Del("Content-Length")
	resp, err := t.base.RoundTrip(probe)
	if err != nil {
		return false
	}
	resp.Body.Close() // (an answer as an SSE stream: the status is enough)
	return resp.StatusCode >= 400 && resp.StatusCode < 500 && resp.StatusCode != http.StatusTooManyRequests
}

// postedRequest is the JSON-RPC request or notification req posts, if it
// posts one.
func postedRequest(req *http.Request) (*jsonrpc.Request, bool) {
	rc, err := req.GetBody()
	if err != nil {
		return nil, false
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		return nil, false
	}
	msg, err := jsonrpcmsg.Decode(b)
	if err != nil {
		return nil, false
	}
	r, ok := msg.(*jsonrpc.Request)
	return r, ok
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
		return &jsonrpc.Error{Code: knownCode(e.Error.Code), Message: shownRejection(e.Error.Message)}
	}
	msg := fmt.Sprintf("the server refused the request: HTTP %d %s", status, http.StatusText(status))
	if s := shownRejection(string(body)); s != "" {
		msg += ": " + s
	}
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: msg}
}

// knownCode is code if it is one of JSON-RPC's (parse error, invalid
// request, method not found, invalid params, internal error) or in its range
// for servers' own errors (-32099 to -32000, where MCP's are); else internal
// error, so that a server's arbitrary code does not reach a client as if it
// meant something.
func knownCode(code int64) int64 {
	switch {
	case code == jsonrpc.CodeParseError, code >= jsonrpc.CodeInternalError && code <= jsonrpc.CodeInvalidRequest,
		code >= -32099 && code <= -32000:
		return code
	}
	return jsonrpc.CodeInternalError
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
