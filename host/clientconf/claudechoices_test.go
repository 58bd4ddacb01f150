package clientconf

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestClaudeProjectChoices reads what the user decided in Claude Code about
// a project's .mcp.json servers, for that project only (a Windows key with
// forward slashes too).
func TestClaudeProjectChoices(t *testing.T) {
	data := []byte(`{
  // Claude Code's ~/.claude.json
  "projects": {
    "/w/p": {"disabledMcpjsonServers": ["evil"], "enabledMcpjsonServers": ["ok"]},
    "/w/all": {"enableAllProjectMcpServers": true, "disabledMcpjsonServers": ["no"]},
    "C:/Users/u/p": {"enabledMcpjsonServers": ["win"]},
  },
}`)
	for _, tc := range []struct {
		dir                string
		want               ProjectChoices
		refused, approved  []string
		notRefused, notApp []string
	}{
		{"/w/p", ProjectChoices{Enabled: []string{"ok"}, Disabled: []string{"evil"}}, []string{"evil"}, []string{"ok"}, []string{"ok", "new"}, []string{"evil", "new"}},
		{"/w/all", ProjectChoices{Disabled: []string{"no"}, EnableAll: true}, []string{"no"}, []string{"any"}, []string{"any"}, []string{"no"}},
		{`C:\Users\u\p`, ProjectChoices{Enabled: []string{"win"}}, nil, []string{"win"}, []string{"win"}, []string{"other"}},
		{"/elsewhere", ProjectChoices{}, nil, nil, []string{"evil"}, []string{"ok"}},
	} {
		got, err := ClaudeProjectChoices(data, tc.dir)
		if err != nil {
			t.Fatalf("%s: %v", tc.dir, err)
		}
		if d := cmp.Diff(tc.want, got); d != "" {
			t.Errorf("%s (-want +got):\n%s", tc.dir, d)
		}
		for _, n := range tc.refused {
			if !got.Refused(n) {
				t.Errorf("%s: %s not refused", tc.dir, n)
			}
		}
		for _, n := range tc.approved {
			if !got.Approved(n) {
				t.Errorf("%s: %s not approved", tc.dir, n)
			}
		}
		for _, n := range tc.notRefused {
			if got.Refused(n) {
				t.Errorf("%s: %s refused", tc.dir, n)
			}
		}
		for _, n := range tc.notApp {
			if got.Approved(n) {
				t.Errorf("%s: %s approved", tc.dir, n)
			}
		}
	}
	if _, err := ClaudeProjectChoices([]byte(`{"projects": {"/w/p": {"disabledMcpjsonServers": "evil"}}}`), "/w/p"); !errors.Is(err, ErrFormat) {
		t.Errorf("a string for a list: %v, want ErrFormat", err)
	}
}
