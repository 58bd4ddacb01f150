// Package permissions decides whether a tool may be called: allow, ask or
// deny, from rules written in any configuration scope, with the rule (scope,
// file and pattern) behind every decision. Rules are compiled once; a
// decision does not allocate.
//
// Patterns:
//
//	mcp__github                  every tool of server github
//	mcp__github__*               the same
//	mcp__github__create_issue    one tool
//	mcp__*__read_*, mcp__git*__* globs: * is any run of characters, ? one character
//
// Precedence: deny > ask > allow, whatever the scope, so a lower scope can
// never loosen a managed deny or ask. A name no rule matches gets the
// default mode: ask, unless configured otherwise (a managed default mode
// cannot be loosened by a lower scope).
package permissions

import (
	"errors"
	"fmt"
	"strings"
)

// Behavior is a decision.
type Behavior int

// Behaviors, in increasing strictness.
const (
	Allow Behavior = iota
	Ask
	Deny
)

var behaviorNames = [...]string{"allow", "ask", "deny"}

func (b Behavior) String() string { return behaviorNames[b] }

// MarshalText implements encoding.TextMarshaler.
func (b Behavior) MarshalText() ([]byte, error) { return []byte(b.String()), nil }

// Mode is the behavior for names no rule matches.
type Mode string

// Modes.
const (
	ModeAsk      Mode = "ask"
	ModeAllowAll Mode = "allow_all"
	ModeDeny     Mode = "deny"
)

// Modes lists the valid modes.
var Modes = []Mode{ModeAsk, ModeAllowAll, ModeDeny}

// Behavior returns the decision a mode gives.
func (m Mode) Behavior() Behavior {
	switch m {
	case ModeAllowAll:
		return Allow
	case ModeDeny:
		return Deny
	}
	return Ask
}

// Rule is one pattern with its behavior and where it was written.
type Rule struct {
	Behavior Behavior `json:"behavior"`
	Pattern  string   `json:"pattern"`
	// Source says where the rule came from, e.g. "managed scope, /etc/mcphost/managed.hcl:3".
	Source string `json:"source"`
}

func (r *Rule) String() string { return fmt.Sprintf("%s %q (%s)", r.Behavior, r.Pattern, r.Source) }

// Decision is the outcome for one tool name.
type Decision struct {
	Behavior Behavior `json:"decision"`
	// Rule is the rule that decided, or nil when the default mode did.
	Rule *Rule `json:"rule,omitempty"`
	// Mode is the default mode, when it decided.
	Mode Mode `json:"mode,omitempty"`
	// ModeSource says where the default mode was set ("" for the built-in default).
	ModeSource string `json:"mode_source,omitempty"`
}

// Explain says why, in a sentence.
func (d Decision) Explain() string {
	if d.Rule != nil {
		return fmt.Sprintf("%s by rule %q (%s)", d.Behavior, d.Rule.Pattern, d.Rule.Source)
	}
	src := "the built-in default"
	if d.ModeSource != "" {
		src = d.ModeSource
	}
	return fmt.Sprintf("%s: no rule matches, and the default mode is %s (%s)", d.Behavior, d.Mode, src)
}

// ValidatePattern checks a pattern for a behavior. Allowed characters are
// [A-Za-z0-9_-] and the wildcards * and ?. Every pattern starts with "mcp__".
// An allow pattern with a wildcard must name its server literally
// ("mcp__server__…"), so that no allow rule covers servers it does not name.
func ValidatePattern(b Behavior, p string) error {
	if !strings.HasPrefix(p, prefix) {
		return fmt.Errorf("pattern %q must start with %q (e.g. \"mcp__github\", \"mcp__github__*\", \"mcp__github__create_issue\")", p, prefix)
	}
	for _, r := range p {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' || r == '*' || r == '?') {
			return fmt.Errorf("pattern %q contains %q; patterns use letters, digits, '_', '-', and the wildcards * and ?", p, r)
		}
	}
	rest := p[len(prefix):]
	if rest == "" {
		return fmt.Errorf("pattern %q names no server", p)
	}
	if b == Allow && strings.ContainsAny(p, "*?") {
		server, _, ok := strings.Cut(rest, sep)
		if !ok || server == "" || strings.ContainsAny(server, "*?") {
			return fmt.Errorf("allow pattern %q must name its server literally, like \"mcp__github__*\": an allow wildcard may not span servers", p)
		}
	}
	return nil
}

const (
	prefix = "mcp__"
	sep    = "__"
)

// Policy is a compiled rule set. Decide is safe for concurrent use.
type Policy struct {
	mode       Mode
	modeSource string
	tiers      [3]tier // indexed by Behavior
}

// tier holds one behavior's rules, indexed for lookup.
type tier struct {
	exact   map[string]*Rule  // full tool names
	servers map[string]*Rule  // whole-server rules, by server
	globs   map[string][]glob // globs whose server is literal, by server
	any     []glob            // globs with a wildcard in the server part
}

type glob struct {
	pattern string
	rule    *Rule
}

// Compile validates and indexes rules. mode is the default mode ("" means ask).
func Compile(rules []Rule, mode Mode, modeSource string) (*Policy, error) {
	if mode == "" {
		mode = ModeAsk
	}
	valid := false
	for _, m := range Modes {
		valid = valid || m == mode
	}
	if !valid {
		return nil, fmt.Errorf("default mode %q is not one of ask, allow_all, deny", mode)
	}
	p := &Policy{mode: mode, modeSource: modeSource}
	for i := range p.tiers {
		p.tiers[i] = tier{exact: map[string]*Rule{}, servers: map[string]*Rule{}, globs: map[string][]glob{}}
	}
	var errs []error
	for i := range rules {
		r := &rules[i]
		if err := ValidatePattern(r.Behavior, r.Pattern); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", r.Source, err))
			continue
		}
		t := &p.tiers[r.Behavior]
		rest := r.Pattern[len(prefix):]
		server, tool, hasTool := strings.Cut(rest, sep)
		wild := strings.ContainsAny(r.Pattern, "*?")
		switch {
		case !wild && !hasTool, hasTool && tool == "*" && !strings.ContainsAny(server, "*?"):
			if _, dup := t.servers[server]; !dup {
				t.servers[server] = r
			}
		case !wild:
			if _, dup := t.exact[r.Pattern]; !dup {
				t.exact[r.Pattern] = r
			}
		case !strings.ContainsAny(server, "*?") && hasTool:
			t.globs[server] = append(t.globs[server], glob{r.Pattern, r})
		default:
			t.any = append(t.any, glob{r.Pattern, r})
		}
	}
	return p, errors.Join(errs...)
}

// Decide returns the decision for a tool's registry name. It does not allocate.
func (p *Policy) Decide(name string) Decision {
	server := "" // only for a full mcp__SERVER__TOOL name
	if rest, ok := strings.CutPrefix(name, prefix); ok {
		if s, _, found := strings.Cut(rest, sep); found {
			server = s
		}
	}
	for _, b := range [...]Behavior{Deny, Ask, Allow} {
		if r := p.tiers[b].match(name, server); r != nil {
			return Decision{Behavior: b, Rule: r}
		}
	}
	return Decision{Behavior: p.mode.Behavior(), Mode: p.mode, ModeSource: p.modeSource}
}

func (t *tier) match(name, server string) *Rule {
	if r, ok := t.exact[name]; ok {
		return r
	}
	if server != "" {
		if r, ok := t.servers[server]; ok {
			return r
		}
		for _, g := range t.globs[server] {
			if Match(g.pattern, name) {
				return g.rule
			}
		}
	}
	for _, g := range t.any {
		if Match(g.pattern, name) {
			return g.rule
		}
	}
	return nil
}

// Match reports whether name matches pattern, where * matches any run of
// characters and ? exactly one. A pattern without a tool part ("mcp__github")
// matches every tool of that server.
func Match(pattern, name string) bool {
	if strings.HasPrefix(pattern, prefix) && !strings.Contains(pattern[len(prefix):], sep) {
		// A whole-server pattern: the server part must match, then anything.
		rest, ok := strings.CutPrefix(name, prefix)
		if !ok {
			return false
		}
		server, _, found := strings.Cut(rest, sep)
		return found && globMatch(pattern[len(prefix):], server)
	}
	return globMatch(pattern, name)
}

// globMatch is the iterative wildcard match (* and ?), linear in practice
// and allocation-free.
func globMatch(p, s string) bool {
	pi, si := 0, 0
	star, mark := -1, 0
	for si < len(s) {
		switch {
		case pi < len(p) && p[pi] == '*':
			star, mark = pi, si
			pi++
		case pi < len(p) && (p[pi] == '?' || p[pi] == s[si]):
			pi++
			si++
		case star >= 0:
			pi = star + 1
			mark++
			si = mark
		default:
			return false
		}
	}
	for pi < len(p) && p[pi] == '*' {
		pi++
	}
	return pi == len(p)
}
