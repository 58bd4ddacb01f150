package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"runtime"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		in     string
		err    error
		kind   Kind
		method string
		id     string
		key    string
		params []string // the names of params' members
		meta   []string // ... and of _meta's
	}{
		{name: "request", in: `{"jsonrpc":"2.0","id":1,"method":"ping"}`, kind: KindRequest, method: "ping", id: "1", key: "n1"},
		{name: "request, id 5e1", in: `{"jsonrpc":"2.0","id":5e1,"method":"ping"}`, kind: KindRequest, method: "ping", id: "5e1", key: "n50"},
		{name: "notification", in: ` {"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n", kind: KindNotification, method: "notifications/initialized"},
		{name: "response", in: `{"jsonrpc":"2.0","id":"a","result":{}}`, kind: KindResponse, id: `"a"`, key: "sa"},
		{name: "params and meta", in: `{"jsonrpc":"2.0","id":"x","method":"tools/list","params":{"cursor":"c","_meta":{"progressToken":1}}}`,
			kind: KindRequest, method: "tools/list", id: `"x"`, key: "sx", params: []string{"cursor", "_meta"}, meta: []string{"progressToken"}},
		{name: "many members", in: `{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":1,"b":2,"c":3,"d":4,"e":5,"f":6,"g":7,"h":8,"i":9,"j":10}}`,
			kind: KindRequest, method: "m", id: "1", key: "n1", params: strings.Split("a b c d e f g h i j", " ")},
		{name: "duplicate", in: `{"jsonrpc":"2.0","id":1,"ID":2,"method":"ping"}`, err: ErrDuplicate},
		{name: "duplicate in params", in: `{"jsonrpc":"2.0","id":1,"method":"m","params":{"name":"a","Name":"b"}}`, err: ErrDuplicate},
		{name: "duplicate in meta", in: `{"jsonrpc":"2.0","id":1,"method":"m","params":{"_meta":{"progressToken":1,"ProgressToken":2}}}`, err: ErrDuplicate},
		{name: "escaped name", in: `{"jsonrpc":"2.0","id":1,"meth\u006fd":"ping"}`, err: ErrName},
		{name: "non-ASCII name", in: `{"paramſ":1}`, err: ErrName},
		{name: "two objects", in: `{"a":1}{"b":2}`, err: ErrSyntax},
		{name: "array", in: `[{"id":1}]`, err: ErrNotObject},
		{name: "not JSON", in: "\x00\xff{}", err: ErrNotObject},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var m Message
			err := Parse(&m, []byte(tc.in))
			if tc.err != nil {
				if !errors.Is(err, tc.err) {
					t.Fatalf("Parse: %v, want %v", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if m.Kind != tc.kind || string(m.ID) != tc.id || tc.method != "" && !m.IsMethod(tc.method) {
				t.Errorf("kind %v, id %s, method %s; want %v, %s, %s", m.Kind, m.ID, m.Method, tc.kind, tc.id, tc.method)
			}
			if key, err := m.IDKey(); key != tc.key || (err != nil) != (tc.key == "") {
				t.Errorf("IDKey = %q, %v; want %q", key, err, tc.key)
			}
			if got := names(m.ParamsMembers()); got != strings.Join(tc.params, ",") {
				t.Errorf("params %s, want %v", got, tc.params)
			}
			if got := names(m.Meta()); got != strings.Join(tc.meta, ",") {
				t.Errorf("meta %s, want %v", got, tc.meta)
			}
		})
	}
}

func names(ms []Member) string {
	var s []string
	for _, m := range ms {
		s = append(s, string(m.Key))
	}
	return strings.Join(s, ",")
}

func TestMethod(t *testing.T) {
	t.Parallel()
	var m Message
	if err := Parse(&m, []byte(`{"jsonrpc":"2.0","id":1,"method":"tools\/call","params":{"name":"a"}}`)); err != nil {
		t.Fatal(err)
	}
	if m.IsMethod("tools/call") || !m.MethodIs("tools/call") {
		t.Errorf("an escaped method: IsMethod %v, MethodIs %v; want false, true", m.IsMethod("tools/call"), m.MethodIs("tools/call"))
	}
	if _, ok := m.Call(); ok {
		t.Error("an escaped tools/call was read as a call (the go-sdk decides it)")
	}
}

func TestCancelledKey(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in  string
		key string
	}{
		{in: `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":5e1}}`, key: "n50"},
		{in: `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"a","reason":"x"}}`, key: "sa"},
		{in: `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1.5}}`},
		{in: `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{}}`},
		{in: `{"jsonrpc":"2.0","method":"notifications/progress","params":{"requestId":1}}`},
	}
	for _, tc := range tests {
		var m Message
		if err := Parse(&m, []byte(tc.in)); err != nil {
			t.Fatal(err)
		}
		if key, ok := m.CancelledKey(); key != tc.key || ok != (tc.key != "") {
			t.Errorf("CancelledKey(%s) = %q, %v; want %q", tc.in, key, ok, tc.key)
		}
	}
}

func TestCall(t *testing.T) {
	t.Parallel()
	const v = `"io.modelcontextprotocol/protocolVersion":"2026-07-28"`
	tests := []struct {
		name    string
		params  string
		id      string
		version string // the envelope's jsonrpc member ("": "2.0"; "-": none)
		want    ToolCall
		call    bool // a tools/call request at all
	}{
		{name: "JSON-RPC 1.0", version: `"1.0"`, params: `{"name":"t"}`, call: true, want: ToolCall{Name: "t"}},
		{name: "no jsonrpc member", version: "-", params: `{"name":"t"}`, call: true, want: ToolCall{Name: "t"}},
		{name: "jsonrpc escaped", version: `"\u0032.0"`, params: `{"name":"t"}`, call: true, want: ToolCall{Name: "t"}},
		{name: "plain", params: `{"name":"mcp__a__echo","arguments":{"m":1}}`, call: true,
			want: ToolCall{Name: "mcp__a__echo", Arguments: []byte(`{"m":1}`), Plain: true}},
		{name: "no arguments", params: `{"name":"t"}`, call: true, want: ToolCall{Name: "t", Plain: true}},
		{name: "escaped name", params: `{"name":"\u0074"}`, call: true, want: ToolCall{Name: "t", Plain: true}},
		{name: "reserved meta", params: `{"name":"t","_meta":{` + v + `,"io.modelcontextprotocol/clientCapabilities":{"x":{}},"io.modelcontextprotocol/clientInfo":{"name":"c","version":"1"}}}`, call: true,
			want: ToolCall{Name: "t", ProtocolVersion: "2026-07-28", HasProtocolVersion: true, Capabilities: []byte(`{"x":{}}`), Plain: true}},
		{name: "trace", params: `{"name":"t","_meta":{"traceparent":"00-a-b-01","baggage":"k=v"}}`, call: true,
			want: ToolCall{Name: "t", Trace: []byte(`"traceparent":"00-a-b-01","baggage":"k=v"`), Plain: true}},
		{name: "string id", id: `"a"`, params: `{"name":"t"}`, call: true, want: ToolCall{Name: "t", Plain: true}},
		{name: "negative id", id: `-1`, params: `{"name":"t"}`, call: true, want: ToolCall{Name: "t", Plain: true}},
		{name: "null id", id: `null`, params: `{"name":"t"}`, call: true, want: ToolCall{Name: "t"}},
		{name: "progress token", params: `{"name":"t","_meta":{"progressToken":1}}`, call: true, want: ToolCall{Name: "t"}},
		{name: "log level", params: `{"name":"t","_meta":{"io.modelcontextprotocol/logLevel":"debug"}}`, call: true, want: ToolCall{Name: "t"}},
		{name: "trace not a string", params: `{"name":"t","_meta":{"traceparent":1}}`, call: true, want: ToolCall{Name: "t"}},
		{name: "version not a string", params: `{"name":"t","_meta":{"io.modelcontextprotocol/protocolVersion":1}}`, call: true, want: ToolCall{Name: "t", HasProtocolVersion: true}},
		{name: "empty version", params: `{"name":"t","_meta":{"io.modelcontextprotocol/protocolVersion":""}}`, call: true, want: ToolCall{Name: "t", HasProtocolVersion: true, Plain: true}},
		{name: "capabilities not an object", params: `{"name":"t","_meta":{"io.modelcontextprotocol/clientCapabilities":[]}}`, call: true, want: ToolCall{Name: "t"}},
		{name: "bad client info", params: `{"name":"t","_meta":{"io.modelcontextprotocol/clientInfo":{"name":1}}}`, call: true, want: ToolCall{Name: "t"}},
		{name: "meta not an object", params: `{"name":"t","_meta":1}`, call: true, want: ToolCall{Name: "t"}},
		{name: "arguments not an object", params: `{"name":"t","arguments":[1]}`, call: true, want: ToolCall{Name: "t", Arguments: []byte(`[1]`)}},
		{name: "name not a string", params: `{"name":1}`, call: true, want: ToolCall{}},
		{name: "other member", params: `{"name":"t","other":{}}`, call: true, want: ToolCall{Name: "t"}},
		// (2025-11-25's task parameter is forwarded as it is: tasks.go.)
		{name: "task", params: `{"name":"t","task":{"ttl":1}}`, call: true, want: ToolCall{Name: "t", Task: []byte(`{"ttl":1}`), Plain: true}},
		{name: "task not an object", params: `{"name":"t","task":1}`, call: true, want: ToolCall{Name: "t", Task: []byte(`1`)}},
		{name: "params not an object", params: `[]`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			id := tc.id
			if id == "" {
				id = "7"
			}
			env := `"jsonrpc":"2.0",`
			switch tc.version {
			case "":
			case "-":
				env = ""
			default:
				env = `"jsonrpc":` + tc.version + ","
			}
			var m Message
			if err := Parse(&m, []byte(`{`+env+`"id":`+id+`,"method":"tools/call","params":`+tc.params+`}`)); err != nil {
				t.Fatal(err)
			}
			c, ok := m.Call()
			if ok != tc.call {
				t.Fatalf("Call ok %v, want %v", ok, tc.call)
			}
			if !ok {
				return
			}
			got, _ := json.Marshal(c)
			want, _ := json.Marshal(&tc.want)
			if string(got) != string(want) {
				t.Errorf("Call = %s\nwant   %s", got, want)
			}
		})
	}
	var n Message
	if err := Parse(&n, []byte(`{"jsonrpc":"2.0","method":"tools/call","params":{"name":"t"}}`)); err != nil {
		t.Fatal(err)
	}
	if _, ok := n.Call(); ok {
		t.Error("a tools/call notification was read as a call")
	}
}

func TestSetTool(t *testing.T) {
	t.Parallel()
	var m Message
	if err := Parse(&m, []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo"}}`)); err != nil {
		t.Fatal(err)
	}
	if _, resolved := m.Tool(); resolved {
		t.Error("a tool before SetTool")
	}
	m.SetTool("mcp__a__echo")
	if tool, resolved := m.Tool(); !resolved || tool != "mcp__a__echo" {
		t.Errorf("Tool = %q, %v", tool, resolved)
	}
	m.SetTool("")
	if tool, resolved := m.Tool(); !resolved || tool != "" {
		t.Errorf("Tool of a tool not served = %q, %v", tool, resolved)
	}
}

func TestParseBody(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in         string
		batch      bool
		n, listens int
		err        error
	}{
		{in: `{"jsonrpc":"2.0","id":1,"method":"ping"}`, n: 1},
		{in: `{"jsonrpc":"2.0","method":"subscriptions/listen"}`},
		{in: `{"jsonrpc":"2.0","id":1,"method":"subscriptions\/listen"}`, n: 1, listens: 1},
		{in: " [{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}, {\"jsonrpc\":\"2.0\",\"method\":\"n\"}]\n", batch: true, n: 1},
		{in: `[{"id":1,"method":"subscriptions/listen"},{"id":2,"method":"subscriptions/listen"},{"method":"subscriptions/listen"},{"id":3,"result":{}}]`, batch: true, n: 2, listens: 2},
		{in: `[]`, batch: true},
		{in: `[{"id":1},{"id":1,"Id":2}]`, batch: true, err: ErrDuplicate},
		{in: `[{"id":1},]`, batch: true, err: ErrSyntax},
		{in: `[1]`, batch: true, err: ErrNotObject},
		{in: ``, err: ErrNotObject},
	}
	for _, tc := range tests {
		var b Body
		err := ParseBody(&b, []byte(tc.in))
		if tc.err != nil {
			if !errors.Is(err, tc.err) {
				t.Errorf("ParseBody(%s): %v, want %v", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || b.Batch != tc.batch || b.Requests() != tc.n || b.Listens() != tc.listens || (b.One() != nil) == tc.batch {
			t.Errorf("ParseBody(%s): %v, batch %v, %d requests, %d listens; want %v, %d, %d", tc.in, err, b.Batch, b.Requests(), b.Listens(), tc.batch, tc.n, tc.listens)
		}
	}
}

// FuzzParse holds Parse to encoding/json and to the go-sdk's reading: what
// it accepts is one valid JSON object; its kind follows the method and id
// members; an IDKey it accepts is the id's value; a tools/call's name is
// the decoded params.name.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","arguments":{}}}`,
		`{"jsonrpc":"2.0","id":"x","method":"tools/call","params":{"name":"\u0061","_meta":{"traceparent":"t","io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"x","params":{"_meta":{"progressToken":1,"ProgressToken":2}}}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":5e1}}`,
		`{"paramſ":1}`, `{"a":1}{"b":2}`, "\x00\xff{}", `[{"id":1},{"id":2}]`, `{"id":5e1}`, `{"id":"\u0035"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var m Message
		if err := Parse(&m, b); err == nil {
			var v map[string]json.RawMessage
			if json.Unmarshal(b, &v) != nil {
				t.Fatalf("Parse accepted invalid JSON %q", b)
			}
			_, hasMethod := v["method"]
			_, hasID := v["id"]
			want := KindResponse
			switch {
			case hasMethod && hasID:
				want = KindRequest
			case hasMethod:
				want = KindNotification
			}
			if m.Kind != want {
				t.Fatalf("kind %v, want %v", m.Kind, want)
			}
			if key, err := m.IDKey(); err == nil {
				var id any
				if json.Unmarshal(v["id"], &id) != nil {
					t.Fatalf("id %q is not JSON", v["id"])
				}
				if s, ok := id.(string); ok && key != "s"+s {
					t.Fatalf("IDKey %q of id %s", key, v["id"])
				}
			}
			if c, ok := m.Call(); ok {
				var p struct {
					Name json.RawMessage `json:"name"`
				}
				json.Unmarshal(v["params"], &p)
				var name string
				if json.Unmarshal(p.Name, &name) != nil {
					name = ""
				}
				if c.Name != name {
					t.Fatalf("name %q, want %q", c.Name, name)
				}
			}
		}
		var body Body
		if ParseBody(&body, b) == nil {
			var v any
			if json.Unmarshal(b, &v) != nil {
				t.Fatalf("ParseBody accepted invalid JSON %q", b)
			}
		}
	})
}

var sink int

// TestParseBodyBatchMemory: a batch of many tiny elements costs memory in
// proportion to its size, not a parsed message per element (a 4 MiB body
// of 1.4 million empty objects once cost 2.7 GB).
func TestParseBodyBatchMemory(t *testing.T) {
	const n = 100_000
	body := append(bytes.Repeat([]byte(`{},`), n), `{}]`...)
	body = append([]byte{'['}, body...)
	var b Body
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	if err := ParseBody(&b, body); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	if got, limit := after.TotalAlloc-before.TotalAlloc, uint64(64*len(body)); got > limit {
		t.Errorf("parsing a %d-byte batch of %d elements allocated %d bytes, want at most %d", len(body), n+1, got, limit)
	}
	if b.Requests() != 0 || !b.Batch {
		t.Errorf("batch %v, %d requests", b.Batch, b.Requests())
	}
}

// BenchmarkParse is the parse of one relayed tools/call: it allocates
// nothing but the tool's name.
func BenchmarkParse(b *testing.B) {
	line := []byte(`{"jsonrpc":"2.0","id":"b","method":"tools/call","params":{"name":"mcp__a__echo","arguments":{"message":"benchmark payload: the quick brown fox jumps over the lazy dog"}}}`)
	b.ReportAllocs()
	for b.Loop() {
		var m Message
		if err := Parse(&m, line); err != nil {
			b.Fatal(err)
		}
		c, _ := m.Call()
		sink += len(c.Name)
	}
}
