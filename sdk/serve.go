package sdk

import (
	"errors"
	"fmt"
	"os"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
)

// ServeOpts configures Serve. Info is REQUIRED, and at least one of Transport,
// Auth, Headers and Interceptor.
type ServeOpts struct {
	Info      Info
	Transport Transport
	Auth      Auth
	Headers   Headers
	// Interceptor may also implement InterceptScoper.
	Interceptor Interceptor
	// Logger is the plugin's logger. OPTIONAL: Logger() is used. Plugins must
	// log through it (JSON on stderr, which the host reads) and never write to
	// stdout, which carries the handshake.
	Logger hclog.Logger
	// Test, if set, serves in go-plugin's test/reattach mode (for running a
	// plugin under a debugger); see plugin.ServeTestConfig.
	Test *plugin.ServeTestConfig
}

// Logger returns a logger that writes JSON lines to stderr, where the host
// picks them up and routes them into its own log under the plugin's name.
func Logger() hclog.Logger {
	return hclog.New(&hclog.LoggerOptions{Output: os.Stderr, JSONFormat: true, Level: hclog.Trace})
}

// ErrInvalidOpts is wrapped by the error Serve returns for ServeOpts that
// cannot be served (a missing name, or an Info that does not match the
// implementations given).
var ErrInvalidOpts = errors.New("invalid ServeOpts")

// Serve runs the plugin until the host tells it to stop, then returns nil. It
// hides the handshake, the gRPC server and logging.
//
// Serve checks opts first and, if they are invalid, logs why and returns an
// error wrapping ErrInvalidOpts without serving; the plugin's main decides
// what to do with it (usually exit with status 1). Once opts are valid, Serve
// hands over to go-plugin's plugin.Serve, which keeps its own behaviour: run
// other than by a host (without the handshake cookie), it prints a notice on
// stderr and exits the process with status 1.
func Serve(opts *ServeOpts) error {
	var logger hclog.Logger
	if opts != nil {
		logger = opts.Logger
	}
	if logger == nil {
		logger = Logger()
	}
	if err := validate(opts); err != nil {
		// Logged too (to stderr, which the host shows): a main that
		// ignores the error still says why the plugin did not start.
		logger.Error("invalid plugin", "error", err)
		return err
	}
	plugin.Serve(&plugin.ServeConfig{
		HandshakeConfig:  Handshake,
		VersionedPlugins: map[int]plugin.PluginSet{ProtocolVersion: pluginSet(opts)},
		GRPCServer:       plugin.DefaultGRPCServer,
		Logger:           logger,
		Test:             opts.Test,
	})
	return nil
}

// validate reports why opts cannot be served, wrapping ErrInvalidOpts.
func validate(opts *ServeOpts) error {
	var why string
	switch {
	case opts == nil || opts.Info.Name == "":
		why = "ServeOpts.Info.Name is required"
	case opts.Transport == nil && opts.Auth == nil && opts.Headers == nil && opts.Interceptor == nil:
		why = "a plugin must serve a Transport, an Auth, a Headers or an Interceptor implementation"
	case (opts.Transport != nil) != (len(opts.Info.Transports) > 0):
		why = "Info.Transports must name the transports exactly when a Transport is served"
	case (opts.Auth != nil) != (len(opts.Info.AuthSchemes) > 0):
		why = "Info.AuthSchemes must name the schemes exactly when an Auth is served"
	case (opts.Headers != nil) != (opts.Info.Headers != nil):
		why = "Info.Headers must be set exactly when a Headers is served"
	case (opts.Interceptor != nil) != (opts.Info.Interceptor != nil):
		why = "Info.Interceptor must be set exactly when an Interceptor is served"
	default:
		return nil
	}
	return fmt.Errorf("%w: %s", ErrInvalidOpts, why)
}

// pluginSet is the plugin side's set for ServeOpts.
func pluginSet(opts *ServeOpts) plugin.PluginSet {
	info := opts.Info
	set := plugin.PluginSet{KindInfo: &infoPlugin{info: &info}}
	if opts.Transport != nil {
		set[KindTransport] = &transportPlugin{impl: opts.Transport}
	}
	if opts.Auth != nil {
		set[KindAuth] = &authPlugin{impl: opts.Auth}
	}
	if opts.Headers != nil {
		set[KindHeaders] = &headersPlugin{impl: opts.Headers}
	}
	if opts.Interceptor != nil {
		set[KindInterceptor] = &interceptorPlugin{impl: opts.Interceptor}
	}
	return set
}

// ClientPlugins is the host side's VersionedPlugins: dispensing KindInfo
// gives an InfoClient, KindTransport a Transport, KindAuth an AuthClient,
// KindHeaders a Headers and KindInterceptor an InterceptorClient.
func ClientPlugins() map[int]plugin.PluginSet {
	return map[int]plugin.PluginSet{ProtocolVersion: {
		KindInfo:        &infoPlugin{},
		KindTransport:   &transportPlugin{},
		KindAuth:        &authPlugin{},
		KindHeaders:     &headersPlugin{},
		KindInterceptor: &interceptorPlugin{},
	}}
}

// PluginSetForTest returns the plugin side's set for opts, for in-process
// tests (see package sdktest). Plugins use Serve.
func PluginSetForTest(opts *ServeOpts) plugin.PluginSet { return pluginSet(opts) }
