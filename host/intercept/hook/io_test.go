package hook

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/mcphost/mcphost/host/intercept"
)

func TestDecodeOutput(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("é", MaxText+50)
	tests := []struct {
		name, event string
		exit        int
		stdout      string
		stderr      string
		want        intercept.Verdict
		nonBlocking bool
	}{
		{"exit 0 nothing", PreToolUse, 0, "", "", intercept.Verdict{}, false},
		{"exit 0 plain text", PreToolUse, 0, "checked 3 files\n", "", intercept.Verdict{}, false},
		{"exit 2 ignores stdout JSON", PreToolUse, 2, `{"hookSpecificOutput":{"permissionDecision":"allow"}}`, " nope \n",
			intercept.Verdict{Action: intercept.Deny, Reason: "nope"}, false},
		{"exit 2 PostToolUse blocks", PostToolUse, 2, "", "bad result", intercept.Verdict{Action: intercept.Deny, Reason: "bad result"}, false},
		{"exit 2 PostToolUseFailure is context", PostToolUseFailure, 2, "", "retry later", intercept.Verdict{Context: "retry later"}, false},
		{"exit 2 ElicitationResult declines", ElicitationResult, 2, "", "no", intercept.Verdict{Action: intercept.Deny, Reason: "no", Payload: declined}, false},
		{"exit 1", PreToolUse, 1, `{"decision":"block"}`, "oops", intercept.Verdict{}, true},
		{"exit 137", PreToolUse, 137, "", "", intercept.Verdict{}, true},
		{"invalid JSON", PreToolUse, 0, `{"hookSpecificOutput":`, "", intercept.Verdict{}, true},
		{"trailing data", PreToolUse, 0, `{"decision":"block"} {"x":1}`, "", intercept.Verdict{}, true},
		{"wrong type", PreToolUse, 0, `{"continue":"no"}`, "", intercept.Verdict{}, true},
		{"deprecated approve", PreToolUse, 0, `{"decision":"approve","reason":"ok"}`, "", intercept.Verdict{Action: intercept.Allow, Reason: "ok"}, false},
		{"deprecated block", PreToolUse, 0, `{"decision":"block","reason":"no"}`, "", intercept.Verdict{Action: intercept.Deny, Reason: "no"}, false},
		{"specific wins over deprecated", PreToolUse, 0, `{"decision":"approve","hookSpecificOutput":{"permissionDecision":"deny","permissionDecisionReason":"x"}}`, "",
			intercept.Verdict{Action: intercept.Deny, Reason: "x"}, false},
		{"continue false wins", PreToolUse, 0, `{"continue":false,"stopReason":"build broken","hookSpecificOutput":{"permissionDecision":"allow"}}`, "",
			intercept.Verdict{Action: intercept.Deny, Reason: "build broken"}, false},
		{"continue false PostToolUse", PostToolUse, 0, `{"continue":false}`, "", intercept.Verdict{Action: intercept.Deny, Reason: "stopped by a hook"}, false},
		{"defer decides nothing", PreToolUse, 0, `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"defer","permissionDecisionReason":"later"}}`, "", intercept.Verdict{}, false},
		{"unknown decision", PreToolUse, 0, `{"hookSpecificOutput":{"permissionDecision":"maybe"}}`, "", intercept.Verdict{}, true},
		{"wrong event name", PreToolUse, 0, `{"hookSpecificOutput":{"hookEventName":"PostToolUse","permissionDecision":"deny"}}`, "", intercept.Verdict{}, true},
		{"updatedInput alone mutates", PreToolUse, 0, `{"hookSpecificOutput":{"updatedInput":{"a":1}}}`, "",
			intercept.Verdict{Action: intercept.Mutate, Payload: json.RawMessage(`{"a":1}`)}, false},
		{"updatedInput not an object", PreToolUse, 0, `{"hookSpecificOutput":{"permissionDecision":"allow","updatedInput":[1]}}`, "", intercept.Verdict{}, true},
		{"ask with updatedInput", PreToolUse, 0, `{"hookSpecificOutput":{"permissionDecision":"ask","updatedInput":{"a":2}}}`, "",
			intercept.Verdict{Action: intercept.Ask, Payload: json.RawMessage(`{"a":2}`)}, false},
		{"reason capped", PreToolUse, 2, "", long, intercept.Verdict{Action: intercept.Deny, Reason: strings.Repeat("é", MaxText)}, false},
		{"PostToolUse block", PostToolUse, 0, `{"decision":"block","reason":"leak"}`, "", intercept.Verdict{Action: intercept.Deny, Reason: "leak"}, false},
		{"PostToolUse bad decision", PostToolUse, 0, `{"decision":"approve"}`, "", intercept.Verdict{}, true},
		{"output array", PostToolUse, 0, `{"hookSpecificOutput":{"updatedMCPToolOutput":[{"type":"text","text":"a"}]}}`, "",
			intercept.Verdict{Action: intercept.Mutate, Payload: json.RawMessage(`{"content":[{"type":"text","text":"a"}]}`)}, false},
		{"output one item", PostToolUse, 0, `{"hookSpecificOutput":{"updatedMCPToolOutput":{"type":"text","text":"b"}}}`, "",
			intercept.Verdict{Action: intercept.Mutate, Payload: json.RawMessage(`{"content":[{"type":"text","text":"b"}]}`)}, false},
		{"output other object", PostToolUse, 0, `{"hookSpecificOutput":{"updatedMCPToolOutput":{"n":1}}}`, "",
			intercept.Verdict{Action: intercept.Mutate, Payload: json.RawMessage(`{"content":[{"type":"text","text":"{\"n\":1}"}]}`)}, false},
		{"output bad content", PostToolUse, 0, `{"hookSpecificOutput":{"updatedMCPToolOutput":{"content":"x"}}}`, "", intercept.Verdict{}, true},
		{"output with context", PostToolUse, 0, `{"hookSpecificOutput":{"updatedMCPToolOutput":"s","additionalContext":"c"}}`, "",
			intercept.Verdict{Action: intercept.Mutate, Context: "c", Payload: json.RawMessage(`{"content":[{"type":"text","text":"s"}]}`)}, false},
		{"failure block is context", PostToolUseFailure, 0, `{"decision":"block","reason":"r","hookSpecificOutput":{"additionalContext":"c"}}`, "",
			intercept.Verdict{Context: "r\nc"}, false},
		{"elicitation cancel", Elicitation, 0, `{"hookSpecificOutput":{"hookEventName":"Elicitation","action":"cancel","content":{"a":1}}}`, "",
			intercept.Verdict{Action: intercept.Mutate, Payload: json.RawMessage(`{"action":"cancel"}`)}, false},
		{"elicitation bad action", Elicitation, 0, `{"hookSpecificOutput":{"action":"yes"}}`, "", intercept.Verdict{}, true},
		{"elicitation content not object", Elicitation, 0, `{"hookSpecificOutput":{"action":"accept","content":"x"}}`, "", intercept.Verdict{}, true},
		{"elicitation continue false", Elicitation, 0, `{"continue":false,"stopReason":"s"}`, "", intercept.Verdict{Action: intercept.Deny, Reason: "s", Payload: declined}, false},
		{"elicitation nothing", Elicitation, 0, `{"systemMessage":"hi"}`, "", intercept.Verdict{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := decodeOutput(tt.event, tt.exit, []byte(tt.stdout), []byte(tt.stderr))
			var oe *OutputError
			if tt.nonBlocking != errors.As(err, &oe) {
				t.Errorf("err = %v, want non-blocking %v", err, tt.nonBlocking)
			}
			if err != nil && !errors.As(err, &oe) {
				t.Errorf("err %v is not an *OutputError", err)
			}
			assertVerdict(t, got, tt.want)
		})
	}
}

// TestOutputErrorsHoldNoOutput: a non-blocking error's message (logged)
// never quotes what the hook wrote.
func TestOutputErrorsHoldNoOutput(t *testing.T) {
	t.Parallel()
	const secret = "sk-live-0123456789abcdef0123"
	for _, out := range []string{
		`{"hookSpecificOutput":{"permissionDecision":"` + secret + `"}}`,
		`{"decision":"` + secret + `"}`,
		`{"hookSpecificOutput":{"hookEventName":"` + secret + `"}}`,
		`{"x":"` + secret + `"`,
		`{"continue":"` + secret + `"}`,
	} {
		_, err := decodeOutput(PreToolUse, 0, []byte(out), nil)
		if err == nil {
			t.Errorf("%s: no error", out)
			continue
		}
		if strings.Contains(err.Error(), "sk-live") {
			t.Errorf("error quotes the output: %v", err)
		}
	}
}

// FuzzDecodeOutput feeds decodeOutput what a hook process may write.
func FuzzDecodeOutput(f *testing.F) {
	seeds := []string{
		``, `plain`, `{}`, `{"continue":false}`, `{"decision":"block","reason":"r"}`,
		`{"decision":"approve"}`,
		`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","updatedInput":{"a":1},"additionalContext":"c"}}`,
		`{"hookSpecificOutput":{"permissionDecision":"ask","updatedInput":null}}`,
		`{"hookSpecificOutput":{"updatedMCPToolOutput":"s"}}`,
		`{"hookSpecificOutput":{"updatedMCPToolOutput":[{"type":"text","text":"x"}]}}`,
		`{"hookSpecificOutput":{"updatedMCPToolOutput":{"content":[],"_meta":{"k":1}}}}`,
		`{"hookSpecificOutput":{"updatedMCPToolOutput":1e999}}`,
		`{"hookSpecificOutput":{"action":"accept","content":{"u":"a"}}}`,
		`{"hookSpecificOutput":{"action":"decline"}}`,
		"{\"reason\":\"\xff\xfe\"}",
	}
	events := []string{PreToolUse, PostToolUse, PostToolUseFailure, Elicitation, ElicitationResult}
	for i, s := range seeds {
		f.Add(uint8(i), 0, []byte(s), []byte("why"))
	}
	f.Add(uint8(0), 2, []byte(`{}`), []byte("blocked\xff"))
	f.Add(uint8(3), 1, []byte(``), []byte(``))
	f.Fuzz(func(t *testing.T, ev uint8, exit int, stdout, stderr []byte) {
		event := events[int(ev)%len(events)]
		v, err := decodeOutput(event, exit, stdout, stderr)
		if err != nil {
			var oe *OutputError
			if !errors.As(err, &oe) {
				t.Fatalf("error %v is not an *OutputError", err)
			}
			if v.Action != intercept.Pass || v.Payload != nil {
				t.Fatalf("a non-blocking error decided %v", v)
			}
		}
		for _, s := range []string{v.Reason, v.Context} {
			if !utf8.ValidString(s) || utf8.RuneCountInString(s) > MaxText {
				t.Fatalf("reason or context not capped valid UTF-8: %d runes", utf8.RuneCountInString(s))
			}
		}
		if exit != 0 && exit != 2 && v.Action != intercept.Pass {
			t.Fatalf("exit %d decided %v", exit, v.Action)
		}
		if v.Action > intercept.Mutate {
			t.Fatalf("action %d", v.Action)
		}
		if v.Payload != nil {
			if !json.Valid(v.Payload) {
				t.Fatalf("payload is not JSON: %q", v.Payload)
			}
			switch event {
			case PreToolUse:
				if !isObject(v.Payload) {
					t.Fatalf("updatedInput %q is not an object", v.Payload)
				}
			case PostToolUse:
				var res struct {
					Content []json.RawMessage `json:"content"`
				}
				if json.Unmarshal(v.Payload, &res) != nil || res.Content == nil {
					t.Fatalf("tool result %q has no content list", v.Payload)
				}
			case Elicitation, ElicitationResult:
				var res struct {
					Action  string         `json:"action"`
					Content map[string]any `json:"content"`
				}
				if err := json.Unmarshal(v.Payload, &res); err != nil {
					t.Fatalf("elicit result %q: %v", v.Payload, err)
				}
				if res.Action != "accept" && res.Action != "decline" && res.Action != "cancel" {
					t.Fatalf("action %q", res.Action)
				}
				if res.Action != "accept" && res.Content != nil {
					t.Fatalf("content with %s", res.Action)
				}
			}
		}
	})
}
