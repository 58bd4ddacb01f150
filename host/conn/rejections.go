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

	"github.com/hashicorp/go-hclog"
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
// words. Such an answer to a notification, which has no answer to fail, is
// logged, and passed to the go-sdk as accepted (202). 401, 403 and 404 keep
// their meaning to the go-sdk (authorization, a lost session), and answers
// to responses are left as they are.
type requestRejections struct {
	base http.RoundTripper
	log  hclog.Logger
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
