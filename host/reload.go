package host

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/conn"
	"github.com/mcphost/mcphost/host/plugins"
)

// Reloaded is what Host.Reload applied.
type Reloaded struct {
	// Added, Removed, Replaced and Updated name the servers as in
	// conn.Applied.
	Added, Removed, Replaced, Updated []string
	// Permissions reports that the permission rules or the default mode
	// changed: they apply from the next call.
	Permissions bool
	// Plugins reports that the plugins changed (a plugin block, a
	// discovered plugin or the lock file's pins): the servers that use
	// plugins were connected anew through a new plugin runtime.
	Plugins bool
	// Endpoints reports that the endpoint blocks changed: the gateway's
	// named endpoints follow them (serve).
	Endpoints bool
	// Checks reports that the hook or interceptor blocks changed: they
	// apply from the next call (a call in flight keeps the checks it
	// started with).
	Checks bool
	// RestartNeeded names what changed but applies only to a new process
	// (settings such as naming, the gateway block): the host keeps running
	// with the old values.
	RestartNeeded []string
	// Drained is closed once the removed and replaced connections (and a
	// replaced plugin runtime) have drained and closed.
	Drained <-chan struct{}
}

// Changed reports whether the reload applied anything.
func (r *Reloaded) Changed() bool {
	return len(r.Added)+len(r.Removed)+len(r.Replaced)+len(r.Updated) > 0 || r.Permissions || r.Plugins || r.Endpoints || r.Checks
}

// reloads serializes Reload and owns what it leaves running.
type reloads struct {
	mu sync.Mutex     // one Reload at a time
	wg sync.WaitGroup // closing of replaced plugin runtimes
}

// ErrReload is the class of a reload that was refused (nothing applied).
var ErrReload = errors.New("configuration not applied")

// Reload applies a newly loaded configuration to the running host, changing
// only what changed: added servers are connected; removed and changed ones
// are retired, their calls in flight given up to drain to finish (then
// cancelled with a conn.CutError) while new calls go to the new connection;
// permission rules and the default mode apply from the next call; changed
// plugins get a new runtime. Lists are reported changed (registry OnChange)
// so a gateway tells its clients. What only a new process can apply is
// named in RestartNeeded and left as it was.
//
// cfg must be a configuration loaded without errors. On error (ErrReload)
// nothing was applied.
func (h *Host) Reload(ctx context.Context, cfg *config.Config, drain time.Duration) (*Reloaded, error) {
	if cfg == nil {
		return nil, fmt.Errorf("%w: no configuration", ErrReload)
	}
	h.reloads.mu.Lock()
	defer h.reloads.mu.Unlock()
	old := h.cfg.Load()
	policy, err := cfg.Policy()
	if err != nil {
		return nil, fmt.Errorf("%w: permission rules: %w", ErrReload, err)
	}
	if err := checkInProcess(cfg, h.inProcess); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrReload, err)
	}
	r := &Reloaded{RestartNeeded: restartNeeded(old, cfg)}
	r.Checks = !sameJSON(old.Hooks, cfg.Hooks) || !sameJSON(old.Interceptors, cfg.Interceptors)
	checks := h.checks.Load()
	if r.Checks || !sameJSON(old.Plugins, cfg.Plugins) {
		// (An interceptor plugin's entry is made anew with its new runtime.)
		if checks, err = h.buildChecks(cfg); err != nil {
			return nil, fmt.Errorf("%w: hooks and interceptors: %w", ErrReload, err)
		}
	}
	applied := restartSettings(cfg, old) // the running values of what needs a restart

	rc := conn.Reconfig{Servers: cfg.Servers, Drain: drain}
	var oldRT *plugins.Runtime
	if r.Plugins = !sameJSON(old.Plugins, cfg.Plugins); r.Plugins {
		rt, plug, err := h.newPlugins(cfg)
		if err != nil {
			return nil, fmt.Errorf("%w: plugins: %w", ErrReload, err)
		}
		rc.Plugins = plug
		oldRT = h.plugins.Swap(rt)
	}
	r.Permissions = !sameJSON(old.Permissions, cfg.Permissions) || old.DefaultMode != cfg.DefaultMode
	r.Endpoints = !sameEndpoints(old.Endpoints, cfg.Endpoints)
	h.policy.Store(policy)
	h.checks.Store(checks)
	h.cfg.Store(applied)
	a := h.conns.Apply(rc)
	h.conns.SetRoots(applied.Settings.Roots) // (list_changed to the servers when they changed)
	r.Added, r.Removed, r.Replaced, r.Updated, r.Drained = a.Added, a.Removed, a.Replaced, a.Updated, a.Done
	if oldRT != nil {
		h.reloads.wg.Add(1)
		go func() {
			defer h.reloads.wg.Done()
			<-a.Done // the connections that used it are closed
			if err := oldRT.Close(); err != nil {
				h.log.Warn("closing the replaced plugin runtime", "error", err)
			}
		}()
	}
	if r.Permissions {
		// What a gateway lists (the tool-search index, users' views) may
		// depend on the rules.
		h.reg.NotifyChanged()
	}
	h.log.Info("configuration reloaded", "added", r.Added, "removed", r.Removed, "replaced", r.Replaced,
		"updated", r.Updated, "permissions", r.Permissions, "plugins", r.Plugins, "endpoints", r.Endpoints, "checks", r.Checks, "restart_needed", r.RestartNeeded)
	return r, nil
}

// newPlugins returns the plugin runtime of cfg (nil without plugins) and
// the parts connections use. Interface values stay nil (not a typed nil)
// without a runtime.
func (h *Host) newPlugins(cfg *config.Config) (*plugins.Runtime, *conn.Plugins, error) {
	if len(cfg.Plugins) == 0 {
		return nil, &conn.Plugins{}, nil
	}
	rt, err := plugins.New(cfg, &plugins.Options{Logger: h.log, Telemetry: h.tel,
		OnRestart: func(name string) { h.tel.RecordPluginRestart(context.Background(), name) }})
	if err != nil {
		return nil, nil, err
	}
	return rt, &conn.Plugins{Transports: rt, Headers: rt, Auth: rt}, nil
}

// restartNeeded names what differs between old and cfg but applies only to
// a new process.
func restartNeeded(old, cfg *config.Config) []string {
	out := cfg.Settings.RestartNeeded(&old.Settings)
	if !old.Gateway.Equal(cfg.Gateway) {
		out = append(out, "gateway")
	}
	if !old.Audit.Equal(cfg.Audit) {
		out = append(out, "audit")
	}
	if !old.Telemetry.Equal(cfg.Telemetry) {
		out = append(out, "telemetry")
	}
	if !old.State.Equal(cfg.State) {
		out = append(out, "state")
	}
	return out
}

// restartSettings returns cfg with the settings and blocks that apply only
// to a new process as old has them (the values in effect).
func restartSettings(cfg, old *config.Config) *config.Config {
	c := *cfg
	c.Settings = cfg.Settings.KeepRestartOnly(&old.Settings)
	c.Gateway, c.Audit, c.Telemetry, c.State = old.Gateway, old.Audit, old.Telemetry, old.State
	return &c
}

// sameEndpoints reports whether two configurations' endpoints serve the
// same (where they are written aside).
func sameEndpoints(a, b []*config.Endpoint) bool {
	return slices.EqualFunc(a, b, func(x, y *config.Endpoint) bool { return x.Equal(y) })
}

func sameJSON(a, b any) bool {
	ja, err1 := json.Marshal(a)
	jb, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && bytes.Equal(ja, jb)
}
