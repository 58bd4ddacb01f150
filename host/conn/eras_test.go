package conn

import (
	"encoding/json"
	"reflect"
	"testing"
)

func TestCompleteResult(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, in, want string // want "": refused
	}{
		{"complete", `{"jsonrpc":"2.0","id":"r1","result":{"content":[],"resultType":"complete","isError":false}}`,
			`{"jsonrpc":"2.0","id":"r1","result":{"content":[],"isError":false}}`},
		{"complete first", `{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","content":[{"type":"text","text":"a,b"}]}}`,
			`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"a,b"}]}}`},
		{"only member", `{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete"}}`, `{"jsonrpc":"2.0","id":1,"result":{}}`},
		{"no resultType", `{"jsonrpc":"2.0","id":1,"result":{"content":[]}}`, `{"jsonrpc":"2.0","id":1,"result":{"content":[]}}`},
		{"error", `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"x"}}`, `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"x"}}`},
		{"input required", `{"jsonrpc":"2.0","id":1,"result":{"resultType":"input_required","inputRequests":{}}}`, ""},
		{"unknown type", `{"jsonrpc":"2.0","id":1,"result":{"resultType":"later"}}`, ""},
		{"escaped complete", `{"jsonrpc":"2.0","id":1,"result":{"resultType":"c\u006fmplete"}}`, ""},
		{"result not an object", `{"jsonrpc":"2.0","id":1,"result":[1]}`, ""},
		{"not JSON", `{"jsonrpc":`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, ok := completeResult([]byte(tc.in), true)
			if tc.want == "" {
				if ok {
					t.Fatalf("taken: %s", out)
				}
				return
			}
			if !ok || string(out) != tc.want {
				t.Fatalf("got %s (%v), want %s", out, ok, tc.want)
			}
			// For a client of NewProtocol: the same verdict, nothing removed.
			if out, ok := completeResult([]byte(tc.in), false); !ok || string(out) != tc.in {
				t.Fatalf("for a current client: got %s (%v), want it as it is", out, ok)
			}
		})
	}
}

// FuzzCompleteResult: what completeResult takes for an older client is the
// response without the result's resultType, nothing else changed.
func FuzzCompleteResult(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":"r1","result":{"content":[],"resultType":"complete"}}`))
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"result":{"resultType":"input_required"}}`))
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"x"}}`))
	f.Fuzz(func(t *testing.T, in []byte) {
		out, ok := completeResult(in, true)
		if !ok {
			return
		}
		var a, b map[string]any
		if json.Unmarshal(in, &a) != nil {
			return // (the scan is stricter than encoding/json in places, and looser in none that matter here)
		}
		if err := json.Unmarshal(out, &b); err != nil {
			t.Fatalf("output is not JSON: %v: %s", err, out)
		}
		if r, isObj := a["result"].(map[string]any); isObj {
			if rt, has := r["resultType"]; has && rt != "complete" {
				t.Fatalf("a result of type %v was taken", rt)
			}
			delete(r, "resultType")
		}
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("changed beyond resultType:\n in: %s\nout: %s", in, out)
		}
	})
}
