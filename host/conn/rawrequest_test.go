package conn

import (
	"encoding/json"
	"testing"
)

// TestRawRequest: a raw call's message carries the captured _meta (without
// the go-sdk client's capabilities when the call names its client's), the
// client's capabilities and the trace context, each when there is one, in
// one valid JSON object.
func TestRawRequest(t *testing.T) {
	t.Parallel()
	const (
		meta   = `"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"sampling":{}}`
		noCaps = `"io.modelcontextprotocol/protocolVersion":"2026-07-28"`
		trace  = `"traceparent":"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"`
		head   = `{"jsonrpc":"2.0","id":"mcphost-raw-1","method":"tools/call","params":{"name":"a\u003cb"`
	)
	for _, tc := range []struct {
		name        string
		captured    bool
		args        string
		caps, trace []byte
		want        string
	}{
		{"nothing", false, "", nil, nil, head + `}}`},
		{"args", false, `{"x":1}`, nil, nil, head + `,"arguments":{"x":1}}}`},
		{"captured", true, "", nil, nil, head + `,"_meta":{` + meta + `}}}`},
		{"captured, caps", true, `{}`, []byte(`{"elicitation":{}}`), nil,
			head + `,"arguments":{},"_meta":{` + noCaps + `,"io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}}}}`},
		{"captured, caps, trace", true, "", []byte(`{}`), []byte(trace),
			head + `,"_meta":{` + noCaps + `,"io.modelcontextprotocol/clientCapabilities":{},` + trace + `}}}`},
		{"captured, trace", true, "", nil, []byte(trace), head + `,"_meta":{` + meta + `,` + trace + `}}}`},
		{"caps only", false, "", []byte(`{}`), nil, head + `,"_meta":{"io.modelcontextprotocol/clientCapabilities":{}}}}`},
		{"trace only", false, "", nil, []byte(trace), head + `,"_meta":{` + trace + `}}}`},
		{"caps, trace", false, "", []byte(`{}`), []byte(trace), head + `,"_meta":{"io.modelcontextprotocol/clientCapabilities":{},` + trace + `}}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var m rawMeta
			if tc.captured {
				mb, nb := []byte(meta), []byte(noCaps)
				m.meta.Store(&mb)
				m.noCaps.Store(&nb)
			}
			id, msg := m.request(rawRequest{tool: "a<b", args: []byte(tc.args), caps: tc.caps, trace: tc.trace})
			if id != `"mcphost-raw-1"` {
				t.Errorf("id %s", id)
			}
			if string(msg) != tc.want {
				t.Errorf("message\n%s\nwant\n%s", msg, tc.want)
			}
			if !json.Valid(msg) {
				t.Errorf("not JSON: %s", msg)
			}
		})
	}
}
