package host

import (
	"context"
	"fmt"

	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/intercept"
	"github.com/mcphost/mcphost/host/intercept/builtin"
	"github.com/mcphost/mcphost/host/intercept/hook"
	"github.com/mcphost/mcphost/host/intercept/plugin"
	"github.com/mcphost/mcphost/host/intercept/sep"
	"github.com/mcphost/mcphost/sdk"
)

// The hooks and interceptors of a configuration become one intercept.Chain
// (buildChecks), stored in Host.checks by New and Reload next to the
// permission rules: every call's gate (gate.go) takes its plan from the
// chain in force when it starts.

// ErrCheckUnsupported is the class of a hook or interceptor block whose kind
// this build cannot run. Such a configuration is refused (New, Reload): a
// check that is configured but does not run would let through what it was
// written to stop.
var ErrCheckUnsupported = intercept.ErrUnsupported

// checkKinds makes the entries of the kinds of checks: one constructor per
// kind, nil for a kind this build cannot run.
type checkKinds struct {
	hook    func(*config.Hook) (*intercept.Entry, error)
	plugin  func(*config.Interceptor) (*intercept.Entry, error) // plugin = "…"
	server  func(*config.Interceptor) (*intercept.Entry, error) // server = "…" (SEP-2624)
	builtin func(*config.Interceptor) (*intercept.Entry, error) // builtin = "…"
}

// buildChecks returns the chain of cfg's hook and interceptor blocks in
// declared order (hooks first, then interceptors; nil for none). A project
// file's blocks not approved yet are left out (the load warned about
// them); an error names the first block that cannot be run.
func (h *Host) buildChecks(cfg *config.Config) (*intercept.Chain, error) {
	return buildChecks(cfg, h.checkKinds())
}

// buildChecks is Host.buildChecks with the constructors k.
func buildChecks(cfg *config.Config, k checkKinds) (*intercept.Chain, error) {
	var entries []*intercept.Entry
	for _, hk := range cfg.Hooks {
		if !runs(hk.Approved, hk.Origin) {
			continue
		}
		if k.hook == nil {
			return nil, fmt.Errorf("hook %q (%s): hooks are %w in this build", hk.Event, hk.Origin.Source(), ErrCheckUnsupported)
		}
		e, err := k.hook(hk)
		if err != nil {
			return nil, fmt.Errorf("hook %q (%s): %w", hk.Event, hk.Origin.Source(), err)
		}
		entries = append(entries, e)
	}
	for _, ic := range cfg.Interceptors {
		if !runs(ic.Approved, ic.Origin) {
			continue
		}
		var (
			build func(*config.Interceptor) (*intercept.Entry, error)
			what  string
		)
		switch {
		case ic.Plugin != "":
			build, what = k.plugin, "interceptor plugins"
		case ic.Server != "":
			build, what = k.server, "interceptor servers (SEP-2624)"
		case ic.Builtin != "":
			build, what = k.builtin, "built-in interceptors"
		default:
			return nil, fmt.Errorf("interceptor %q (%s): none of plugin, server and builtin is set", ic.Name, ic.Origin.Source())
		}
		if build == nil {
			return nil, fmt.Errorf("interceptor %q (%s): %s are %w in this build", ic.Name, ic.Origin.Source(), what, ErrCheckUnsupported)
		}
		e, err := build(ic)
		if err != nil {
			return nil, fmt.Errorf("interceptor %q (%s): %w", ic.Name, ic.Origin.Source(), err)
		}
		entries = append(entries, e)
	}
	return intercept.NewChain(entries), nil
}

// runs reports whether a block of origin o runs: every block but a
// project file's not approved yet (as for servers, the approval is the
// project file's; config.Load sets Approved).
func runs(approved bool, o config.Origin) bool {
	return approved || o.Scope != config.ScopeProject
}

// checkKinds returns the constructors of the kinds of checks this build
// runs. They take what they need of the host when they run, not when the
// chain is built.
func (h *Host) checkKinds() checkKinds {
	return checkKinds{
		hook: func(hk *config.Hook) (*intercept.Entry, error) {
			return hook.New(hk, hook.Options{Log: h.log.Named("hook"), LookupEnv: h.lookupEnv})
		},
		plugin: func(ic *config.Interceptor) (*intercept.Entry, error) {
			name := ic.Plugin
			return plugin.New(ic, func(ctx context.Context) (sdk.Interceptor, error) {
				rt := h.plugins.Load() // (the runtime in force: a reload may replace it)
				if rt == nil {
					return nil, fmt.Errorf("plugin %s: no plugin is configured", name)
				}
				return rt.Interceptor(ctx, name)
			}, plugin.WithLogger(h.log.Named("interceptor")))
		},
		server: func(ic *config.Interceptor) (*intercept.Entry, error) {
			do, gen := h.SEPDo()
			return sep.New(ic, do, gen)
		},
		builtin: func(ic *config.Interceptor) (*intercept.Entry, error) {
			return builtin.New(ic, builtin.WithLogger(h.log.Named("interceptor")))
		},
	}
}
