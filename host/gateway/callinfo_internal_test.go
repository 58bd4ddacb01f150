package gateway

import (
	"context"
	"testing"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/audit"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/intercept"
)

// TestInCallInfo: a relayed call's call info costs no allocation with
// checks configured (it is held in the call: host.CallContext), and tells
// CallInfoOf the session's reference, the endpoint and the front.
func TestInCallInfo(t *testing.T) {
	h, err := host.New(&config.Config{DefaultMode: "allow_all"}, &host.Options{OutputDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	e, err := intercept.InterceptorEntry(&config.Interceptor{Name: "guard", Builtin: "test", Events: []string{intercept.EventToolsCall}, Phases: []string{"request"}}, intercept.KindBuiltin, nil)
	if err != nil {
		t.Fatal(err)
	}
	h.Serving().SetChecksForTesting(intercept.NewChain([]*intercept.Entry{e}))
	g := &Gateway{h: h, endpoint: "dev"}
	c := &relayCall{}
	ctx := context.Background()
	var got context.Context
	if n := testing.AllocsPerRun(100, func() { got = g.inCallInfo(&c.info, ctx, "session-1", host.FrontHTTP) }); n != 0 {
		t.Errorf("%v allocations, want none", n)
	}
	info, ok := host.CallInfoOf(got)
	if want := (host.CallInfo{Session: audit.SessionRef("session-1"), Endpoint: "dev", Front: host.FrontHTTP}); !ok || info != want {
		t.Errorf("call info %+v, %v; want %+v", info, ok, want)
	}
	h.Serving().SetChecksForTesting(nil)
	if got := g.inCallInfo(&c.info, ctx, "session-1", host.FrontHTTP); got != ctx {
		t.Error("without checks, the context is not the caller's")
	}
}
