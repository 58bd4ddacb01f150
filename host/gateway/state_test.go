package gateway

import (
	"context"
	"testing"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/inbound"
)

// A request state is bound to its kind, tool, arguments and the upstream
// state it carries: any change is refused.
func TestRequestStateBinding(t *testing.T) {
	g := &Gateway{askKeys: [][]byte{[]byte("0123456789abcdef0123456789abcdef")}}
	st := g.sealState(context.Background(), stateUpstream, "mcp__a__t", []byte(`{"x":1}`), []byte("upstream-state"))
	if up, ok := g.openState(context.Background(), st, stateUpstream, "mcp__a__t", []byte(`{"x":1}`)); !ok || string(up) != "upstream-state" {
		t.Fatalf("openState = %q, %v", up, ok)
	}
	for _, tc := range []struct {
		name string
		kind stateKind
		tool string
		args string
	}{
		{"other kind", stateAsk, "mcp__a__t", `{"x":1}`},
		{"other tool", stateUpstream, "mcp__a__u", `{"x":1}`},
		{"other args", stateUpstream, "mcp__a__t", `{"x":2}`},
	} {
		if _, ok := g.openState(context.Background(), st, tc.kind, tc.tool, []byte(tc.args)); ok {
			t.Errorf("%s: accepted", tc.name)
		}
	}
	// A forged upstream state (the client changes what the gateway would
	// forward upstream) is refused.
	b := []byte(st)
	b[len(b)-2] ^= 1
	if _, ok := g.openState(context.Background(), string(b), stateUpstream, "mcp__a__t", []byte(`{"x":1}`)); ok {
		t.Error("a tampered state was accepted")
	}
}

// A request state issued to one principal is refused from another, and
// from a request without one (inbound OAuth: B14).
func TestRequestStateBoundToPrincipal(t *testing.T) {
	g := &Gateway{askKeys: [][]byte{[]byte("0123456789abcdef0123456789abcdef")}}
	alice := host.WithCaller(context.Background(), &inbound.Principal{Issuer: "https://idp", Subject: "alice"}, "")
	bob := host.WithCaller(context.Background(), &inbound.Principal{Issuer: "https://idp", Subject: "bob"}, "")
	other := host.WithCaller(context.Background(), &inbound.Principal{Issuer: "https://other", Subject: "alice"}, "")
	for _, kind := range []stateKind{stateAsk, stateUpstream, stateHeld, stateLogin} {
		st := g.sealState(alice, kind, "mcp__a__t", []byte(`{}`), []byte("u"))
		if _, ok := g.openState(alice, st, kind, "mcp__a__t", []byte(`{}`)); !ok {
			t.Fatalf("kind %d: alice's own state refused", kind)
		}
		for name, ctx := range map[string]context.Context{"bob": bob, "another issuer's alice": other, "no principal": context.Background()} {
			if _, ok := g.openState(ctx, st, kind, "mcp__a__t", []byte(`{}`)); ok {
				t.Errorf("kind %d: alice's state accepted from %s", kind, name)
			}
		}
	}
}

// A request state issued before a key rotation (MCPHOST_SESSION_KEYS with
// a new key first) is still accepted; one signed with a key that was
// dropped, or another gateway's, is not.
func TestRequestStateKeyRotation(t *testing.T) {
	oldKey, newKey := []byte("0123456789abcdef0123456789abcdef"), []byte("fedcba9876543210fedcba9876543210")
	before := &Gateway{askKeys: [][]byte{oldKey}}
	rotated := &Gateway{askKeys: [][]byte{newKey, oldKey}}
	after := &Gateway{askKeys: [][]byte{newKey}}
	ctx := context.Background()
	st := before.sealState(ctx, stateAsk, "t", nil, []byte("u"))
	for _, tc := range []struct {
		name string
		g    *Gateway
		want bool
	}{{"same key", before, true}, {"rotated", rotated, true}, {"old key dropped", after, false}} {
		if _, ok := tc.g.openState(ctx, st, stateAsk, "t", nil); ok != tc.want {
			t.Errorf("%s: accepted = %v, want %v", tc.name, ok, tc.want)
		}
	}
	if _, ok := before.openState(ctx, rotated.sealState(ctx, stateAsk, "t", nil, []byte("u")), stateAsk, "t", nil); ok {
		t.Error("a state signed with the new key was accepted by a gateway without it")
	}
}
