// Package sdktest runs a plugin implementation through the real gRPC shims in
// one process, so that a plugin author can test it as the host will see it.
//
//	tr := sdktest.Transport(t, &sdk.ServeOpts{Info: info, Transport: myTransport{}})
//	conn, err := tr.Open(ctx, &sdk.OpenRequest{URL: "ws://127.0.0.1:1234/mcp"})
package sdktest

import (
	"testing"

	"github.com/hashicorp/go-plugin"

	"github.com/mcphost/mcphost/sdk"
)

// Dispense serves opts over an in-process gRPC connection and returns the
// host-side client of the given kind (sdk.KindInfo, KindTransport, …).
func Dispense(t testing.TB, opts *sdk.ServeOpts, kind string) any {
	t.Helper()
	client, _ := plugin.TestPluginGRPCConn(t, false, sdk.PluginSetForTest(opts))
	// Closing the client shuts the server down (go-plugin's controller);
	// stopping it here as well would race with that.
	t.Cleanup(func() { client.Close() })
	raw, err := client.Dispense(kind)
	if err != nil {
		t.Fatalf("dispensing %s: %v", kind, err)
	}
	return raw
}

// Transport returns the host's view of opts.Transport.
func Transport(t testing.TB, opts *sdk.ServeOpts) sdk.Transport {
	return Dispense(t, opts, sdk.KindTransport).(sdk.Transport)
}

// Auth returns the host's view of opts.Auth.
func Auth(t testing.TB, opts *sdk.ServeOpts) sdk.AuthClient {
	return Dispense(t, opts, sdk.KindAuth).(sdk.AuthClient)
}

// Headers returns the host's view of opts.Headers.
func Headers(t testing.TB, opts *sdk.ServeOpts) sdk.Headers {
	return Dispense(t, opts, sdk.KindHeaders).(sdk.Headers)
}

// Interceptor returns the host's view of opts.Interceptor.
func Interceptor(t testing.TB, opts *sdk.ServeOpts) sdk.InterceptorClient {
	return Dispense(t, opts, sdk.KindInterceptor).(sdk.InterceptorClient)
}

// Info returns the host's view of the plugin's Info.
func Info(t testing.TB, opts *sdk.ServeOpts) sdk.InfoClient {
	return Dispense(t, opts, sdk.KindInfo).(sdk.InfoClient)
}
