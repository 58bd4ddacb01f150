package redact

import (
	"strings"
	"testing"

	"github.com/mcphost/mcphost/internal/testing/tokenshapes"
)

// TestTokenPatterns: one row per shape. Its example is recognised under its
// name and masked whole by the redactor; its near miss is recognised by no
// shape and left alone.
func TestTokenPatterns(t *testing.T) {
	t.Parallel()
	examples := tokenshapes.Examples()
	patterns := TokenPatterns()
	if len(examples) != len(patterns) {
		t.Fatalf("%d examples for %d patterns: every pattern needs one", len(examples), len(patterns))
	}
	for i, ex := range examples {
		t.Run(ex.Name, func(t *testing.T) {
			p := patterns[i]
			if p.Name != ex.Name {
				t.Fatalf("pattern %d is %q, the example is for %q", i, p.Name, ex.Name)
			}
			if !p.RE.MatchString(ex.Positive) {
				t.Errorf("%s does not match its example", p.Name)
			}
			if got := String("value: " + ex.Positive + " end"); strings.Contains(got, ex.Positive) || !strings.Contains(got, Mask) {
				t.Errorf("the redactor left %s in %q", p.Name, got)
			}
			for _, q := range patterns {
				if m := q.RE.FindString(ex.Negative); m != "" {
					t.Errorf("the near miss %q is recognised as a %s (%q)", ex.Negative, q.Name, m)
				}
			}
			if got := String("value: " + ex.Negative); got != "value: "+ex.Negative {
				t.Errorf("the redactor changed the near miss: %q", got)
			}
		})
	}
	// TokenPatterns is a copy.
	patterns[0].Name = "changed"
	if TokenPatterns()[0].Name == "changed" {
		t.Error("TokenPatterns returns the redactor's own list")
	}
}
