package streamable

import (
	"encoding/json"
	"testing"

	"github.com/mcphost/mcphost/host/gateway/wire"
)

// FuzzListenRequests: listenRequests never panics, and on a body the
// strict scan accepts it counts exactly the subscriptions/listen requests
// (with an id) encoding/json finds, each element of a batch; the id it
// returns is JSON.
func FuzzListenRequests(f *testing.F) {
	for _, seed := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen","params":{}}`,
		`{"jsonrpc":"2.0","id":"a","method":"subscriptions\/listen"}`,
		`{"jsonrpc":"2.0","id":1,"method":"\u0073ubscriptions/listen"}`,
		`{"jsonrpc":"2.0","method":"subscriptions/listen"}`,
		`[{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen"},{"jsonrpc":"2.0","id":2,"method":"ping"},{"id":3,"method":"subscriptions/listen"}]`,
		`{"id":1,"method":"subscriptions/listen","method":"ping"}`,
		`{"id":1,"Method":"subscriptions/listen"}`,
		`{"id":1,"method":"subscriptions/listen"}{"id":2}`,
		"\x00\xff{}", `[]`, `[[]]`, ``,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var b wire.Body
		if wire.ParseBody(&b, body) != nil {
			return
		}
		n, id := listenRequests(&b)
		if n < 0 || id != nil && !json.Valid(id) {
			t.Fatalf("listenRequests: %d, id %q", n, id)
		}
		var elems []json.RawMessage
		if err := json.Unmarshal(body, &elems); err != nil {
			elems = []json.RawMessage{body}
		}
		want := 0
		for _, e := range elems {
			var m map[string]json.RawMessage
			if json.Unmarshal(e, &m) != nil {
				continue
			}
			var method string
			_, hasID := m["id"]
			if json.Unmarshal(m["method"], &method) == nil && method == wire.MethodListen && hasID {
				want++
			}
		}
		if n != want {
			t.Fatalf("listenRequests(%q) = %d, want %d", body, n, want)
		}
	})
}
