package redact

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestAskArgumentsRendering(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("é", 2000)
	many := `{"list":[` + strings.TrimSuffix(strings.Repeat(`1,`, 50), ",") + `]}`
	for _, tc := range []struct {
		name      string
		args      string
		want      []string
		notWant   []string
		maxLines  int
		truncated bool
	}{
		{name: "none", args: ``, want: []string{"(no arguments)"}},
		{name: "empty object", args: `{}`, want: []string{"(no arguments)"}},
		{name: "shown indented", args: `{"path":"/tmp/x","recursive":true,"n":12345678901234567890}`,
			want: []string{`    {`, `      "n": 12345678901234567890,`, `      "path": "/tmp/x",`, `      "recursive": true`}},
		{name: "secret-named keys masked", args: `{"api_key":"abc","password":"hunter2","nested":{"client_secret":"x1","privateKey":"pk"},"token":5}`,
			want:    []string{`"api_key": "[REDACTED]"`, `"password": "[REDACTED]"`, `"client_secret": "[REDACTED]"`, `"privateKey": "[REDACTED]"`},
			notWant: []string{"hunter2", `"abc"`, `"x1"`, `"pk"`}},
		{name: "token-looking values scrubbed", args: `{"header":"Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.e30.sig","q":"x?access_token=sekret1"}`,
			notWant: []string{"eyJhbGciOiJIUzI1NiJ9", "sekret1"}},
		{name: "at most 20 lines", args: many, maxLines: 20, truncated: true},
		{name: "at most 1 KiB, cut at a character", args: `{"text":"` + long + `"}`, truncated: true},
		{name: "terminal escapes stay escaped", args: `{"s":"\u001b[2J"}`, want: []string{`\u001b[2J`}, notWant: []string{"\x1b"}},
		{name: "not JSON", args: `{"a":`, want: []string{"not valid JSON"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Arguments(json.RawMessage(tc.args), "    ")
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("lacks %q:\n%s", w, got)
				}
			}
			for _, w := range tc.notWant {
				if strings.Contains(got, w) {
					t.Errorf("shows %q:\n%s", w, got)
				}
			}
			if n := strings.Count(got, "\n") + 1; tc.maxLines > 0 && n > tc.maxLines {
				t.Errorf("%d lines, want at most %d", n, tc.maxLines)
			}
			if len(got) > ArgumentsMaxBytes+len("    ")+len("…") || !utf8.ValidString(got) {
				t.Errorf("%d bytes (valid UTF-8: %v)", len(got), utf8.ValidString(got))
			}
			if strings.HasSuffix(got, "…") != tc.truncated {
				t.Errorf("truncated = %v, want %v:\n%s", strings.HasSuffix(got, "…"), tc.truncated, got)
			}
		})
	}
}
