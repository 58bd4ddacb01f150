package sdk

import (
	"errors"
	"os"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
)

// ServeOpts configures Serve. Info is REQUIRED, and at least one of Transport,
// Auth and Headers.
type ServeOpts struct {
	Info      Info
	Transport Transport
	Auth      Auth
	Headers   Headers
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

// Serve runs the plugin until the host tells it to stop. It hides the
// handshake, the gRPC server and logging.
func Serve(opts *ServeOpts) {
	if err := validate(opts); err != nil {
		Logger().Error("invalid plugin", "error", err)
		os.Exit(1)
	}
	logger := opts.Logger
	if logger == nil {
		logger = Logger()
	}
	plugin.Serve(&plugin.ServeConfig{
		HandshakeConfig:  Handshake,
		VersionedPlugins: map[int]plugin.PluginSet{ProtocolVersion: pluginSet(opts)},
		GRPCServer:       plugin.DefaultGRPCServer,
		Logger:           logger,
		Test:             opts.Test,
	})
}

func validate(opts *ServeOpts) error {
	if opts == nil || opts.Info.Name == "" {
		return errors.New("ServeOpts.Info.Name is required")
	}
	if opts.Transport == nil && opts.Auth == nil && opts.Headers == nil {
		return errors.New("a plugin must serve a Transport, an Auth or a Headers implementation")
	}
	if (opts.Transport != nil) != (len(opts.Info.Transports) > 0) {
		return errors.New("Info.Transports must name the transports exactly when a Transport is served")
	}
	if (opts.Auth != nil) != (len(opts.Info.AuthSchemes) > 0) {
		return errors.New("Info.AuthSchemes must name the schemes exactly when an Auth is served")
	}
	if (opts.Headers != nil) != (opts.Info.Headers != nil) {
		return errors.New("Info.Headers must be set exactly when a Headers is served")
	}
	return nil
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
	return set
}

// ClientPlugins is the host side's VersionedPlugins: dispensing KindInfo
// gives an InfoClient, KindTransport a Transport, KindAuth an AuthClient and
// KindHeaders a Headers.
func ClientPlugins() map[int]plugin.PluginSet {
	return map[int]plugin.PluginSet{ProtocolVersion: {
		KindInfo:      &infoPlugin{},
		KindTransport: &transportPlugin{},
		KindAuth:      &authPlugin{},
		KindHeaders:   &headersPlugin{},
	}}
}

// PluginSetForTest returns the plugin side's set for opts, for in-process
// tests (see package sdktest). Plugins use Serve.
func PluginSetForTest(opts *ServeOpts) plugin.PluginSet { return pluginSet(opts) }
