// Package sdk will be mcphost's public plugin SDK: the gRPC protocols for
// transport, auth and headers-helper plugins, the Go interfaces a plugin
// implements, and a Serve helper so that a plugin's main is a few lines.
//
// It is what a third party imports to write a plugin, and it never imports the
// host. It is empty until the plugin milestone; see the project README.
package sdk
