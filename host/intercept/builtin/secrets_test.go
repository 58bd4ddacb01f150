package builtin

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/intercept"
	"github.com/mcphost/mcphost/internal/testing/tokenshapes"
)

func secretsChecker(t *testing.T, action string) intercept.Checker {
	t.Helper()
	e, err := newSecrets(&config.Interceptor{Name: "keys", Builtin: "secrets", Action: action})
	if err != nil {
		t.Fatal(err)
	}
	if e.Kind != intercept.KindBuiltin || e.Blocking {
		t.Errorf("entry %+v: want a non-blocking built-in", e)
	}
	return e.Checker
}

func jsonString(t *testing.T, s string) string {
	t.Helper()
	b, _ := json.Marshal(s)
	return string(b)
}

// TestSecretsEveryShape: one row per token shape, in both phases, with
// both actions. Its example is blocked (named by its shape, never quoted)
// or redacted; its near miss passes.
func TestSecretsEveryShape(t *testing.T) {
	t.Parallel()
	block, redact := secretsChecker(t, ""), secretsChecker(t, "redact")
	ctx := context.Background()
	for _, ex := range tokenshapes.Examples() {
		t.Run(ex.Name, func(t *testing.T) {
			t.Parallel()
			an := "a "
			if strings.ContainsRune("AEIOU", rune(ex.Name[0])) {
				an = "an "
			}
			for _, tc := range []struct {
				phase   intercept.Phase
				payload func(s string) string
				where   string
			}{
				{intercept.Request, func(s string) string { return `{"n":1,"note":["ok",` + jsonString(t, "use "+s+" please") + `]}` }, "argument at /note/1"},
				{intercept.Response, func(s string) string {
					return `{"content":[{"type":"text","text":"ok"},{"type":"text","text":` + jsonString(t, s) + `}],"isError":false}`
				}, "result at /content/1/text"},
			} {
				c := &intercept.Call{Event: intercept.EventToolsCall, Name: "mcp__s__t", Payload: json.RawMessage(tc.payload(ex.Positive))}
				v, err := block.Check(ctx, c, tc.phase)
				if want := tc.where + " looks like " + an + ex.Name; err != nil || v.Action != intercept.Deny || v.Reason != want || v.Code != 0 {
					t.Errorf("block, phase %d: %+v %v; want deny %q", tc.phase, v, err, want)
				}
				if strings.Contains(v.Reason, ex.Positive) {
					t.Errorf("the reason quotes the secret: %q", v.Reason)
				}
				v, err = redact.Check(ctx, c, tc.phase)
				if err != nil || v.Action != intercept.Mutate || strings.Contains(string(v.Payload), jsonString(t, ex.Positive)[1:len(jsonString(t, ex.Positive))-1]) || !strings.Contains(string(v.Payload), "[REDACTED]") || !json.Valid(v.Payload) {
					t.Errorf("redact, phase %d: %+v %v", tc.phase, v, err)
				}
				c.Payload = json.RawMessage(tc.payload(ex.Negative))
				for _, ck := range []intercept.Checker{block, redact} {
					if v, err := ck.Check(ctx, c, tc.phase); err != nil || v.Action != intercept.Pass {
						t.Errorf("near miss, phase %d: %+v %v", tc.phase, v, err)
					}
				}
			}
		})
	}
}

// TestSecrets: where the built-in looks (every argument string; a result's
// text and structuredContent, not its URIs or _meta), what a redaction
// keeps, and the block's action.
func TestSecrets(t *testing.T) {
	t.Parallel()
	const key = "AKIACANARY0123456789"
	block, redact := secretsChecker(t, "block"), secretsChecker(t, "redact")
	ctx := context.Background()
	tests := []struct {
		name    string
		ck      intercept.Checker
		phase   intercept.Phase
		payload string
		want    intercept.Verdict
	}{
		{"no arguments", block, intercept.Request, ``, intercept.Verdict{Action: intercept.Pass}},
		{"clean arguments", block, intercept.Request, `{"q":"hello","n":1}`, intercept.Verdict{Action: intercept.Pass}},
		{"a top-level string", block, intercept.Request, `"` + key + `"`, intercept.Verdict{Action: intercept.Deny, Reason: "argument looks like an AWS access key ID"}},
		{"the first in key order", block, intercept.Request, `{"z":"` + key + `","a":{"b":"ghp_` + strings.Repeat("a", 36) + `"}}`, intercept.Verdict{Action: intercept.Deny, Reason: "argument at /a/b looks like a GitHub token"}},
		{"structuredContent", block, intercept.Response, `{"content":[],"structuredContent":{"k":["` + key + `"]}}`, intercept.Verdict{Action: intercept.Deny, Reason: "result at /structuredContent/k/0 looks like an AWS access key ID"}},
		{"not in a URI or _meta", block, intercept.Response, `{"content":[{"type":"resource","resource":{"uri":"s3://` + key + `"}}],"_meta":{"k":"` + key + `"}}`, intercept.Verdict{Action: intercept.Pass}},
		{"redacted arguments keep the rest", redact, intercept.Request, `{"q":"id ` + key + ` <b>","n":1.50}`, intercept.Verdict{Action: intercept.Mutate, Payload: json.RawMessage(`{"n":1.50,"q":"id [REDACTED] <b>"}`)}},
		{"redacted result", redact, intercept.Response, `{"content":[{"type":"text","text":"` + key + `"}],"structuredContent":{"k":"` + key + `"},"_meta":{"k":"` + key + `"}}`,
			intercept.Verdict{Action: intercept.Mutate, Payload: json.RawMessage(`{"_meta":{"k":"` + key + `"},"content":[{"text":"[REDACTED]","type":"text"}],"structuredContent":{"k":"[REDACTED]"}}`)}},
		{"a list's every string", block, intercept.Response, `{"tools":[{"name":"t","description":"key ` + key + `"}]}`, intercept.Verdict{Action: intercept.Deny, Reason: "result at /tools/0/description looks like an AWS access key ID"}},
		{"nothing to redact", redact, intercept.Response, `{"content":[{"type":"text","text":"fine"}]}`, intercept.Verdict{Action: intercept.Pass}},
	}
	for _, tt := range tests {
		ev := intercept.EventToolsCall
		if strings.Contains(tt.name, "list") {
			ev = intercept.EventToolsList
		}
		v, err := tt.ck.Check(ctx, &intercept.Call{Event: ev, Payload: json.RawMessage(tt.payload)}, tt.phase)
		if err != nil || v.Action != tt.want.Action || v.Reason != tt.want.Reason || string(v.Payload) != string(tt.want.Payload) {
			t.Errorf("%s: %+v (%s) %v; want %+v (%s)", tt.name, v, v.Payload, err, tt.want, tt.want.Payload)
		}
	}
	if _, err := block.Check(ctx, &intercept.Call{Payload: json.RawMessage(`{"a":`)}, intercept.Request); err == nil {
		t.Error("a payload that is not JSON: no error")
	}
	if _, err := newSecrets(&config.Interceptor{Name: "keys", Builtin: "secrets", Action: "mask"}); err == nil {
		t.Error(`action "mask": no error`)
	}
}

// BenchmarkSecrets is the secrets built-in's cost per phase on a small
// call with nothing to find (the common case).
func BenchmarkSecrets(b *testing.B) {
	e, err := newSecrets(&config.Interceptor{Name: "keys", Builtin: "secrets"})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	for _, bc := range []struct {
		name    string
		phase   intercept.Phase
		payload string
	}{
		{"request", intercept.Request, `{"message":"hello world","n":3}`},
		{"response", intercept.Response, `{"content":[{"type":"text","text":"hello world"}],"structuredContent":{"message":"hello world"}}`},
	} {
		b.Run(bc.name, func(b *testing.B) {
			c := &intercept.Call{Event: intercept.EventToolsCall, Payload: json.RawMessage(bc.payload)}
			b.ReportAllocs()
			for b.Loop() {
				if v, err := e.Checker.Check(ctx, c, bc.phase); err != nil || v.Action != intercept.Pass {
					b.Fatal(v, err)
				}
			}
		})
	}
}

// TestSecretsThroughTheEngine: builtin.New makes the secrets entry (both
// phases, in process), and a plan refuses a call carrying a token, or
// lets it through redacted.
func TestSecretsThroughTheEngine(t *testing.T) {
	t.Parallel()
	const key = "AKIACANARY0123456789"
	ctx := context.Background()
	call := func(payload string) *intercept.Call {
		return &intercept.Call{Event: intercept.EventToolsCall, Server: "s", Name: "mcp__s__t", Args: json.RawMessage(payload), Payload: json.RawMessage(payload)}
	}
	block, err := New(&config.Interceptor{Name: "keys", Builtin: Secrets})
	if err != nil {
		t.Fatal(err)
	}
	if block.Phases != intercept.Request|intercept.Response || block.Blocking || block.Kind != intercept.KindBuiltin {
		t.Errorf("entry %+v", block)
	}
	plan := intercept.NewChain([]*intercept.Entry{block}).ForTool("mcp__s__t", "s", nil)
	_, _, err = plan.Request(ctx, call(`{"k":"`+key+`"}`))
	var re *intercept.RefusedError
	if !errors.As(err, &re) || re.By != "keys" || re.Reason != "argument at /k looks like an AWS access key ID" {
		t.Errorf("block: %v", err)
	}
	res, changed, _, err := plan.Response(ctx, call(`{"content":[{"type":"text","text":"`+key+`"}]}`))
	if err != nil || !changed || !strings.Contains(string(res), `"isError":true`) || strings.Contains(string(res), key) {
		t.Errorf("block a result: %s %v %v", res, changed, err)
	}

	redact, err := New(&config.Interceptor{Name: "keys", Builtin: Secrets, Action: "redact"})
	if err != nil {
		t.Fatal(err)
	}
	plan = intercept.NewChain([]*intercept.Entry{redact}).ForTool("mcp__s__t", "s", nil)
	args, _, err := plan.Request(ctx, call(`{"k":"`+key+`"}`))
	if err != nil || string(args) != `{"k":"[REDACTED]"}` {
		t.Errorf("redact: %s %v", args, err)
	}
	if _, err := New(&config.Interceptor{Name: "keys", Builtin: Secrets, Action: "warn"}); !errors.Is(err, intercept.ErrUnsupported) {
		t.Error(`action "warn": no error`)
	}
}
