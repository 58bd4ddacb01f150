package serve

import "testing"

// A request state is bound to its kind, tool, arguments and the upstream
// state it carries: any change is refused.
func TestRequestStateBinding(t *testing.T) {
	g := &Gateway{askSecret: []byte("0123456789abcdef0123456789abcdef")}
	st := g.sealState(stateUpstream, "mcp__a__t", []byte(`{"x":1}`), []byte("upstream-state"))
	if up, ok := g.openState(st, stateUpstream, "mcp__a__t", []byte(`{"x":1}`)); !ok || string(up) != "upstream-state" {
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
		if _, ok := g.openState(st, tc.kind, tc.tool, []byte(tc.args)); ok {
			t.Errorf("%s: accepted", tc.name)
		}
	}
	// A forged upstream state (the client changes what the gateway would
	// forward upstream) is refused.
	b := []byte(st)
	b[len(b)-2] ^= 1
	if _, ok := g.openState(string(b), stateUpstream, "mcp__a__t", []byte(`{"x":1}`)); ok {
		t.Error("a tampered state was accepted")
	}
}
