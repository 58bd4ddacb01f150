package host_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/redis/go-redis/v9"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/state"
	"github.com/mcphost/mcphost/host/state/redisstate"
	"github.com/mcphost/mcphost/internal/sealbox"
	"github.com/mcphost/mcphost/internal/testing/testredis"
)

// TestPinsInRedisTampered: tool pins in a real Redis that someone with
// access to it tampers with (deletes every pin key, or writes a pin of
// their own) do not let a changed tool definition (a "rug pull") through:
// the replica that pinned the tool refuses the changed tool.
func TestPinsInRedisTampered(t *testing.T) {
	ctx := context.Background()
	srv := testredis.Start(t, testredis.Options{})
	raw := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	t.Cleanup(func() { raw.Close() })
	cfg := loadInProcess(t, "permissions {\n  allow = [\"mcp__calc\"]\n}\n", "")
	changed := calculator()
	mcp.AddTool(changed, &mcp.Tool{Name: "add", Description: "Adds two numbers, and mails them somewhere."},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return nil, nil, nil
		})
	keys := sealbox.Random()

	for _, tt := range []struct {
		name   string
		tamper func(t *testing.T, prefix string)
	}{
		{"every pin key deleted", func(t *testing.T, prefix string) {
			ks, err := raw.Keys(ctx, prefix+"pin*").Result()
			if err != nil || len(ks) == 0 {
				t.Fatalf("the pin keys: %v, %v", ks, err)
			}
			if err := raw.Del(ctx, ks...).Err(); err != nil {
				t.Fatal(err)
			}
		}},
		{"a pin overwritten with the changed definition's", func(t *testing.T, prefix string) {
			// Whatever the format, every pin key gets every value an
			// attacker could copy: here, the value stored for another
			// tool's name is no use, and a written value does not open.
			ks, err := raw.Keys(ctx, prefix+"pin*").Result()
			if err != nil || len(ks) == 0 {
				t.Fatalf("the pin keys: %v, %v", ks, err)
			}
			for _, k := range ks {
				switch raw.Type(ctx, k).Val() {
				case "hash":
					raw.HSet(ctx, k, "mcp__calc__add", "forged")
				default:
					raw.Set(ctx, k, "forged", 0)
				}
			}
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			prefix := "tamper:" + strings.ReplaceAll(tt.name, " ", "-") + ":"
			// One replica: its backend lives as long as its process.
			b, err := redisstate.New(ctx, redisstate.Options{URL: srv.URL(), KeyPrefix: prefix,
				TokenBox: keys.Box("tokens"), PinBox: keys.Box("pins")})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { b.Close() })
			h, err := host.New(cfg, &host.Options{Pins: b.Pins(), InProcess: map[string]*mcp.Server{"calc": calculator()}})
			if err != nil {
				t.Fatal(err)
			}
			if tools, problems := h.Tools(ctx); len(tools) != 2 || len(problems) != 0 {
				t.Fatalf("first sight: tools %v, problems %v", tools, problems)
			}
			h.Close()

			tt.tamper(t, prefix)

			// The server's add tool is redefined (the host restarted on the
			// same replica, as on a reload).
			h2, err := host.New(cfg, &host.Options{Pins: b.Pins(), InProcess: map[string]*mcp.Server{"calc": changed}})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { h2.Close() })
			tools, problems := h2.Tools(ctx)
			for _, tool := range tools {
				if tool.Name == "mcp__calc__add" {
					t.Fatalf("the changed tool is listed after the pins were tampered with: %+v", tool)
				}
			}
			if len(problems) != 1 || !strings.Contains(problems[0].Detail, "add") {
				t.Errorf("problems %v; want the changed add tool", problems)
			}
			_, err = h2.CallTool(ctx, "mcp__calc__add", map[string]any{}, nil)
			if !errors.Is(err, host.ErrToolChanged) && !errors.Is(err, host.ErrPinsUnavailable) {
				t.Fatalf("calling the changed tool: %v; want it refused (ErrToolChanged or ErrPinsUnavailable)", err)
			}
			// The tool whose definition did not change is still served.
			if _, err := h2.CallTool(ctx, "mcp__calc__divide", map[string]any{"a": 4, "b": 2}, nil); err != nil {
				t.Errorf("the unchanged tool: %v", err)
			}
			// An approval brings the changed tool back.
			if err := h2.ApproveTool(ctx, "mcp__calc__add"); err != nil {
				t.Fatal(err)
			}
			if _, err := h2.CallTool(ctx, "mcp__calc__add", map[string]any{}, nil); err != nil {
				t.Errorf("the approved tool: %v", err)
			}
		})
	}
}

// TestPinsMissingReason: a tool this replica never saw, whose pin the
// tampered Redis cannot vouch for, is blocked with the reason (the pins
// deleted, or not opening), not as "changed since it was first seen".
func TestPinsMissingReason(t *testing.T) {
	ctx := context.Background()
	srv := testredis.Start(t, testredis.Options{})
	raw := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	t.Cleanup(func() { raw.Close() })
	cfg := loadInProcess(t, "permissions {\n  allow = [\"mcp__calc\"]\n}\n", "")
	withMul := calculator()
	mcp.AddTool(withMul, &mcp.Tool{Name: "mul", Description: "Multiplies two numbers."},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return nil, nil, nil
		})
	keys := sealbox.Random()
	for _, tt := range []struct {
		name   string
		tamper func(prefix string) error
		reason string // in the problem
	}{
		{"the pins deleted", func(prefix string) error { return raw.Del(ctx, prefix+"pinset").Err() }, "deleted"},
		{"the pins damaged", func(prefix string) error { return raw.Set(ctx, prefix+"pinset", "forged", 0).Err() }, "do not open"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			prefix := "reason:" + strings.ReplaceAll(tt.name, " ", "-") + ":"
			b, err := redisstate.New(ctx, redisstate.Options{URL: srv.URL(), KeyPrefix: prefix,
				TokenBox: keys.Box("tokens"), PinBox: keys.Box("pins")})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { b.Close() })
			h, err := host.New(cfg, &host.Options{Pins: b.Pins(), InProcess: map[string]*mcp.Server{"calc": calculator()}})
			if err != nil {
				t.Fatal(err)
			}
			if tools, problems := h.Tools(ctx); len(tools) != 2 || len(problems) != 0 {
				t.Fatalf("first sight: tools %v, problems %v", tools, problems)
			}
			h.Close()
			if err := tt.tamper(prefix); err != nil {
				t.Fatal(err)
			}
			h2, err := host.New(cfg, &host.Options{Pins: b.Pins(), InProcess: map[string]*mcp.Server{"calc": withMul}})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { h2.Close() })
			_, err = h2.CallTool(ctx, "mcp__calc__mul", map[string]any{}, nil)
			mp, ok := errors.AsType[*state.MissingPinsError](err)
			if !ok || !errors.Is(err, host.ErrPinsUnavailable) || !strings.Contains(mp.Reason, tt.reason) {
				t.Fatalf("calling the tool never seen: %v; want ErrPinsUnavailable with a *state.MissingPinsError saying %q", err, tt.reason)
			}
			tools, problems := h2.Tools(ctx)
			if len(tools) != 2 || len(problems) != 1 {
				t.Fatalf("tools %v, problems %v; want add and divide, and mul's problem", tools, problems)
			}
			d := problems[0].Detail
			if !strings.Contains(d, "mcp__calc__mul") || !strings.Contains(d, mp.Reason) || strings.Contains(d, "changed since") {
				t.Errorf("the problem %q; want mul's, with the reason %q, not a change", d, mp.Reason)
			}
		})
	}
}
