package serve

// SetStdioConnected sets the function ServeStdio calls between the go-sdk's
// Connect and the session's use. Set it before serving.
func SetStdioConnected(g *Gateway, f func()) { g.stdioConnected = f }
