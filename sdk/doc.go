// Package sdk is mcphost's public plugin SDK: what a third party imports to
// write a transport, auth, headers-helper or interceptor plugin. It never
// imports the host.
//
// A plugin implements one or more of the interfaces Transport, Auth, Headers
// and Interceptor and calls Serve from main:
//
//	func main() {
//		err := sdk.Serve(&sdk.ServeOpts{
//			Info:      sdk.Info{Name: "transport-ws", Version: "1.0.0", Transports: []sdk.Component{{Name: "ws"}}},
//			Transport: wsTransport{},
//		})
//		if err != nil { // the options are invalid (ErrInvalidOpts)
//			sdk.Logger().Error("cannot serve", "error", err)
//			os.Exit(1)
//		}
//	}
//
// An Auth plugin may also implement Interactive (a browser login the host
// drives: it opens the URL and passes the 127.0.0.1 callback back) and
// Forgetter (logout), and may return saved state in TokenResponse that the
// host keeps in its token store across restarts. Package sdk/oauthkit holds
// OAuth helpers for auth plugins: an SSRF-guarded HTTP client, MCP
// discovery and token requests.
//
// An Interceptor sees the request and the response of the operations the
// user's interceptor blocks select (tools/call, prompts/get,
// resources/read, the list methods) and passes, denies or mutates them; it
// may implement InterceptScoper to say which phases a configuration needs.
//
// Plugins run as separate processes started by the host through
// hashicorp/go-plugin over gRPC with mutual TLS. The protocol (package
// mcphost.plugin.v1, see sdk/proto) carries MCP's JSON-RPC messages as opaque
// bytes, so a plugin may be written in any language that speaks gRPC; this
// package is the Go binding. The host uses the same package's client side
// (ClientPlugins) and never touches protobuf types.
package sdk
