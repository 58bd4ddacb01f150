package host_test

import (
	"context"
	"errors"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/permissions"
)

func toolNames(t *testing.T, h *host.Host) []string {
	t.Helper()
	tools, problems := h.Tools(context.Background())
	if len(problems) > 0 {
		t.Fatalf("problems: %v", problems)
	}
	var names []string
	for _, tl := range tools {
		names = append(names, tl.Name)
	}
	return names
}

func TestReloadAppliesTheDifference(t *testing.T) {
	t.Parallel()
	h := newHost(t, demo("one"), demo("two"))
	var notified atomic.Int32
	h.Registry().OnChange(func(string) { notified.Add(1) })
	ctx := context.Background()
	if names := toolNames(t, h); !slices.Contains(names, "mcp__two__echo") {
		t.Fatalf("tools %v", names)
	}
	if d := h.Decide("mcp__one__echo"); d.Behavior != permissions.Allow {
		t.Fatalf("before: %v", d)
	}

	next := &config.Config{Servers: []*config.Server{demo("one"), demo("three")}, DefaultMode: "allow_all",
		Permissions: []config.PermissionRule{{Pattern: "mcp__one__echo", Behavior: permissions.Deny}}}
	r, err := h.Reload(ctx, next, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(r.Added, []string{"three"}) || !slices.Equal(r.Removed, []string{"two"}) || len(r.Replaced) != 0 || !r.Permissions || r.Plugins {
		t.Fatalf("reloaded %+v", r)
	}
	<-r.Drained
	names := toolNames(t, h)
	if slices.Contains(names, "mcp__two__echo") || !slices.Contains(names, "mcp__three__echo") {
		t.Errorf("tools after reload %v", names)
	}
	if d := h.Decide("mcp__one__echo"); d.Behavior != permissions.Deny {
		t.Errorf("the new rule does not apply: %v", d)
	}
	if _, err := h.CallTool(ctx, "mcp__one__echo", map[string]any{"message": "x"}, nil); err == nil {
		t.Error("a call the new rules deny was made")
	}
	if _, err := h.CallTool(ctx, "mcp__two__echo", map[string]any{"message": "x"}, nil); err == nil {
		t.Error("a call to a removed server was made")
	}
	if notified.Load() == 0 {
		t.Error("the registry's listeners were not told")
	}
	if h.Config() != next && h.Config().Servers[1].Name != "three" {
		t.Errorf("Config() is not the reloaded configuration")
	}
}

func TestReloadRefusesBadConfigurations(t *testing.T) {
	t.Parallel()
	h := newHost(t, demo("one"))
	tests := []struct {
		name string
		cfg  *config.Config
	}{
		{"no configuration", nil},
		{"invalid permission rule", &config.Config{Servers: []*config.Server{demo("two")},
			Permissions: []config.PermissionRule{{Pattern: "mcp__x__y(", Behavior: permissions.Deny}}}},
		{"in-process server without implementation", &config.Config{Servers: []*config.Server{config.InProcessServer("mem")}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := h.Reload(context.Background(), tt.cfg, time.Second)
			if !errors.Is(err, host.ErrReload) {
				t.Fatalf("Reload = %v, want ErrReload", err)
			}
			if names := toolNames(t, h); !slices.Contains(names, "mcp__one__echo") {
				t.Errorf("the configuration in effect changed: %v", names)
			}
		})
	}
}

func TestReloadNamesWhatNeedsARestart(t *testing.T) {
	t.Parallel()
	h := newHost(t, demo("one"))
	next := &config.Config{Servers: []*config.Server{demo("one")}, DefaultMode: "allow_all",
		Settings: config.Settings{Naming: config.NamingBare, DrainTimeout: 3 * time.Second}}
	r, err := h.Reload(context.Background(), next, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(r.RestartNeeded, "naming") || slices.Contains(r.RestartNeeded, "drain_timeout") {
		t.Errorf("restart needed for %v", r.RestartNeeded)
	}
	if r.Changed() {
		t.Errorf("nothing was to be applied: %+v", r)
	}
	if s := h.Config().Settings; s.Naming != "" || s.DrainTimeout != 3*time.Second {
		t.Errorf("settings in effect %+v: naming must stay as it was, drain_timeout apply", s)
	}
}
