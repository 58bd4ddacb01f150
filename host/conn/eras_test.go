package conn

import (
	"encoding/json"
	"reflect"
	"testing"
)

func TestCompleteResult(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, in string
		older    string // what a client of an earlier version gets; "": sent again (input required)
	}{
		{"complete", `{"jsonrpc":"2.0","id":"r1","result":{"content":[],"resultType":"complete","isError":false}}`,
			`{"jsonrpc":"2.0","id":"r1","result":{"content":[],"isError":false}}`},
		{"complete first", `{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","content":[{"type":"text","text":"a,b"}]}}`,
			`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"a,b"}]}}`},
		{"escaped complete", `{"jsonrpc":"2.0","id":1,"result":{"resultType":"c\u006fmplete"}}`, `{"jsonrpc":"2.0","id":1,"result":{}}`},
		{"only member", `{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete"}}`, `{"jsonrpc":"2.0","id":1,"result":{}}`},
		{"no resultType", `{"jsonrpc":"2.0","id":1,"result":{"content":[]}}`, `{"jsonrpc":"2.0","id":1,"result":{"content":[]}}`},
		{"error", `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"x"}}`, `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"x"}}`},
		{"input required", `{"jsonrpc":"2.0","id":1,"result":{"resultType":"input_required","inputRequests":{}}}`, ""},
		{"escaped input required", `{"jsonrpc":"2.0","id":1,"result":{"resultType":"input\u005frequired"}}`, ""},
		// The call ran: never sent again.
		{"unknown type", `{"jsonrpc":"2.0","id":1,"result":{"resultType":"later"}}`, `{"jsonrpc":"2.0","id":1,"result":{"resultType":"later"}}`},
		{"result not an object", `{"jsonrpc":"2.0","id":1,"result":[1]}`, `{"jsonrpc":"2.0","id":1,"result":[1]}`},
		{"not JSON", `{"jsonrpc":`, `{"jsonrpc":`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, ok := completeResult([]byte(tc.in), true)
			if tc.older == "" {
				if ok {
					t.Fatalf("taken: %s", out)
				}
				if _, ok := completeResult([]byte(tc.in), false); ok {
					t.Fatal("taken for a current client")
				}
				return
			}
			if !ok || string(out) != tc.older {
				t.Fatalf("got %s (%v), want %s", out, ok, tc.older)
			}
			// For a client of NewProtocol: nothing removed.
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
		if !ok || string(out) == string(in) {
			return // (as it is: what does not scan is refused when its id is put in)
		}
		var a, b map[string]any
		if json.Unmarshal(in, &a) != nil {
			return // (the scan is stricter than encoding/json in places, and looser in none that matter here)
		}
		if err := json.Unmarshal(out, &b); err != nil {
			t.Fatalf("output is not JSON: %v: %s", err, out)
		}
		if r, isObj := a["result"].(map[string]any); isObj {
			switch rt, has := r["resultType"]; {
			case rt == "input_required":
				t.Fatalf("a result that needs input was taken")
			case has && rt == "complete":
				delete(r, "resultType")
			}
		}
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("changed beyond resultType:\n in: %s\nout: %s", in, out)
		}
	})
}
