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
