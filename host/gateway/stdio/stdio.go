// Package stdio is the gateway's stdio front: `mcphost serve` without
// --http serves its one client on the process's stdin and stdout. The
// go-sdk server of the core (package gateway) runs on the connection; a
// tools/call that qualifies takes the relay path instead (relay.go):
// forwarded upstream raw, through the lifecycle both fronts share
// (gateway.Relay), and answered with the upstream's response under the
// client's id. ReadClient reads the client's first message before the
// upstream sessions are opened, so that they are in the client's protocol
// era (era.go).
package stdio

import (
	"context"
	"io"

	"github.com/mcphost/mcphost/host/gateway"
)

// Serve serves g to one client over r/w until the client disconnects or
// ctx is done. When ctx is done it drains first (see gateway.Gateway.Drain):
// requests in flight are answered, or cancelled with an error at the drain
// deadline.
func Serve(ctx context.Context, g *gateway.Gateway, r io.ReadCloser, w io.WriteCloser) error {
	return serveWith(ctx, g, r, w, hooks{})
}

// hooks let tests observe the front (export_test.go); both are nil in
// production.
type hooks struct {
	// connected is called between the go-sdk's Connect and the session's
	// use; waiting when a request waits for that use.
	connected func()
	waiting   func()
	// carried is called when a relayed call's task parameter is put in
	// its _meta for the go-sdk path (relayConn.carryTask).
	carried func()
}

func serveWith(ctx context.Context, g *gateway.Gateway, r io.ReadCloser, w io.WriteCloser, hk hooks) error {
	// The session outlives ctx by the drain: its requests must not be
	// cancelled by the signal that starts the shutdown.
	sctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	defer cancel()
	rc := newRelayConn(g, r, w, hk)
	defer g.AddNoteWriter(rc)() // (a task's status notifications: tasks.go)
	ss, err := g.Server().Connect(sctx, rc, nil)
	if hk.connected != nil {
		hk.connected()
	}
	rc.setSession(ss)
	if err != nil {
		return err
	}
	// The one client, once initialized, answers servers' roots/list
	// outside any call (Gateway.SetSoleClient); not once it has gone.
	defer g.SetSoleClient(nil)
	done := make(chan error, 1)
	go func() { done <- ss.Wait() }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		g.Drain(context.Background())
		rc.waitAnswered(gateway.AbortGrace)
		ss.Close()
		<-done
		return nil
	}
}
