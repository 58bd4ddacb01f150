package conn

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
)

// TestRawLaneResponse: a raw call's response is picked out of the stream by
// its id, also when the message starts with white space or spans lines (a
// plugin's may); a request or another id is left to the go-sdk.
func TestRawLaneResponse(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, msg string // msg: %s is the call's id
		taken     bool
	}{
		{"plain", `{"jsonrpc":"2.0","id":%s,"result":{}}`, true},
		{"leading white space", "\n \t{\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{}}", true},
		{"across lines", "{\"jsonrpc\":\"2.0\",\n\"id\":%s,\n\"result\":{}}", true},
		{"a request with the id", `{"jsonrpc":"2.0","id":%s,"method":"ping"}`, false},
		{"another id", `{"jsonrpc":"2.0","id":"mcphost-raw-999","result":{}}`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var sent []byte
			l := newRawLane(func(msg []byte) error { sent = msg; return nil })
			got := make(chan []byte, 1)
			if err := l.StartRaw(context.Background(), rawRequest{tool: "t"}, func(resp []byte, err error) { got <- resp }); err != nil {
				t.Fatal(err)
			}
			id := string(sent[strings.Index(string(sent), `"id":`)+5 : strings.Index(string(sent), `,"method"`)])
			msg := tc.msg
			if strings.Contains(msg, "%s") {
				msg = strings.Replace(msg, "%s", id, 1)
			}
			if taken := l.response([]byte(msg)); taken != tc.taken {
				t.Fatalf("taken = %v, want %v", taken, tc.taken)
			}
			if !tc.taken {
				return
			}
			if resp := <-got; strings.ContainsAny(string(resp), "\r\n") || !strings.Contains(string(resp), `"result"`) {
				t.Errorf("response %q", resp)
			}
		})
	}
}

// TestAppendJSONString holds the raw lane's encoding of a tool's name to
// encoding/json's.
func TestAppendJSONString(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"", "echo", "a_b-c.d", "with space", `q"uote`, `back\slash`, "<tag>&", "tab\t", "\x00", "é", "日本", "\x7f", "\xff", "\u2028"} {
		want, _ := json.Marshal(s)
		if got := appendJSONString([]byte("x"), s); string(got) != "x"+string(want) {
			t.Errorf("appendJSONString(%q) = %s, want x%s", s, got, want)
		}
	}
}
