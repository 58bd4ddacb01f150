package guardregex

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/mcphost/mcphost/sdk"
	"github.com/mcphost/mcphost/sdk/sdktest"
)

const opts = `{"deny_arguments":["(?i)drop\\s+table","rm -rf"],"redact_results":["AKIA[0-9A-Z]{16}","sk-[a-z0-9]{8}"]}`

// TestIntercept runs the plugin through the SDK's gRPC shims, as the host
// sees it.
func TestIntercept(t *testing.T) {
	t.Parallel()
	ic := sdktest.Interceptor(t, &sdk.ServeOpts{Info: Info, Interceptor: &Guard{}})
	tests := []struct {
		name, event string
		phase       sdk.InterceptPhase
		config      string
		payload     string
		want        *sdk.InterceptResponse
	}{
		{"clean arguments pass", "tools/call", sdk.PhaseRequest, opts, `{"sql":"select 1"}`, &sdk.InterceptResponse{Action: sdk.ActionPass}},
		{"a matching argument is denied", "tools/call", sdk.PhaseRequest, opts, `{"a":"ok","sql":{"q":["x","DROP  TABLE users"]}}`,
			&sdk.InterceptResponse{Action: sdk.ActionDeny, Reason: "argument at /sql/q/1 matches deny_arguments[0]"}},
		{"the first match in key order", "tools/call", sdk.PhaseRequest, opts, `{"b":"drop table","a":"rm -rf /"}`,
			&sdk.InterceptResponse{Action: sdk.ActionDeny, Reason: "argument at /a matches deny_arguments[1]"}},
		{"prompt arguments, not the name", "prompts/get", sdk.PhaseRequest, opts, `{"name":"rm -rf","arguments":{"x":"fine"}}`, &sdk.InterceptResponse{Action: sdk.ActionPass}},
		{"prompt arguments denied", "prompts/get", sdk.PhaseRequest, opts, `{"name":"p","arguments":{"x":"rm -rf ~"}}`,
			&sdk.InterceptResponse{Action: sdk.ActionDeny, Reason: "argument at /x matches deny_arguments[1]"}},
		{"resource URI", "resources/read", sdk.PhaseRequest, opts, `{"uri":"file:///rm -rf"}`,
			&sdk.InterceptResponse{Action: sdk.ActionDeny, Reason: "argument at /uri matches deny_arguments[1]"}},
		{"no arguments", "tools/call", sdk.PhaseRequest, opts, ``, &sdk.InterceptResponse{Action: sdk.ActionPass}},
		{"no deny_arguments", "tools/call", sdk.PhaseRequest, `{"redact_results":["x"]}`, `{"a":"x"}`, &sdk.InterceptResponse{Action: sdk.ActionPass}},
		{"a result without a match passes", "tools/call", sdk.PhaseResponse, opts, `{"content":[{"type":"text","text":"fine"}]}`, &sdk.InterceptResponse{Action: sdk.ActionPass}},
		{"text and structuredContent are redacted", "tools/call", sdk.PhaseResponse, opts,
			`{"content":[{"type":"text","text":"key AKIAABCDEFGHIJKLMNOP <ok>"},{"type":"resource","resource":{"uri":"file:///sk-abcdefgh","text":"sk-abcdefgh"}}],"structuredContent":{"keys":["AKIAABCDEFGHIJKLMNOP"],"n":1.0},"isError":false}`,
			&sdk.InterceptResponse{Action: sdk.ActionMutate, Payload: json.RawMessage(`{"content":[{"text":"key [REDACTED] <ok>","type":"text"},{"resource":{"text":"[REDACTED]","uri":"file:///sk-abcdefgh"},"type":"resource"}],"isError":false,"structuredContent":{"keys":["[REDACTED]"],"n":1.0}}`)}},
		{"a list's every string", "tools/list", sdk.PhaseResponse, opts, `{"tools":[{"name":"t","description":"uses sk-abcdefgh"}]}`,
			&sdk.InterceptResponse{Action: sdk.ActionMutate, Payload: json.RawMessage(`{"tools":[{"description":"uses [REDACTED]","name":"t"}]}`)}},
		{"no redact_results", "tools/call", sdk.PhaseResponse, `{"deny_arguments":["x"]}`, `{"content":[{"type":"text","text":"x"}]}`, &sdk.InterceptResponse{Action: sdk.ActionPass}},
		{"a bad expression", "tools/call", sdk.PhaseRequest, `{"deny_arguments":["ok","(?=x)"]}`, `{}`, &sdk.InterceptResponse{Action: sdk.ActionPass, Diagnostics: sdk.Diagnostics{
			sdk.Errorf("deny_arguments", "Invalid regular expression", "deny_arguments[1]: error parsing regexp: invalid or unsupported Perl syntax: `(?=` (Go's RE2 syntax: no lookaround, no backreferences)")}}},
		{"an unknown option", "tools/call", sdk.PhaseResponse, `{"deny_argument":["x"]}`, `{}`, &sdk.InterceptResponse{Action: sdk.ActionPass, Diagnostics: sdk.Diagnostics{
			sdk.Errorf("", "Invalid plugin configuration", `json: unknown field "deny_argument"`)}}},
		{"a wrong type", "tools/call", sdk.PhaseResponse, `{"redact_results":"x"}`, `{}`, nil},
		{"arguments that are not JSON", "tools/call", sdk.PhaseRequest, opts, `{"a":`, &sdk.InterceptResponse{Action: sdk.ActionDeny, Reason: "the arguments are not JSON"}},
	}
	for _, tt := range tests {
		resp, err := ic.Intercept(context.Background(), &sdk.InterceptRequest{Interceptor: "guard", Event: tt.event, Phase: tt.phase, Config: json.RawMessage(tt.config), Payload: json.RawMessage(tt.payload)})
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if tt.want == nil { // a diagnostic, whatever its words
			if !resp.Diagnostics.HasErrors() {
				t.Errorf("%s: no diagnostic: %+v", tt.name, resp)
			}
			continue
		}
		if diff := cmp.Diff(tt.want, resp, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.name, diff)
		}
	}
}

func TestScope(t *testing.T) {
	t.Parallel()
	ic := sdktest.Interceptor(t, &sdk.ServeOpts{Info: Info, Interceptor: &Guard{}})
	tests := []struct {
		config    string
		req, resp bool
		diag      string
	}{
		{`{"deny_arguments":["x"]}`, true, false, ""},
		{`{"redact_results":["x"]}`, false, true, ""},
		{opts, true, true, ""},
		{`{}`, false, false, ""},
		{`{"deny_arguments":[],"redact_results":[]}`, false, false, ""},
		{`{"redact_results":["("]}`, false, false, "redact_results[0]"},
	}
	for _, tt := range tests {
		req, resp, diags, err := ic.InterceptScope(context.Background(), json.RawMessage(tt.config))
		if err != nil || req != tt.req || resp != tt.resp || diags.HasErrors() != (tt.diag != "") {
			t.Errorf("%s: Scope = %v, %v, %v, %v", tt.config, req, resp, diags, err)
		}
		if tt.diag != "" && !strings.Contains(diags.Err().Error(), tt.diag) {
			t.Errorf("%s: diagnostic %v does not name %s", tt.config, diags.Err(), tt.diag)
		}
	}
}

// TestCompileCacheIsBounded: configurations are compiled once each, and
// the cache does not grow without bound.
func TestCompileCacheIsBounded(t *testing.T) {
	t.Parallel()
	g := &Guard{}
	a := g.compile(json.RawMessage(opts))
	if b := g.compile(json.RawMessage(opts)); a != b {
		t.Error("the same configuration was compiled twice")
	}
	for i := range 3 * maxCached {
		g.compile(json.RawMessage(`{"deny_arguments":["x` + strings.Repeat("y", i) + `"]}`))
	}
	if n := len(g.compiled); n > maxCached {
		t.Errorf("%d configurations cached, want at most %d", n, maxCached)
	}
}
