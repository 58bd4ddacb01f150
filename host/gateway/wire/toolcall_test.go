package wire

import (
	"encoding/json"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// implementationOK is what clientInfoOK must answer: whether encoding/json
// decodes v, an object, into an mcp.Implementation (as the go-sdk does).
func implementationOK(v []byte) bool {
	var info mcp.Implementation
	return len(v) > 0 && v[0] == '{' && json.Unmarshal(v, &info) == nil
}

func TestClientInfoOK(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want bool
	}{
		{`{"name":"c","version":"1"}`, true},
		{`{}`, true},
		{`{"name":"c","version":"1","title":"T","description":"d","websiteUrl":"https://x"}`, true},
		{`{"name":null,"version":null}`, true},
		{`{"name":"c","extra":{"a":[1,2]},"n":5}`, true},
		{`{"name":"\u0063\u00e9"}`, true},
		{`{"name":1}`, false},
		{`{"version":true}`, false},
		{`{"title":{}}`, false},
		{`{"websiteUrl":[]}`, false},
		{`{"Name":1}`, false},  // (a case variant is the field to encoding/json)
		{`{"NAME":"c"}`, true}, // (decoded: a string is fine)
		{`{"icons":[{"src":"a"}]}`, true},
		{`{"icons":[{"src":1}]}`, false},
		{`{"icons":5}`, false},
		{`{"ICONS":5}`, false},
		{`{"name":"a","name":"b"}`, true}, // (a duplicate: decoded, the last wins)
		{`{"name":1,"name":"b"}`, false},  // (encoding/json reports the first)
		{`{"nam\u0065":1}`, false},        // (an escaped name: decoded)
		{`{"nameſ":1}`, true},             // (no field of that name)
		{`null`, false},
		{`[]`, false},
		{`"c"`, false},
		{`5`, false},
	}
	for _, tc := range tests {
		if got := clientInfoOK([]byte(tc.in)); got != tc.want {
			t.Errorf("clientInfoOK(%s) = %v, want %v", tc.in, got, tc.want)
		}
		if got := implementationOK([]byte(tc.in)); got != tc.want {
			t.Errorf("the table is wrong: encoding/json takes %s: %v", tc.in, got)
		}
	}
}

// FuzzClientInfo holds clientInfoOK to encoding/json's decoding into an
// mcp.Implementation, for any valid JSON value.
func FuzzClientInfo(f *testing.F) {
	for _, s := range []string{
		`{"name":"c","version":"1"}`, `{"Name":1}`, `{"icons":[{"src":"a","sizes":["1x1"]}]}`,
		`{"name":1,"name":"b"}`, `{"nameſ":1}`, `{"Kind":1}`, `null`, `{"title":null,"x":{"y":[]}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if !json.Valid(b) {
			return
		}
		if got, want := clientInfoOK(b), implementationOK(b); got != want {
			t.Fatalf("clientInfoOK(%q) = %v; encoding/json: %v", b, got, want)
		}
	})
}

// BenchmarkParseNew is the parse of one relayed tools/call of a 2026-07-28
// go-sdk client (protocol version, capabilities and client info in
// _meta): it allocates nothing but the tool's name.
func BenchmarkParseNew(b *testing.B) {
	line := []byte(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"_meta":{"io.modelcontextprotocol/clientCapabilities":{"roots":{"listChanged":true}},"io.modelcontextprotocol/clientInfo":{"name":"bench","version":""},"io.modelcontextprotocol/protocolVersion":"2026-07-28"},"arguments":{"message":"benchmark payload: the quick brown fox jumps over the lazy dog"},"name":"mcp__demo__echo"}}`)
	b.ReportAllocs()
	for b.Loop() {
		var m Message
		if err := Parse(&m, line); err != nil {
			b.Fatal(err)
		}
		c, _ := m.Call()
		if !c.Plain {
			b.Fatal("not plain")
		}
		sink += len(c.Name) + len(c.ProtocolVersion)
	}
}
