package audit

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

var t0 = time.Date(2025, 6, 1, 12, 0, 0, 123456789, time.UTC)

func TestAppendRecord(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		r    Record
		want string
	}{
		{"minimal", Record{Time: t0, Event: EventToolCall, Outcome: OutcomeOK},
			`{"time":"2025-06-01T12:00:00.123Z","event":"tools/call","outcome":"ok"}`},
		{"all fields", Record{
			Time: t0, Event: EventToolCall, Issuer: "https://idp.example.com", Subject: "alice",
			Session: "5e884898da280471", Server: "github", Tool: "mcp__github__create_issue",
			Decision: DecisionAllow, Rule: "user scope, /x/config.hcl:12 allow mcp__github__*",
			Outcome: OutcomeOK, Status: 200, Reason: "r", Duration: 1500 * time.Millisecond,
			RequestBytes: 311, ResponseBytes: 1204, Remote: "192.0.2.7:51234",
		}, `{"time":"2025-06-01T12:00:00.123Z","event":"tools/call","iss":"https://idp.example.com","sub":"alice",` +
			`"session":"5e884898da280471","server":"github","tool":"mcp__github__create_issue","decision":"allow",` +
			`"rule":"user scope, /x/config.hcl:12 allow mcp__github__*","outcome":"ok","status":200,"reason":"r",` +
			`"duration_ms":1500,"request_bytes":311,"response_bytes":1204,"remote":"192.0.2.7:51234"}`},
		{"refused", Record{Time: t0, Event: EventRefused, Outcome: OutcomeUnauthorized, Status: 401, Reason: "expired token", Remote: "[2001:db8::1]:443"},
			`{"time":"2025-06-01T12:00:00.123Z","event":"refused","outcome":"unauthorized","status":401,"reason":"expired token","remote":"[2001:db8::1]:443"}`},
		{"time in UTC, truncated to ms", Record{Time: time.Date(2025, 6, 1, 14, 0, 0, 999999999, time.FixedZone("CEST", 2*3600)), Event: "e", Outcome: "ok"},
			`{"time":"2025-06-01T12:00:00.999Z","event":"e","outcome":"ok"}`},
		{"duration rounded to µs", Record{Time: t0, Event: "e", Outcome: "ok", Duration: 1234567},
			`{"time":"2025-06-01T12:00:00.123Z","event":"e","outcome":"ok","duration_ms":1.235}`},
		{"sub-µs duration", Record{Time: t0, Event: "e", Outcome: "ok", Duration: 999},
			`{"time":"2025-06-01T12:00:00.123Z","event":"e","outcome":"ok","duration_ms":0.001}`},
		{"long duration", Record{Time: t0, Event: "e", Outcome: "ok", Duration: 90 * time.Minute},
			`{"time":"2025-06-01T12:00:00.123Z","event":"e","outcome":"ok","duration_ms":5400000}`},
		{"escaping", Record{Time: t0, Event: "e", Outcome: "ok", Tool: "a\"b\\c\nd\te\x01f\u2028g\xffh<&>é"},
			`{"time":"2025-06-01T12:00:00.123Z","event":"e","tool":"a\"b\\c\nd\te\u0001f\u2028g\ufffdh<&>é","outcome":"ok"}`},
		{"checks", Record{Time: t0, Event: EventToolCall, Decision: DecisionAllow, Rule: "r", Outcome: OutcomeOK, Checks: []Check{
			{Name: "PreToolUse", Kind: "hook", Event: "tools/call/request", Decision: CheckAllow, Duration: 41300 * time.Microsecond},
			{Name: "guard", Kind: "plugin", Event: "tools/call/response", Decision: CheckMutate, Duration: 210 * time.Microsecond},
			{Name: "keys", Kind: "builtin", Event: "tools/call/response", Decision: CheckWouldDeny, Mode: CheckModeAudit},
		}},
			`{"time":"2025-06-01T12:00:00.123Z","event":"tools/call","decision":"allow","rule":"r",` +
				`"checks":[{"name":"PreToolUse","kind":"hook","event":"tools/call/request","decision":"allow","ms":41.3},` +
				`{"name":"guard","kind":"plugin","event":"tools/call/response","decision":"mutate","ms":0.21},` +
				`{"name":"keys","kind":"builtin","event":"tools/call/response","decision":"would_deny","mode":"audit","ms":0}],"outcome":"ok"}`},
		{"check names escaped", Record{Time: t0, Event: "e", Outcome: "ok", Checks: []Check{{Name: "a\"b\n", Kind: "k", Event: "v", Decision: "d"}}},
			`{"time":"2025-06-01T12:00:00.123Z","event":"e","checks":[{"name":"a\"b\n","kind":"k","event":"v","decision":"d","ms":0}],"outcome":"ok"}`},
		{"no checks: no key", Record{Time: t0, Event: "e", Outcome: "ok", Checks: []Check{}},
			`{"time":"2025-06-01T12:00:00.123Z","event":"e","outcome":"ok"}`},
		{"empty outcome kept", Record{Time: t0},
			`{"time":"2025-06-01T12:00:00.123Z","event":"","outcome":""}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := string(appendRecord(nil, &tt.r))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("appendRecord (-want +got):\n%s", diff)
			}
			if !json.Valid([]byte(got)) {
				t.Errorf("not valid JSON: %s", got)
			}
			m, err := tt.r.MarshalJSON()
			if err != nil || string(m) != got {
				t.Errorf("MarshalJSON = %s, %v; want %s", m, err, got)
			}
		})
	}
}

func TestAppendDropped(t *testing.T) {
	t.Parallel()
	got := string(appendDropped(nil, t0, 17))
	want := `{"time":"2025-06-01T12:00:00.123Z","event":"audit_dropped","dropped":17}`
	if got != want {
		t.Errorf("appendDropped = %s, want %s", got, want)
	}
}

// full is a Record with every field set.
var full = Record{
	Time: t0, Event: EventResourceRead, Issuer: "iss", Subject: "sub", Session: SessionRef("s"), Endpoint: "dev",
	Server: "srv", Tool: "file:///x", Decision: DecisionAsk, Rule: "rule",
	Checks:  []Check{{Name: "n", Kind: "builtin", Event: "resources/read/request", Decision: CheckWouldDeny, Mode: CheckModeAudit, Duration: time.Millisecond}},
	Outcome: OutcomeDenied,
	Status:  403, Reason: "reason", Duration: 2 * time.Millisecond, RequestBytes: 1, ResponseBytes: 2,
	Remote: "remote",
}

// TestTagsMatchEncoder checks that the encoder writes exactly the keys of
// Record's struct tags (plus duration_ms), so that the two cannot drift
// apart, and that a line decodes back into the Record with encoding/json.
// A new field must be added to the encoder, and should be checked for
// secrets.
func TestTagsMatchEncoder(t *testing.T) {
	t.Parallel()
	var want []string
	rt := reflect.TypeFor[Record]()
	for i := range rt.NumField() {
		name, _, _ := strings.Cut(rt.Field(i).Tag.Get("json"), ",")
		if name == "-" {
			name = "duration_ms"
		}
		want = append(want, name)
	}
	line := appendRecord(nil, &full)
	var m map[string]any
	if err := json.Unmarshal(line, &m); err != nil {
		t.Fatal(err)
	}
	var got []string
	for k := range m {
		got = append(got, k)
	}
	slices.Sort(want)
	slices.Sort(got)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("keys (-tags +encoded):\n%s", diff)
	}

	var back Record
	if err := json.Unmarshal(line, &back); err != nil {
		t.Fatal(err)
	}
	wantBack := full
	wantBack.Time = full.Time.Truncate(time.Millisecond)
	wantBack.Duration = 0
	wantBack.Checks = slices.Clone(full.Checks)
	for i := range wantBack.Checks {
		wantBack.Checks[i].Duration = 0 // ("ms": not read back)
	}
	if diff := cmp.Diff(wantBack, back); diff != "" {
		t.Errorf("decoded (-want +got):\n%s", diff)
	}
	if m["duration_ms"] != 2.0 {
		t.Errorf("duration_ms = %v, want 2", m["duration_ms"])
	}

	// A Check's keys are its tags' too (plus ms).
	want = want[:0]
	ct := reflect.TypeFor[Check]()
	for i := range ct.NumField() {
		name, _, _ := strings.Cut(ct.Field(i).Tag.Get("json"), ",")
		if name == "-" {
			name = "ms"
		}
		want = append(want, name)
	}
	got = got[:0]
	for k := range m["checks"].([]any)[0].(map[string]any) {
		got = append(got, k)
	}
	slices.Sort(want)
	slices.Sort(got)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("check keys (-tags +encoded):\n%s", diff)
	}
}

func TestCheckDecision(t *testing.T) {
	t.Parallel()
	for _, d := range []string{CheckPass, CheckAllow, CheckAsk, CheckDeny, CheckMutate, CheckError, CheckTimeout, CheckWouldDeny, CheckWouldMutate} {
		if got := CheckDecision(d); got != d {
			t.Errorf("CheckDecision(%q) = %q", d, got)
		}
	}
	for _, d := range []string{"", "Deny", "deny: the secret is hunter2", "block"} {
		if got := CheckDecision(d); got != "other" {
			t.Errorf("CheckDecision(%q) = %q, want other", d, got)
		}
	}
}

func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"", "plain", "a\"b\\c", "\n\r\t\b\f\x00\x1f\x7f", "\u2028\u2029", "\xff\xfe", "é世界🙂", "\xe2\x80", "</script>&"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := appendString(nil, s)
		if !utf8.Valid(out) {
			t.Fatalf("appendString(%q) = %q, not UTF-8", s, out)
		}
		if strings.ContainsAny(string(out), "\n\r\u2028\u2029") {
			t.Fatalf("appendString(%q) = %q contains a line break", s, out)
		}
		var got string
		if err := json.Unmarshal(out, &got); err != nil {
			t.Fatalf("appendString(%q) = %q: %v", s, out, err)
		}
		// encoding/json's own rule: each invalid byte becomes U+FFFD.
		var want strings.Builder
		for i := 0; i < len(s); {
			r, n := utf8.DecodeRuneInString(s[i:])
			want.WriteRune(r)
			i += n
		}
		if got != want.String() {
			t.Fatalf("appendString(%q) decodes to %q, want %q", s, got, want.String())
		}
	})
}

func TestSessionRef(t *testing.T) {
	t.Parallel()
	const id = "3f2a9c1e7b5d4a8f9e0c1b2a3d4e5f60"
	ref := SessionRef(id)
	if ref != SessionRef(id) {
		t.Errorf("SessionRef is not stable")
	}
	if len(ref) != 16 || strings.Trim(ref, "0123456789abcdef") != "" {
		t.Errorf("SessionRef(%q) = %q, want 16 hex digits", id, ref)
	}
	if strings.Contains(ref, id[:8]) || strings.Contains(id, ref[:8]) {
		t.Errorf("SessionRef(%q) = %q shares text with the id", id, ref)
	}
	if SessionRef(id+"x") == ref {
		t.Errorf("different ids, same ref")
	}
	if got := SessionRef(""); got != "" {
		t.Errorf(`SessionRef("") = %q, want ""`, got)
	}
	// sha256("abc") = ba7816bf8f01cfea…
	if got := SessionRef("abc"); got != "ba7816bf8f01cfea" {
		t.Errorf(`SessionRef("abc") = %q`, got)
	}
}
