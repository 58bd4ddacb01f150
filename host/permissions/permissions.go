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
	// For, if set, limits the rule to some principals (a permissions
	// block's for_principals): it applies only to a Who it names. Rules of
	// one block share the pointer.
	For *Principals `json:"for_principals,omitempty"`
}

func (r *Rule) String() string {
	if r.For != nil {
		return fmt.Sprintf("%s %q for %s (%s)", r.Behavior, r.Pattern, r.For, r.Source)
	}
	return fmt.Sprintf("%s %q (%s)", r.Behavior, r.Pattern, r.Source)
}

// Principals names whom a rule applies to: a principal whose subject is one
// of Subjects, or who is in one of Groups.
type Principals struct {
	Groups   []string `json:"groups,omitempty"`
	Subjects []string `json:"subjects,omitempty"`
}

// Matches reports whether the rule's principals include who. Nobody in
// particular (nil: the host's own user, a stdio client) is never included.
func (p *Principals) Matches(who *Who) bool {
	if who == nil {
		return false
	}
	for _, s := range p.Subjects {
		if s == who.Subject {
			return true
		}
	}
	for _, g := range p.Groups {
		for _, wg := range who.Groups {
			if g == wg {
				return true
			}
		}
	}
	return false
}

func (p *Principals) String() string {
	var parts []string
	if len(p.Groups) > 0 {
		parts = append(parts, fmt.Sprintf("groups %q", p.Groups))
	}
	if len(p.Subjects) > 0 {
		parts = append(parts, fmt.Sprintf("subjects %q", p.Subjects))
	}
	return strings.Join(parts, " or ")
}

// Who is the principal a decision is made for: an authenticated user of
// the gateway (its token's subject and groups).
type Who struct {
	Subject string
	Groups  []string
}

// Decision is the outcome for one tool name.
type Decision struct {
	Behavior Behavior `json:"decision"`
	// Rule is the rule that decided, or nil when the default mode did.
	Rule *Rule `json:"rule,omitempty"`
	// Mode is the default mode, when it decided.
	Mode Mode `json:"mode,omitempty"`
	// ModeSource says where the default mode was set ("" for the built-in default).
	ModeSource string `json:"mode_source,omitempty"`
	// ModeManaged says the managed configuration set the default mode: a
	// managed policy, which a hook's allow does not override.
	ModeManaged bool `json:"mode_managed,omitempty"`
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
	mode        Mode
	modeSource  string
	modeManaged bool
	tiers       [3]tier // indexed by Behavior: the rules for everyone
	// scoped holds the rules limited to principals, one set per
	// for_principals condition.
	scoped []scopedTiers
}

// scopedTiers are the rules of one for_principals condition.
type scopedTiers struct {
	cond  *Principals
	tiers [3]tier
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

// ManagedMode marks p's default mode as set by the managed configuration
// (Decision.ModeManaged). Call it before p is used.
func (p *Policy) ManagedMode() { p.modeManaged = true }

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
	p.tiers = newTiers()
	var errs []error
	for i := range rules {
		r := &rules[i]
		if err := ValidatePattern(r.Behavior, r.Pattern); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", r.Source, err))
			continue
		}
		t := &p.tiers[r.Behavior]
		if r.For != nil {
			t = &p.scopedFor(r.For).tiers[r.Behavior]
		}
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

func newTiers() [3]tier {
	var ts [3]tier
	for i := range ts {
		ts[i] = tier{exact: map[string]*Rule{}, servers: map[string]*Rule{}, globs: map[string][]glob{}}
	}
	return ts
}

// Scoped reports whether some rules apply to some principals only.
func (p *Policy) Scoped() bool { return len(p.scoped) > 0 }

// scopedFor returns the rule set of a for_principals condition (rules of one
// block share it), adding it if new.
func (p *Policy) scopedFor(cond *Principals) *scopedTiers {
	for i := range p.scoped {
		if p.scoped[i].cond == cond {
			return &p.scoped[i]
		}
	}
	p.scoped = append(p.scoped, scopedTiers{cond: cond, tiers: newTiers()})
	return &p.scoped[len(p.scoped)-1]
}

// Decide returns the decision for a tool's registry name, for nobody in
// particular: rules limited to principals do not apply. It does not
// allocate.
func (p *Policy) Decide(name string) Decision { return p.DecideFor(name, nil) }

// DecideFor returns the decision for a tool's registry name and a
// principal: the rules for everyone and those whose for_principals include
// who, with the same precedence (deny > ask > allow, then the default
// mode). It does not allocate.
func (p *Policy) DecideFor(name string, who *Who) Decision {
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
		for i := range p.scoped {
			if s := &p.scoped[i]; s.cond.Matches(who) {
				if r := s.tiers[b].match(name, server); r != nil {
					return Decision{Behavior: b, Rule: r}
				}
			}
		}
	}
	return Decision{Behavior: p.mode.Behavior(), Mode: p.mode, ModeSource: p.modeSource, ModeManaged: p.modeManaged}
}

// ServerDenied reports whether everything of server is denied to who: a
// deny rule covers the whole server ("mcp__github", "mcp__github__*",
// "mcp__git*"), or the default mode is deny and no allow or ask rule for
// who names the server. It decides what is not a tool — a server's
// resources and resource templates — which no pattern names one by one.
func (p *Policy) ServerDenied(server string, who *Who) bool {
	each := func(f func(ts *[3]tier) bool) bool {
		if f(&p.tiers) {
			return true
		}
		for i := range p.scoped {
			if s := &p.scoped[i]; s.cond.Matches(who) && f(&s.tiers) {
				return true
			}
		}
		return false
	}
	if each(func(ts *[3]tier) bool { return ts[Deny].coversServer(server) }) {
		return true
	}
	if p.mode != ModeDeny {
		return false
	}
	return !each(func(ts *[3]tier) bool { return ts[Allow].mentions(server) || ts[Ask].mentions(server) })
}

// coversServer reports whether a rule of t matches every tool of server.
func (t *tier) coversServer(server string) bool {
	if _, ok := t.servers[server]; ok {
		return true
	}
	for _, g := range t.any {
		rest := g.pattern[len(prefix):]
		s, tool, hasTool := strings.Cut(rest, sep)
		if (!hasTool || strings.Trim(tool, "*") == "" && tool != "") && globMatch(s, server) {
			return true
		}
	}
	return false
}

// mentions reports whether a rule of t may match some tool of server.
func (t *tier) mentions(server string) bool {
	if _, ok := t.servers[server]; ok || len(t.globs[server]) > 0 {
		return true
	}
	for name := range t.exact {
		if s, _, ok := strings.Cut(name[len(prefix):], sep); ok && s == server {
			return true
		}
	}
	for _, g := range t.any {
		s, _, _ := strings.Cut(g.pattern[len(prefix):], sep)
		if globMatch(s, server) {
			return true
		}
	}
	return false
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

// Glob reports whether s matches the glob pattern p (* any run of
// characters, ? exactly one): the match of patterns that are not
// permission patterns, such as a server's tool filter.
func Glob(p, s string) bool { return globMatch(p, s) }

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
