// Package guardregex is the guard-regex interceptor plugin. Its options:
//
//	deny_arguments = ["(?i)drop\\s+table"]   # deny a call whose arguments match
//	redact_results = ["AKIA[0-9A-Z]{16}"]    # mask matches in results
//
// Both are lists of Go (RE2) regular expressions. In the request phase the
// first string of the arguments (objects in key order) that one of
// deny_arguments matches denies the call: "argument at /path matches
// deny_arguments[i]". In the response phase every match of redact_results
// in the result's text (content[].text, content[].resource.text, every
// string of structuredContent; a prompt's messages, a resource's contents;
// every string of a list's result) becomes [REDACTED]; the result is
// mutated only if something was replaced. A configuration needs the request phase only with
// deny_arguments and the response phase only with redact_results (Scope),
// and a bad expression is a diagnostic naming it.
package guardregex

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/hashicorp/go-hclog"

	"github.com/mcphost/mcphost/sdk"
	"github.com/mcphost/mcphost/sdk/jsonredact"
)

// Info describes the plugin.
var Info = sdk.Info{
	Name:    "guard-regex",
	Version: "1.0.0",
	Interceptor: &sdk.Component{
		Name:        "guard-regex",
		Description: "denies calls whose arguments match, masks matches in results",
		Config: []sdk.Attribute{
			{Name: "deny_arguments", Type: sdk.TypeListOfString, Description: "regular expressions (RE2): a call with a matching argument string is denied"},
			{Name: "redact_results", Type: sdk.TypeListOfString, Description: "regular expressions (RE2): matches in a result's text and structured content become [REDACTED]"},
		},
	},
}

// Main serves the plugin.
func Main() int {
	log := sdk.Logger()
	if err := sdk.Serve(&sdk.ServeOpts{Info: Info, Interceptor: &Guard{Log: log}, Logger: log}); err != nil {
		log.Error("cannot serve", "error", err)
		return 1
	}
	return 0
}

// maxCached bounds the compiled configurations kept (a host reloading its
// configuration sends new ones; old ones are dropped wholesale).
const maxCached = 64

// Guard is the interceptor. The zero value is ready to use.
type Guard struct {
	// Log receives the plugin's logs. OPTIONAL.
	Log hclog.Logger

	mu       sync.Mutex
	compiled map[string]*compiled // by the configuration's bytes
}

var (
	_ sdk.Interceptor     = (*Guard)(nil)
	_ sdk.InterceptScoper = (*Guard)(nil)
)

// options are the block's options.
type options struct {
	DenyArguments []string `json:"deny_arguments"`
	RedactResults []string `json:"redact_results"`
}

// compiled is one configuration, compiled; diags says why it is unusable.
type compiled struct {
	deny, redact []*regexp.Regexp
	diags        sdk.Diagnostics
}

// compile returns the configuration raw compiled, from the cache if it was
// seen before.
func (g *Guard) compile(raw json.RawMessage) *compiled {
	key := string(raw)
	g.mu.Lock()
	c, ok := g.compiled[key]
	g.mu.Unlock()
	if ok {
		return c
	}
	c = &compiled{}
	var o options
	if c.diags = sdk.DecodeConfig(raw, &o); !c.diags.HasErrors() {
		c.deny = compileList("deny_arguments", o.DenyArguments, &c.diags)
		c.redact = compileList("redact_results", o.RedactResults, &c.diags)
	}
	g.mu.Lock()
	if g.compiled == nil || len(g.compiled) >= maxCached {
		g.compiled = map[string]*compiled{}
	}
	g.compiled[key] = c
	g.mu.Unlock()
	return c
}

func compileList(attr string, exprs []string, diags *sdk.Diagnostics) []*regexp.Regexp {
	out := make([]*regexp.Regexp, 0, len(exprs))
	for i, e := range exprs {
		re, err := regexp.Compile(e)
		if err != nil {
			*diags = append(*diags, sdk.Errorf(attr, "Invalid regular expression", "%s[%d]: %v (Go's RE2 syntax: no lookaround, no backreferences)", attr, i, err))
			continue
		}
		out = append(out, re)
	}
	return out
}

// Scope needs the request phase with deny_arguments, the response phase
// with redact_results.
func (g *Guard) Scope(_ context.Context, config json.RawMessage) (bool, bool, sdk.Diagnostics) {
	c := g.compile(config)
	if c.diags.HasErrors() {
		return false, false, c.diags
	}
	return len(c.deny) > 0, len(c.redact) > 0, nil
}

// Intercept checks one phase of one operation.
func (g *Guard) Intercept(_ context.Context, req *sdk.InterceptRequest) (*sdk.InterceptResponse, error) {
	c := g.compile(req.Config)
	if c.diags.HasErrors() {
		return &sdk.InterceptResponse{Diagnostics: c.diags}, nil
	}
	switch req.Phase {
	case sdk.PhaseRequest:
		return g.request(req, c), nil
	case sdk.PhaseResponse:
		return g.response(req, c), nil
	}
	return &sdk.InterceptResponse{Action: sdk.ActionPass}, nil
}

var pass = &sdk.InterceptResponse{Action: sdk.ActionPass}

// request denies the first argument string a deny_arguments expression
// matches.
func (g *Guard) request(req *sdk.InterceptRequest, c *compiled) *sdk.InterceptResponse {
	if len(c.deny) == 0 || len(req.Payload) == 0 {
		return pass
	}
	v, err := jsonredact.Decode(req.Payload)
	if err != nil {
		// Not JSON: nothing a client could send through the host.
		return &sdk.InterceptResponse{Action: sdk.ActionDeny, Reason: "the arguments are not JSON"}
	}
	v = arguments(req.Event, v)
	path, i, ok := jsonredact.Find(v, c.deny)
	if !ok {
		return pass
	}
	where := "argument at " + path
	if path == "" {
		where = "argument"
	}
	return &sdk.InterceptResponse{Action: sdk.ActionDeny, Reason: fmt.Sprintf("%s matches deny_arguments[%d]", where, i)}
}

// arguments is the part of a request payload that holds arguments:
// tools/call's payload is its arguments; prompts/get's are its "arguments"
// member; resources/read's is its URI.
func arguments(event string, v any) any {
	obj, ok := v.(map[string]any)
	if !ok {
		return v
	}
	switch event {
	case sdk.EventPromptsGet:
		return obj["arguments"]
	case sdk.EventResourcesRead:
		return map[string]any{"uri": obj["uri"]}
	}
	return v
}

// response masks redact_results' matches in the result's text.
func (g *Guard) response(req *sdk.InterceptRequest, c *compiled) *sdk.InterceptResponse {
	if len(c.redact) == 0 || len(req.Payload) == 0 {
		return pass
	}
	v, err := jsonredact.Decode(req.Payload)
	if err != nil {
		return &sdk.InterceptResponse{Action: sdk.ActionDeny, Reason: "the result is not JSON"}
	}
	redact := jsonredact.RedactResult
	if strings.HasSuffix(req.Event, "/list") {
		redact = jsonredact.Redact // a list's result has no text content: every string
	}
	v, n := redact(v, c.redact, jsonredact.Mask)
	if n == 0 {
		return pass
	}
	out, err := jsonredact.Encode(v)
	if err != nil {
		return &sdk.InterceptResponse{Action: sdk.ActionDeny, Reason: "the redacted result does not encode"}
	}
	if g.Log != nil {
		g.Log.Debug("redacted", "interceptor", req.Interceptor, "name", req.Name, "matches", n)
	}
	return &sdk.InterceptResponse{Action: sdk.ActionMutate, Payload: out}
}
