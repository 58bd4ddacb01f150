package tasksserver

import (
	"context"
	"net/http"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// FuzzParseMessage feeds arbitrary client input to the request parser, the
// header checks and the dispatcher: none may panic, a parsed request keeps
// its method, and every answer encodes.
func FuzzParseMessage(f *testing.F) {
	for _, seed := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"greet","arguments":{"name":"x"}}}`,
		`{"jsonrpc":"2.0","id":"a","method":"tasks/update","params":{"taskId":"t","inputResponses":{"k":{"action":"accept"}},` + withTasks + `}}`,
		`{"jsonrpc":"2.0","id":2,"method":"tasks/get","params":{"taskId":7}}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"test_tool_with_task","inputResponses":{"user_name":{"action":"accept","content":{"name":"A"}}},` + withTasks + `}}`,
		`{"jsonrpc":"2.0","id":4,"method":"initialize","params":{"capabilities":{"extensions":null}}}`,
		`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"slow_compute","arguments":{"seconds":1e9}}}`,
		`{"jsonrpc":"2.0","id":6,"result":{}}`,
		`[1,2]`, `{"jsonrpc":"2.0","id":1,"method":"x","params":[1]}`, `{`,
	} {
		f.Add([]byte(seed), "tools/call", "=?base64?Z3JlZXQ=?=")
	}
	f.Fuzz(func(t *testing.T, data []byte, method, name string) {
		s := New(Options{})
		defer s.Close()
		req, jerr := parseMessage(data)
		if req == nil {
			if jerr != nil {
				if _, err := response(jsonrpc.ID{}, nil, jerr); err != nil {
					t.Fatalf("encoding the parse error: %v", err)
				}
			}
			return
		}
		if jerr == nil {
			h := http.Header{}
			h.Set("Mcp-Method", method)
			h.Set("Mcp-Name", name)
			jerr = checkHeaders(h, req)
		}
		if jerr != nil {
			if _, err := response(req.id, nil, jerr); err != nil {
				t.Fatalf("encoding %v: %v", jerr, err)
			}
			return
		}
		ctx, cancel := context.WithCancel(context.Background())
		cancel() // synchronous tools end at once.
		res, err := s.handle(ctx, &session{}, req)
		if _, eerr := response(req.id, res, err); eerr != nil {
			t.Fatalf("encoding the answer to %s: %v", data, eerr)
		}
	})
}
