package cli

import (
	"strings"
	"testing"
	"time"

	"github.com/mcphost/mcphost/host/config"
)

// TestApprovalShowsTimeouts: the approval hash covers each block's
// timeout, so the approval display prints it (review 36a L9).
func TestApprovalShowsTimeouts(t *testing.T) {
	var b strings.Builder
	describeChecksForApproval(&b,
		[]*config.Hook{
			{Event: "PreToolUse", Command: "check.sh", Timeout: 90 * time.Second},
			{Event: "PostToolUse", URL: "https://h.example.com/"},
		},
		[]*config.Interceptor{
			{Name: "g", Plugin: "guard-regex", Timeout: 2 * time.Second, Events: []string{"tools/call"}, Phases: []string{"request"}},
			{Name: "v", Builtin: "validate_input", Events: []string{"tools/call"}, Phases: []string{"request"}},
		})
	out := b.String()
	for _, want := range []string{"  timeout: 1m30s\n", "  timeout: 1m0s (the default)\n", "  timeout: 2s\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if n := strings.Count(out, "timeout:"); n != 3 {
		t.Errorf("%d timeouts shown, want 3 (none for a built-in):\n%s", n, out)
	}
}
