package mcpmeta

import (
	"maps"
	"reflect"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestStripRaw(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{"content":[]}`, `{"content":[]}`},
		{`{"content":[],"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"x"}}}`, `{"content":[]}`},
		{`{"_meta":{"a":1,"io.modelcontextprotocol/x":2,"b":"io.modelcontextprotocol/"},"isError":true}`, `{"_meta":{"a":1,"b":"io.modelcontextprotocol/"},"isError":true}`},
		{`{"_meta":{"io.modelcontextprotocol/x":2}}`, `{}`},
		{`{"a":1,"_meta":{"io.modelcontextprotocol/x":2},"b":2}`, `{"a":1,"b":2}`},
		{`{"a":1, "_meta": {"io.modelcontextprotocol/x":2, "k":[1, 2]}, "b":2}`, `{"a":1,"_meta":{"k":[1, 2]},"b":2}`},
	} {
		got, ok := StripRaw([]byte(tc.in))
		if !ok || string(got) != tc.want {
			t.Errorf("StripRaw(%s) = %s, %v; want %s", tc.in, got, ok, tc.want)
		}
		// Appended after what a message already holds.
		if got, ok := AppendStripRaw([]byte(`{"result":`), []byte(tc.in)); !ok || string(got) != `{"result":`+tc.want {
			t.Errorf("AppendStripRaw(%s) = %s, %v; want {\"result\":%s", tc.in, got, ok, tc.want)
		}
	}
	for _, in := range []string{`{"_meta":[1]}`, `[]`, `{"a":}`} {
		if _, ok := StripRaw([]byte(in)); ok {
			t.Errorf("StripRaw accepted %s", in)
		}
		if got, ok := AppendStripRaw([]byte("x"), []byte(in)); ok || string(got) != "x" {
			t.Errorf("AppendStripRaw(x, %s) = %s, %v; want x unchanged, false", in, got, ok)
		}
	}
}

func TestReservedAndStrip(t *testing.T) {
	got := Reserved([]byte(`{"name":"t","_meta":{"progressToken":1,"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}`))
	if want := `"io.modelcontextprotocol/protocolVersion":"2026-07-28"`; string(got) != want {
		t.Errorf("Reserved = %s, want %s", got, want)
	}
	m := mcp.Meta{"io.modelcontextprotocol/logLevel": "info", "trace": "x"}
	Strip(m)
	if len(m) != 1 || m["trace"] != "x" {
		t.Errorf("Strip left %v", m)
	}
}

func TestWithout(t *testing.T) {
	for _, tc := range []struct{ in, key, want string }{
		{`"a":1,"b":{"c":2},"d":"x"`, "b", `"a":1,"d":"x"`},
		{`"a":1`, "a", ``},
		{`"a":1`, "z", `"a":1`},
		{``, "a", ``},
	} {
		if got := string(Without([]byte(tc.in), tc.key)); got != tc.want {
			t.Errorf("Without(%s, %s) = %s, want %s", tc.in, tc.key, got, tc.want)
		}
	}
}

func TestForwardable(t *testing.T) {
	pv, ci := mcp.MetaKeyProtocolVersion, mcp.MetaKeyClientCapabilities
	for _, tc := range []struct {
		name     string
		in, want mcp.Meta
		same     bool // in itself is returned
	}{
		{name: "nil", in: nil, want: nil, same: true},
		{name: "none reserved", in: mcp.Meta{"a": 1, "progressToken": "t"}, want: mcp.Meta{"a": 1, "progressToken": "t"}, same: true},
		{name: "log level kept", in: mcp.Meta{mcp.MetaKeyLogLevel: "debug"}, want: mcp.Meta{mcp.MetaKeyLogLevel: "debug"}, same: true},
		{name: "only reserved", in: mcp.Meta{pv: "2026-07-28", ci: map[string]any{}}, want: nil},
		{name: "mixed", in: mcp.Meta{pv: "2026-07-28", "a": 1, mcp.MetaKeyLogLevel: "info"}, want: mcp.Meta{"a": 1, mcp.MetaKeyLogLevel: "info"}},
	} {
		in := maps.Clone(tc.in)
		got := Forwardable(tc.in)
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: Forwardable(%v) = %v, want %v", tc.name, tc.in, got, tc.want)
		}
		if !reflect.DeepEqual(tc.in, in) {
			t.Errorf("%s: the argument was changed to %v", tc.name, tc.in)
		}
		if tc.same && tc.in != nil && reflect.ValueOf(got).Pointer() != reflect.ValueOf(tc.in).Pointer() {
			t.Errorf("%s: a copy was made with nothing to remove", tc.name)
		}
	}
}

func TestIsGateways(t *testing.T) {
	for _, tc := range []struct {
		name string
		want bool
	}{
		{"dev.mcphost/route", true},
		{"dev.mcphost/requestedSchema", true},
		{"dev.mcphost", false},
		{"io.modelcontextprotocol/serverInfo", false},
		{"ui", false},
		{"anthropic/alwaysLoad", false},
	} {
		if got := IsGateways(tc.name); got != tc.want {
			t.Errorf("IsGateways(%q) = %v, want %v", tc.name, got, tc.want)
		}
	}
}
