package intercept

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/mcphost/mcphost/host/config"
)

// The default timeouts of one run of a check.
const (
	// DefaultHookTimeout is a hook's (Claude Code: 600 s; a gateway call
	// waits on it).
	DefaultHookTimeout = 60 * time.Second
	// DefaultInterceptorTimeout is an interceptor's.
	DefaultInterceptorTimeout = 5 * time.Second
)

// ErrUnsupported is matched by the error of a configuration the engine
// cannot enforce (an unknown hook event, an event an interceptor kind
// cannot check): such a block is refused, never accepted and skipped.
var ErrUnsupported = errors.New("not yet supported")

// interceptorEvents are the events an interceptor can check.
var interceptorEvents = []string{
	EventToolsCall, EventToolsList, EventPromptsGet, EventPromptsList,
	EventResourcesRead, EventResourcesList, EventTemplatesList,
}

// hookPlace is where a Claude Code hook event runs.
type hookPlace struct {
	event string
	phase Phase
}

var hookPlaces = map[string]hookPlace{
	HookPreToolUse:         {EventToolsCall, Request},
	HookPostToolUse:        {EventToolsCall, Response},
	HookPostToolUseFailure: {EventToolsCall, Response},
	HookElicitation:        {EventElicit, Request},
	HookElicitationResult:  {EventElicit, Response},
}

// HookEntry returns the entry of the hook block h run by ck, with the
// common fields (events, phases, match, mode, timeout, fail_open, source,
// dedup key) filled. Every hook constructor ends with it.
func HookEntry(h *config.Hook, ck Checker) (*Entry, error) {
	place, ok := hookPlaces[h.Event]
	if !ok {
		return nil, fmt.Errorf("hook %q at %s: %w (events: PreToolUse, PostToolUse, PostToolUseFailure, Elicitation, ElicitationResult)", h.Event, source(h.Origin), ErrUnsupported)
	}
	e := &Entry{
		Name:     h.Event,
		Kind:     KindHook,
		Hook:     h.Event,
		Events:   []string{place.event},
		Phases:   place.phase,
		FailOpen: h.FailOpen,
		Timeout:  h.Timeout,
		Source:   source(h.Origin),
		Blocking: true,
		Checker:  ck,
	}
	if e.Timeout <= 0 {
		e.Timeout = DefaultHookTimeout
	}
	var err error
	if e.Mode, err = mode(h.Mode); err != nil {
		return nil, fmt.Errorf("hook %q at %s: %w", h.Event, e.Source, err)
	}
	if h.Matcher != "" && h.Matcher != "*" {
		if e.Match.Matcher, err = config.CompileMatcher(h.Matcher); err != nil {
			return nil, fmt.Errorf("hook %q at %s: matcher: %w", h.Event, e.Source, err)
		}
	}
	setMatch(&e.Match, h.Match)
	if e.DedupKey, err = dedupKey(h); err != nil {
		return nil, fmt.Errorf("hook %q at %s: %w", h.Event, e.Source, err)
	}
	return e, nil
}

// dedupKey identifies h's handler: the command with its shell, environment
// and directory, or the URL with its headers.
func dedupKey(h *config.Hook) (string, error) {
	var v any
	if h.URL != "" {
		v = struct {
			URL     string
			Headers map[string]string
			Allowed []string
		}{h.URL, h.Headers, h.AllowedEnvVars}
	} else {
		v = struct {
			Command, Shell, Dir string
			Env                 map[string]string
			Inherit             []string
		}{h.Command, h.Shell, h.Dir, h.Env, h.InheritEnv}
	}
	b, err := json.Marshal(v) // map keys sorted: deterministic
	if err != nil {
		return "", fmt.Errorf("dedup key: %w", err)
	}
	return string(b), nil
}

// InterceptorEntry returns the entry of the interceptor block ic of kind
// run by ck, with the common fields (events, phases, match, mode,
// timeout, fail_open, source) filled. Every interceptor constructor ends
// with it. Events default to tools/call; phases to both, except the
// built-ins validate_input (request) and validate_output (response).
func InterceptorEntry(ic *config.Interceptor, kind Kind, ck Checker) (*Entry, error) {
	e := &Entry{
		Name:     ic.Name,
		Kind:     kind,
		Events:   slices.Clone(ic.Events),
		FailOpen: ic.FailOpen,
		Timeout:  ic.Timeout,
		Source:   source(ic.Origin),
		Blocking: kind != KindBuiltin,
		Checker:  ck,
	}
	wrap := func(err error) error { return fmt.Errorf("interceptor %q at %s: %w", ic.Name, e.Source, err) }
	if len(e.Events) == 0 {
		e.Events = []string{EventToolsCall}
	}
	for _, ev := range e.Events {
		if !slices.Contains(interceptorEvents, ev) {
			return nil, wrap(fmt.Errorf("event %q: %w", ev, ErrUnsupported))
		}
	}
	if e.Timeout <= 0 {
		e.Timeout = DefaultInterceptorTimeout
	}
	for _, ph := range ic.Phases {
		switch ph {
		case "request":
			e.Phases |= Request
		case "response":
			e.Phases |= Response
		default:
			return nil, wrap(fmt.Errorf("phase %q: %w (request, response)", ph, ErrUnsupported))
		}
	}
	if e.Phases == 0 {
		switch {
		case kind == KindBuiltin && ic.Builtin == "validate_input":
			e.Phases = Request
		case kind == KindBuiltin && ic.Builtin == "validate_output":
			e.Phases = Response
		default:
			e.Phases = Request | Response
		}
	}
	if e.Phases == Request && !slices.ContainsFunc(e.Events, func(ev string) bool { return !isList(ev) }) {
		// A list is checked in its response (filtered) only: an entry
		// that would check nothing is refused, not accepted.
		return nil, wrap(fmt.Errorf("the list events are checked in the response phase only: %w", ErrUnsupported))
	}
	var err error
	if e.Mode, err = mode(ic.Mode); err != nil {
		return nil, wrap(err)
	}
	setMatch(&e.Match, ic.Match)
	return e, nil
}

// isList reports whether event is a list method's: checked in its
// response only (a filter), never in its request.
func isList(event string) bool {
	switch event {
	case EventToolsList, EventPromptsList, EventResourcesList, EventTemplatesList:
		return true
	}
	return false
}

// setMatch copies a block's match into m.
func setMatch(m *Match, cm *config.CheckMatch) {
	if cm == nil {
		return
	}
	m.Servers = slices.Clone(cm.Servers)
	m.Tools = slices.Clone(cm.Tools)
	if p := cm.Principals; p != nil {
		cp := *p
		m.Principals = &cp
	}
}

// mode parses a block's mode.
func mode(s string) (Mode, error) {
	switch s {
	case "", "enforce":
		return Enforce, nil
	case "audit":
		return Audit, nil
	}
	return 0, fmt.Errorf("mode %q: %w (enforce, audit)", s, ErrUnsupported)
}

// source is where a block was declared: "user scope, /x/config.hcl:12".
func source(o config.Origin) string {
	if o.File == "" {
		return o.Scope.String() + " scope"
	}
	if o.Range.Start.Line > 0 {
		return fmt.Sprintf("%s scope, %s:%d", o.Scope, o.File, o.Range.Start.Line)
	}
	return fmt.Sprintf("%s scope, %s", o.Scope, o.File)
}
