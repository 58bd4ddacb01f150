// Package plugin runs an interceptor block that names a plugin
// (`interceptor "NAME" { plugin = "guard-regex" }`): each check is one
// Intercept RPC to the plugin's process, which the plugin runtime pins and
// supervises like every plugin.
package plugin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sync"

	"github.com/hashicorp/go-hclog"

	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/inbound"
	"github.com/mcphost/mcphost/host/intercept"
	"github.com/mcphost/mcphost/host/redact"
	"github.com/mcphost/mcphost/sdk"
)

// Getter returns the plugin's interceptor client for one operation. It
// returns the same value for as long as the plugin's process lives and a
// new one after a restart (plugins.Runtime.Interceptor does), which is how
// the checker knows to ask a restarted plugin for its scope again.
type Getter = func(ctx context.Context) (sdk.Interceptor, error)

// Option sets an option of New.
type Option func(*checker)

// WithLogger makes the checks log why they failed (the plugin could not
// be reached or broke, or it diagnosed the block's options) to l, through
// the redactor. Default: nowhere (the engine records the failure).
func WithLogger(l hclog.Logger) Option {
	return func(k *checker) { k.log = redact.Logger(l) }
}

// New returns the entry of the interceptor block ic, which names a plugin;
// get returns the plugin's current interceptor client (typically
// func(ctx) { return rt.Interceptor(ctx, ic.Plugin) }). The plugin is not
// started here: the first check starts it.
func New(ic *config.Interceptor, get Getter, opts ...Option) (*intercept.Entry, error) {
	if ic.Plugin == "" {
		return nil, fmt.Errorf("interceptor %s names no plugin", ic.Name)
	}
	if get == nil {
		return nil, fmt.Errorf("interceptor %s: no plugin runtime", ic.Name)
	}
	config := ic.Options
	if len(config) == 0 {
		config = json.RawMessage(`{}`)
	}
	k := &checker{name: ic.Name, plugin: ic.Plugin, config: config, get: get, log: hclog.NewNullLogger()}
	for _, o := range opts {
		o(k)
	}
	return intercept.InterceptorEntry(ic, intercept.KindPlugin, k)
}

// DiagnosticsError is a plugin's verdict that the block's options are
// unusable (a bad regular expression): the check fails, so the call is
// refused unless the block fails open.
type DiagnosticsError struct {
	Interceptor, Plugin string
	Diagnostics         sdk.Diagnostics
}

func (e *DiagnosticsError) Error() string {
	return fmt.Sprintf("interceptor %s (plugin %s): %v", e.Interceptor, e.Plugin, e.Diagnostics.Err())
}

// ProtocolError is an answer the protocol does not allow (an unknown
// action, a mutation without a valid JSON payload).
type ProtocolError struct {
	Interceptor, Plugin, Problem string
}

func (e *ProtocolError) Error() string {
	return fmt.Sprintf("interceptor %s (plugin %s): %s", e.Interceptor, e.Plugin, e.Problem)
}

// checker is one block's Checker.
type checker struct {
	name, plugin string
	config       json.RawMessage
	get          Getter
	log          hclog.Logger

	mu    sync.Mutex
	scope *scope // of the plugin process that answered it; nil: not asked yet
}

// scope is a plugin process's answer to Scope for the block's options.
type scope struct {
	of        sdk.Interceptor
	req, resp bool
	err       error // *DiagnosticsError: every check fails
}

// Check runs one phase of one call through the plugin. A failure is
// logged (a diagnosis of the options once per plugin process) and
// returned: the engine refuses the call unless the block fails open.
func (k *checker) Check(ctx context.Context, c *intercept.Call, p intercept.Phase) (intercept.Verdict, error) {
	v, err := k.check(ctx, c, p)
	if err != nil && !k.scopeErr(err) {
		k.log.Warn("interceptor check failed", "interceptor", k.name, "plugin", k.plugin, "event", c.Event, "name", c.Name, "error", err)
	}
	return v, err
}

// scopeErr says err is the kept diagnosis of the options (logged once,
// when it was made).
func (k *checker) scopeErr(err error) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.scope != nil && k.scope.err != nil && err == k.scope.err
}

func (k *checker) check(ctx context.Context, c *intercept.Call, p intercept.Phase) (intercept.Verdict, error) {
	ic, err := k.get(ctx)
	if err == nil && ic == nil {
		err = errors.New("no interceptor client")
	}
	if err != nil {
		return intercept.Verdict{}, fmt.Errorf("interceptor %s (plugin %s): %w", k.name, k.plugin, err)
	}
	sc, err := k.scoped(ctx, ic)
	if err != nil {
		return intercept.Verdict{}, err
	}
	if sc.err != nil {
		return intercept.Verdict{}, sc.err
	}
	var phase sdk.InterceptPhase
	switch p {
	case intercept.Request:
		if !sc.req {
			return intercept.Verdict{Action: intercept.Pass}, nil
		}
		phase = sdk.PhaseRequest
	case intercept.Response:
		if !sc.resp {
			return intercept.Verdict{Action: intercept.Pass}, nil
		}
		phase = sdk.PhaseResponse
	default:
		return intercept.Verdict{}, fmt.Errorf("interceptor %s: phase %d is not one phase", k.name, p)
	}
	req := &sdk.InterceptRequest{
		Interceptor: k.name, Event: c.Event, Phase: phase, Payload: c.Payload, Config: k.config,
		ServerName: c.Server, Name: c.Name, Principal: principal(c.Who),
	}
	if phase == sdk.PhaseResponse {
		req.Request = c.Args
	}
	resp, err := ic.Intercept(ctx, req)
	if err != nil {
		return intercept.Verdict{}, fmt.Errorf("interceptor %s (plugin %s): %w", k.name, k.plugin, err)
	}
	return k.verdict(resp)
}

// verdict maps a plugin's answer to the engine's.
func (k *checker) verdict(resp *sdk.InterceptResponse) (intercept.Verdict, error) {
	if resp == nil {
		return intercept.Verdict{Action: intercept.Pass}, nil
	}
	if resp.Diagnostics.HasErrors() {
		return intercept.Verdict{}, &DiagnosticsError{Interceptor: k.name, Plugin: k.plugin, Diagnostics: resp.Diagnostics}
	}
	switch resp.Action {
	case sdk.ActionPass, 0:
		return intercept.Verdict{Action: intercept.Pass}, nil
	case sdk.ActionDeny:
		return intercept.Verdict{Action: intercept.Deny, Reason: resp.Reason}, nil
	case sdk.ActionMutate:
		if len(resp.Payload) == 0 || !json.Valid(resp.Payload) {
			return intercept.Verdict{}, &ProtocolError{Interceptor: k.name, Plugin: k.plugin, Problem: "a mutation without a valid JSON payload"}
		}
		return intercept.Verdict{Action: intercept.Mutate, Payload: resp.Payload}, nil
	}
	return intercept.Verdict{}, &ProtocolError{Interceptor: k.name, Plugin: k.plugin, Problem: fmt.Sprintf("unknown action %d", resp.Action)}
}

// scoped returns the phases the plugin process ic needs for the block's
// options, asking it once per process (a restarted plugin is asked again).
// A failed RPC is returned and not kept; a diagnostic is kept in the scope.
func (k *checker) scoped(ctx context.Context, ic sdk.Interceptor) (*scope, error) {
	// A client of a type that cannot be compared has no identity: it is
	// asked every time (the runtime's clients are pointers).
	comparable := reflect.TypeOf(ic).Comparable()
	k.mu.Lock()
	sc := k.scope
	k.mu.Unlock()
	if comparable && sc != nil && sc.of == ic {
		return sc, nil
	}
	sc = &scope{of: ic, req: true, resp: true}
	var diags sdk.Diagnostics
	switch s := ic.(type) {
	case sdk.InterceptorClient:
		req, resp, d, err := s.InterceptScope(ctx, k.config)
		if err != nil {
			return nil, fmt.Errorf("interceptor %s (plugin %s): scope: %w", k.name, k.plugin, err)
		}
		sc.req, sc.resp, diags = req, resp, d
	case sdk.InterceptScoper:
		sc.req, sc.resp, diags = s.Scope(ctx, k.config)
	}
	if diags.HasErrors() {
		sc.err = &DiagnosticsError{Interceptor: k.name, Plugin: k.plugin, Diagnostics: diags}
		if comparable {
			k.log.Error("interceptor options refused by its plugin; every call it checks is refused unless it fails open", "interceptor", k.name, "plugin", k.plugin, "error", sc.err)
		}
	}
	if comparable {
		k.mu.Lock()
		k.scope = sc
		k.mu.Unlock()
	}
	return sc, nil
}

// principal is the gateway user as a plugin sees it: never a token.
func principal(p *inbound.Principal) *sdk.Principal {
	if p == nil {
		return nil
	}
	return &sdk.Principal{Issuer: p.Issuer, Subject: p.Subject, Groups: slices.Clone(p.Groups)}
}
