package wire

import (
	"encoding/json"
	"fmt"
	"testing"
)

func TestWriters(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		got  []byte
		want string
	}{
		{"error", Error([]byte(`"a"`), -32600, "bad <x>", nil), `{"jsonrpc":"2.0","id":"a","error":{"code":-32600,"message":"bad \u003cx\u003e"}}`},
		{"error with data", Error([]byte(`7`), -32029, "rate limit", []byte(`{"retryAfterSeconds":2}`)), `{"jsonrpc":"2.0","id":7,"error":{"code":-32029,"message":"rate limit","data":{"retryAfterSeconds":2}}}`},
		{"result", Result([]byte(`1`), []byte(`{"x":1}`)), `{"jsonrpc":"2.0","id":1,"result":{"x":1}}`},
		{"error result", ErrorResult(`no "such" tool`), `{"content":[{"type":"text","text":"no \"such\" tool"}],"isError":true}`},
		{"request", Request([]byte(`"r-1"`), "logging/setLevel", []byte(`{"level":"debug"}`)), `{"jsonrpc":"2.0","id":"r-1","method":"logging/setLevel","params":{"level":"debug"}}`},
		{"request without params", Request([]byte(`"p"`), "ping", nil), `{"jsonrpc":"2.0","id":"p","method":"ping"}`},
		{"notification", Notification("notifications/initialized", nil), `{"jsonrpc":"2.0","method":"notifications/initialized"}`},
		{"method as JSON", Request([]byte(`1`), "a\x01\u2028é\xff", nil), `{"jsonrpc":"2.0","id":1,"method":"a\u0001\u2028é\ufffd"}`},
		{"notification method as JSON", Notification("a\x02\"", nil), `{"jsonrpc":"2.0","method":"a\u0002\""}`},
		{"cancelled", Cancelled([]byte(`3`), "cancelled by the client"), `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3,"reason":"cancelled by the client"}}`},
		{"call", CallRequest([]byte(`"i-1"`), []byte(`"echo"`), []byte(`{"m":1}`), nil, nil, []byte(`"traceparent":"t"`)), `{"jsonrpc":"2.0","id":"i-1","method":"tools/call","params":{"name":"echo","arguments":{"m":1},"_meta":{"traceparent":"t"}}}`},
		{"call with meta and caps", CallRequest([]byte(`"i-1"`), []byte(`"echo"`), nil, []byte(`"a":1`), []byte(`{}`), []byte(`"traceparent":"t"`)), `{"jsonrpc":"2.0","id":"i-1","method":"tools/call","params":{"name":"echo","_meta":{"a":1,"io.modelcontextprotocol/clientCapabilities":{},"traceparent":"t"}}}`},
		{"call with caps only", CallRequest([]byte(`3`), []byte(`"echo"`), nil, nil, []byte(`{"x":{}}`), nil), `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","_meta":{"io.modelcontextprotocol/clientCapabilities":{"x":{}}}}}`},
		{"bare call", CallRequest([]byte(`2`), []byte(`"echo"`), nil, nil, nil, nil), `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo"}}`},
		{"duplicate id", DuplicateID([]byte(`5`)), `{"jsonrpc":"2.0","id":5,"error":{"code":-32600,"message":"invalid request: a request with this id is already in flight"}}`},
		{"invalid id", InvalidID(), `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request: the id must be a string or an integer"}}`},
		{"not JSON-RPC", NotJSONRPC(nil), `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request: not a JSON-RPC 2.0 message"}}`},
		{"strict: duplicate", StrictError(ErrDuplicate), `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request: duplicate or case-variant member names"}}`},
		{"strict: name", StrictError(ErrName), `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request: member names must be ASCII, without escapes"}}`},
		{"strict: not an object", StrictError(ErrNotObject), `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request: a message must be one JSON object"}}`},
		{"strict: syntax", StrictError(fmt.Errorf("x: %w", ErrSyntax)), `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}}`},
		{"strict: too deep", StrictError(ErrTooDeep), `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}}`},
	}
	for _, tc := range tests {
		if string(tc.got) != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.name, tc.got, tc.want)
		}
		if !json.Valid(tc.got) {
			t.Errorf("%s: invalid JSON %s", tc.name, tc.got)
		}
	}
}

func TestRewriteResponse(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, resp, id, want string
		fail                 bool
	}{
		{name: "id spliced", resp: `{"jsonrpc":"2.0","id":17,"result":{"content":[]}}`, id: `"c"`, want: `{"jsonrpc":"2.0","id":"c","result":{"content":[]}}`},
		{name: "spacing kept", resp: "{ \"id\" : 17 , \"jsonrpc\":\"2.0\",\"error\":{\"code\":1,\"message\":\"m\"}}", id: `2`, want: "{ \"id\" : 2 , \"jsonrpc\":\"2.0\",\"error\":{\"code\":1,\"message\":\"m\"}}"},
		{name: "reserved meta dropped", resp: `{"jsonrpc":"2.0","id":1,"result":{"content":[],"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"s"},"k":1}}}`, id: `9`,
			want: `{"jsonrpc":"2.0","id":9,"result":{"content":[],"_meta":{"k":1}}}`},
		{name: "meta emptied", resp: `{"jsonrpc":"2.0","id":1,"result":{"_meta":{"io.modelcontextprotocol/serverInfo":{}},"content":[]}}`, id: `9`,
			want: `{"jsonrpc":"2.0","id":9,"result":{"content":[]}}`},
		{name: "no id", resp: `{"jsonrpc":"2.0","result":{}}`, id: `1`, fail: true},
		{name: "not JSON", resp: `{"jsonrpc":`, id: `1`, fail: true},
		{name: "bad meta", resp: `{"jsonrpc":"2.0","id":1,"result":{"_meta":"io.modelcontextprotocol/"}}`, id: `1`, fail: true},
	}
	for _, tc := range tests {
		got, ok := RewriteResponse([]byte(tc.resp), []byte(tc.id))
		if ok == tc.fail || string(got) != tc.want {
			t.Errorf("%s: %s, %v; want %s", tc.name, got, ok, tc.want)
		}
	}
}

func TestErrorCode(t *testing.T) {
	t.Parallel()
	tests := []struct{ resp, want string }{
		{`{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"m"}}`, "-32601"},
		{`{"jsonrpc":"2.0","id":1,"result":{}}`, ""},
		{`{"jsonrpc":"2.0","id":1,"error":[]}`, ""},
		{`nope`, ""},
	}
	for _, tc := range tests {
		if got := ErrorCode([]byte(tc.resp)); string(got) != tc.want {
			t.Errorf("ErrorCode(%s) = %s, want %s", tc.resp, got, tc.want)
		}
	}
}

// TestMethodRequest: a request of another method than tools/call carries
// its params' members, then _meta as CallRequest writes it.
func TestMethodRequest(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name                string
		members, meta, caps string
		want                string
	}{
		{"bare", ``, ``, ``, `{"jsonrpc":"2.0","id":"i","method":"tasks/list","params":{}}`},
		{"members", `"taskId":"t"`, ``, ``, `{"jsonrpc":"2.0","id":"i","method":"tasks/list","params":{"taskId":"t"}}`},
		{"meta", `"taskId":"t"`, `"a":1`, `{}`, `{"jsonrpc":"2.0","id":"i","method":"tasks/list","params":{"taskId":"t","_meta":{"a":1,"io.modelcontextprotocol/clientCapabilities":{}}}}`},
		{"caps only", ``, ``, `{}`, `{"jsonrpc":"2.0","id":"i","method":"tasks/list","params":{"_meta":{"io.modelcontextprotocol/clientCapabilities":{}}}}`},
	} {
		var caps []byte
		if tc.caps != "" {
			caps = []byte(tc.caps)
		}
		got := MethodRequest([]byte(`"i"`), "tasks/list", []byte(tc.members), []byte(tc.meta), caps, nil)
		if string(got) != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.name, got, tc.want)
		}
	}
}
