package builtin

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/intercept"
	"github.com/mcphost/mcphost/host/redact"
	"github.com/mcphost/mcphost/sdk/jsonredact"
)

// newSecrets returns the entry of an interceptor block with builtin =
// "secrets": it looks for token shapes (redact.TokenPatterns: the log
// redactor's, plus the common cloud and VCS key formats) in every string
// of a request's arguments and in a result's text (content[].text,
// content[].resource.text, every string of structuredContent; a prompt's
// messages, a resource's contents; every string of a list's result). With
// action = "block" (the default) a request is denied with "argument at
// /path looks like a NAME" and a result turned into an error with "result
// at /path looks like a NAME"; with action = "redact" each match becomes
// [REDACTED] and the call goes on. The reason never holds the secret.
func newSecrets(ic *config.Interceptor) (*intercept.Entry, error) {
	s := &secrets{patterns: redact.TokenPatterns()}
	switch ic.Action {
	case "", "block":
	case "redact":
		s.redact = true
	default:
		return nil, fmt.Errorf("interceptor %q: builtin secrets: action %q: %w (block, redact)", ic.Name, ic.Action, intercept.ErrUnsupported)
	}
	s.each = make([]*regexp.Regexp, len(s.patterns))
	for i, p := range s.patterns {
		s.each[i] = p.RE
	}
	return intercept.InterceptorEntry(ic, intercept.KindBuiltin, s)
}

// secrets is the secrets built-in's Checker.
type secrets struct {
	redact bool
	// each is the expressions of patterns, in order (one at a time: see
	// redact.TokenPatterns on why not joined).
	each     []*regexp.Regexp
	patterns []redact.Pattern
}

// Check scans one phase's payload.
func (s *secrets) Check(_ context.Context, c *intercept.Call, p intercept.Phase) (intercept.Verdict, error) {
	if len(c.Payload) == 0 {
		return intercept.Verdict{Action: intercept.Pass}, nil
	}
	v, err := jsonredact.Decode(c.Payload)
	if err != nil {
		return intercept.Verdict{}, fmt.Errorf("secrets: %s payload of %s: %w", secretsPhase(p), c.Name, err)
	}
	find, mask, what := jsonredact.Find, jsonredact.Redact, "argument"
	if p == intercept.Response {
		what = "result"
		// A list's result has no text content: every string is looked at.
		if !strings.HasSuffix(c.Event, "/list") {
			find, mask = jsonredact.FindResult, jsonredact.RedactResult
		}
	}
	if s.redact {
		nv, n := mask(v, s.each, jsonredact.Mask)
		if n == 0 {
			return intercept.Verdict{Action: intercept.Pass}, nil
		}
		b, err := jsonredact.Encode(nv)
		if err != nil {
			return intercept.Verdict{}, fmt.Errorf("secrets: %s payload of %s: %w", secretsPhase(p), c.Name, err)
		}
		return intercept.Verdict{Action: intercept.Mutate, Payload: b}, nil
	}
	path, i, ok := find(v, s.each)
	if !ok {
		return intercept.Verdict{Action: intercept.Pass}, nil
	}
	where := what + " at " + path
	if path == "" {
		where = what
	}
	return intercept.Verdict{Action: intercept.Deny, Reason: fmt.Sprintf("%s looks like %s", where, secretsArticle(s.patterns[i].Name))}, nil
}

// secretsArticle puts "a" or "an" before a name.
func secretsArticle(name string) string {
	if name != "" && strings.ContainsRune("AEIOUaeiou", rune(name[0])) {
		return "an " + name
	}
	return "a " + name
}

func secretsPhase(p intercept.Phase) string {
	if p == intercept.Response {
		return "response"
	}
	return "request"
}
