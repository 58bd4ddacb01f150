package builtin

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/intercept"
	"github.com/mcphost/mcphost/host/registry"
)

func schemaOf(t testing.TB, s string) any {
	t.Helper()
	if s == "" {
		return nil
	}
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("schema %s: %v", s, err)
	}
	return v
}

// request runs validate_input through the engine, as the gate does.
func request(t testing.TB, e *intercept.Entry, tool *registry.Tool, args string) error {
	t.Helper()
	p := intercept.NewChain([]*intercept.Entry{e}).ForTool(tool.Name, tool.Server, nil)
	c := &intercept.Call{Event: intercept.EventToolsCall, Server: tool.Server, Name: tool.Name, Tool: tool}
	if args != "" {
		c.Payload = json.RawMessage(args)
	}
	_, _, err := p.Request(t.Context(), c)
	return err
}

func TestValidateInput(t *testing.T) {
	const defs = `{"$defs":{"pos":{"type":"integer","minimum":1}},"type":"object",
		"properties":{"a":{"type":"object","properties":{"b":{"$ref":"#/$defs/pos"}}}},"required":["a"]}`
	const uneval = `{"type":"object","properties":{"x":{"type":"string"}},"allOf":[{"properties":{"y":{}}}],"unevaluatedProperties":false}`
	const prefix = `{"type":"object","properties":{"p":{"type":"array","prefixItems":[{"type":"string"},{"type":"integer"}],"items":false}}}`
	const konst = `{"type":"object","properties":{"mode":{"const":"fast"}}}`
	const draft7 = `{"$schema":"http://json-schema.org/draft-07/schema#","type":"object",
		"properties":{"t":{"type":"array","items":[{"type":"string"}],"additionalItems":false}}}`
	const echo = `{"type":"object","properties":{"message":{"type":"string"}},"required":["message"]}`
	tests := []struct {
		name, schema, args string
		reason             string // "" accepts
	}{
		{"ok", echo, `{"message":"hi"}`, ""},
		{"missing", echo, `{}`, `invalid arguments for mcp__demo__t: at '': missing property 'message'`},
		{"absent args are {}", echo, ``, `invalid arguments for mcp__demo__t: at '': missing property 'message'`},
		{"null args are {}", echo, `null`, `invalid arguments for mcp__demo__t: at '': missing property 'message'`},
		{"absent args ok", `{"type":"object"}`, ``, ""},
		{"wrong type", echo, `{"message":3}`, `invalid arguments for mcp__demo__t: at '/message': got number, want string`},
		{"not JSON", echo, `{"message":`, `invalid arguments for mcp__demo__t: not JSON`},
		{"$ref ok", defs, `{"a":{"b":2}}`, ""},
		{"$ref nested path", defs, `{"a":{"b":"x"}}`, `invalid arguments for mcp__demo__t: at '/a/b': got string, want integer`},
		{"$ref minimum", defs, `{"a":{"b":0}}`, `invalid arguments for mcp__demo__t: at '/a/b': minimum: got 0, want 1`},
		{"unevaluatedProperties ok", uneval, `{"x":"1","y":2}`, ""},
		{"unevaluatedProperties", uneval, `{"x":"1","z":2}`, `invalid arguments for mcp__demo__t: at '/z': not allowed`},
		{"prefixItems ok", prefix, `{"p":["a",1]}`, ""},
		{"prefixItems", prefix, `{"p":[1,"a"]}`, `invalid arguments for mcp__demo__t: at '/p/0': got number, want string; at '/p/1': got string, want integer`},
		{"prefixItems extra", prefix, `{"p":["a",1,2]}`, `at '/p/2': not allowed`},
		{"const ok", konst, `{"mode":"fast"}`, ""},
		{"const", konst, `{"mode":"slow"}`, `at '/mode': value must be 'fast'`},
		{"draft-07 ok", draft7, `{"t":["a"]}`, ""},
		{"draft-07 items array", draft7, `{"t":["a",1]}`, `at '/t'`},
		{"three causes at most", `{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"string"},"c":{"type":"string"},"d":{"type":"string"}}}`,
			`{"a":1,"b":1,"c":1,"d":1}`, "at '/a': got number, want string; at '/b': got number, want string; at '/c': got number, want string"},
		{"escaped pointer", `{"type":"object","properties":{"a/b~c":{"type":"string"}}}`, `{"a/b~c":1}`, `at '/a~1b~0c'`},
		{"no schema", ``, `{"x":1}`, ""},
		{"broken schema passes", `{"type":"object","properties":{"a":{"type":"nonsense"}}}`, `{"a":1}`, ""},
		{"remote $ref is not loaded", `{"$ref":"https://example.com/s.json"}`, `{"a":1}`, ""},
		{"file $ref is not loaded", `{"$ref":"file:///etc/passwd"}`, `{"a":1}`, ""},
		{"format not asserted", `{"type":"object","properties":{"u":{"type":"string","format":"email"}}}`, `{"u":"not an email"}`, ""},
	}
	e, err := New(&config.Interceptor{Name: "v", Builtin: ValidateInput})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tool := &registry.Tool{Name: "mcp__demo__t", Server: "demo", Original: "t", InputSchema: schemaOf(t, tt.schema),
				Fingerprint: "fp " + tt.name}
			err := request(t, e, tool, tt.args)
			if tt.reason == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			var re *intercept.RefusedError
			if !errors.As(err, &re) {
				t.Fatalf("err = %v, want a refusal", err)
			}
			if re.Code != CodeInvalidParams || re.Kind != intercept.KindBuiltin || re.By != "v" {
				t.Errorf("refusal %+v", re)
			}
			if !strings.Contains(re.Reason, tt.reason) {
				t.Errorf("reason = %q, want it to hold %q", re.Reason, tt.reason)
			}
		})
	}
}

// TestValidateInputCache checks one definition is compiled once, and a
// changed definition (a new fingerprint) is compiled again.
func TestValidateInputCache(t *testing.T) {
	e, err := New(&config.Interceptor{Name: "v", Builtin: ValidateInput})
	if err != nil {
		t.Fatal(err)
	}
	v := e.Checker.(*validator)
	str := &registry.Tool{Name: "mcp__demo__t", Server: "demo", Fingerprint: "1", InputSchema: schemaOf(t, `{"properties":{"a":{"type":"string"}}}`)}
	num := &registry.Tool{Name: "mcp__demo__t", Server: "demo", Fingerprint: "2", InputSchema: schemaOf(t, `{"properties":{"a":{"type":"number"}}}`)}
	for range 3 {
		if err := request(t, e, str, `{"a":"x"}`); err != nil {
			t.Fatal(err)
		}
	}
	if err := request(t, e, num, `{"a":"x"}`); err == nil {
		t.Error("the changed definition was not compiled again")
	}
	if v.count != 2 {
		t.Errorf("%d schemas cached, want 2", v.count)
	}
	// Without a fingerprint, the schema itself is the key.
	anon := &registry.Tool{Name: "mcp__demo__t", Server: "demo", InputSchema: schemaOf(t, `{"properties":{"a":{"type":"number"}}}`)}
	if err := request(t, e, anon, `{"a":"x"}`); err == nil {
		t.Error("no fingerprint: not validated")
	}
}

func TestValidateOutput(t *testing.T) {
	const out = `{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}`
	tests := []struct {
		name, schema, result string
		callErr              error
		want                 string // the result after Response
	}{
		{"ok", out, `{"content":[],"structuredContent":{"n":1}}`, nil, `{"content":[],"structuredContent":{"n":1}}`},
		{"wrong", out, `{"content":[],"structuredContent":{"n":"x"}}`, nil,
			`{"content":[{"type":"text","text":"output of mcp__demo__t does not match its outputSchema: at '/n': got string, want integer"}],"isError":true}`},
		{"missing", out, `{"content":[]}`, nil,
			`{"content":[{"type":"text","text":"output of mcp__demo__t does not match its outputSchema: structuredContent is missing"}],"isError":true}`},
		{"null", out, `{"content":[],"structuredContent":null}`, nil,
			`{"content":[{"type":"text","text":"output of mcp__demo__t does not match its outputSchema: structuredContent is missing"}],"isError":true}`},
		{"error result not checked", out, `{"content":[],"isError":true}`, nil, `{"content":[],"isError":true}`},
		{"no outputSchema", ``, `{"content":[]}`, nil, `{"content":[]}`},
		{"failed call", out, ``, errors.New("gone"), ``},
	}
	e, err := New(&config.Interceptor{Name: "o", Builtin: ValidateOutput})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tool := &registry.Tool{Name: "mcp__demo__t", Server: "demo", Original: "t", OutputSchema: schemaOf(t, tt.schema), Fingerprint: "fp " + tt.name}
			p := intercept.NewChain([]*intercept.Entry{e}).ForTool(tool.Name, tool.Server, nil)
			if p.HasRequest() || !p.HasResponse() || p.Blocking() {
				t.Fatalf("plan: request %v, response %v, blocking %v", p.HasRequest(), p.HasResponse(), p.Blocking())
			}
			c := &intercept.Call{Event: intercept.EventToolsCall, Server: "demo", Name: tool.Name, Tool: tool, Err: tt.callErr}
			if tt.result != "" {
				c.Payload = json.RawMessage(tt.result)
				c.IsError = strings.Contains(tt.result, `"isError":true`)
			}
			got, _, _, err := p.Response(t.Context(), c)
			if err != nil || string(got) != tt.want {
				t.Errorf("Response = %s, %v; want %s", got, err, tt.want)
			}
		})
	}
}

func TestNew(t *testing.T) {
	tests := []struct {
		name string
		ic   config.Interceptor
		ok   bool
	}{
		{"validate_input", config.Interceptor{Name: "x", Builtin: ValidateInput}, true},
		{"validate_input request", config.Interceptor{Name: "x", Builtin: ValidateInput, Phases: []string{"request"}, Events: []string{"tools/call"}}, true},
		{"validate_input response", config.Interceptor{Name: "x", Builtin: ValidateInput, Phases: []string{"request", "response"}}, false},
		{"validate_input prompts", config.Interceptor{Name: "x", Builtin: ValidateInput, Events: []string{"prompts/get"}}, false},
		{"validate_output", config.Interceptor{Name: "x", Builtin: ValidateOutput}, true},
		{"validate_output request", config.Interceptor{Name: "x", Builtin: ValidateOutput, Phases: []string{"request"}}, false},
		{"action", config.Interceptor{Name: "x", Builtin: ValidateInput, Action: "redact"}, false},
		{"unknown", config.Interceptor{Name: "x", Builtin: "pii"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, err := New(&tt.ic)
			if tt.ok {
				if err != nil || e.Kind != intercept.KindBuiltin || e.Blocking {
					t.Fatalf("New = %+v, %v", e, err)
				}
				return
			}
			if !errors.Is(err, intercept.ErrUnsupported) {
				t.Fatalf("err = %v, want ErrUnsupported", err)
			}
		})
	}
}

// FuzzValidateInput feeds untrusted arguments (from a client) and an
// untrusted schema (from an upstream) to validate_input: it must answer
// without panicking, and a refusal is always -32602.
func FuzzValidateInput(f *testing.F) {
	f.Add(`{"type":"object","properties":{"message":{"type":"string"}},"required":["message"]}`, `{"message":"hi"}`)
	f.Add(`{"$defs":{"a":{"$ref":"#/$defs/a"}},"$ref":"#/$defs/a"}`, `{}`)
	f.Add(`{"prefixItems":[{"type":"string"}],"unevaluatedItems":false}`, `["a",1]`)
	f.Add(`{"pattern":"(a+)+$"}`, `"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!"`)
	f.Add(`true`, `null`)
	f.Add(`{"$ref":"http://example.com"}`, `{`)
	e, err := New(&config.Interceptor{Name: "v", Builtin: ValidateInput})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, schema, args string) {
		var s any
		if json.Unmarshal([]byte(schema), &s) != nil {
			return
		}
		tool := &registry.Tool{Name: "mcp__demo__t", Server: "demo", InputSchema: s}
		err := request(t, e, tool, args)
		var re *intercept.RefusedError
		if err != nil && (!errors.As(err, &re) || re.Code != CodeInvalidParams) {
			t.Fatalf("err = %v", err)
		}
	})
}
