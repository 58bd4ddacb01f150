package stdio

import (
	"context"
	"io"

	"github.com/mcphost/mcphost/host/gateway"
)

// ServeWithHooks is Serve with the functions it calls between the go-sdk's
// Connect and the session's use (connected), and that a request calls when
// it waits for that use (waiting).
func ServeWithHooks(ctx context.Context, g *gateway.Gateway, r io.ReadCloser, w io.WriteCloser, connected, waiting func()) error {
	return serveWith(ctx, g, r, w, hooks{connected: connected, waiting: waiting})
}

// ServeCountingCarries is Serve calling carried each time a relayed call's
// task parameter is put in its _meta for the go-sdk path (the request
// re-encoded).
func ServeCountingCarries(ctx context.Context, g *gateway.Gateway, r io.ReadCloser, w io.WriteCloser, carried func()) error {
	return serveWith(ctx, g, r, w, hooks{carried: carried})
}
