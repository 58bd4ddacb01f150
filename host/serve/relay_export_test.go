package serve

// SetStdioHooks sets the functions ServeStdio calls between the go-sdk's
// Connect and the session's use (connected), and that a request calls when
// it waits for that use (waiting). Set them before serving.
func SetStdioHooks(g *Gateway, connected, waiting func()) {
	g.stdioConnected, g.stdioWaiting = connected, waiting
}
