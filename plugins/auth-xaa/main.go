// Command auth-xaa is the mcphost plugin for Enterprise-Managed
// Authorization (SEP-990, Cross-App Access): auth scheme "xaa". See package
// xaa.
package main

import (
	"github.com/mcphost/mcphost/plugins/auth-xaa/xaa"
	"github.com/mcphost/mcphost/sdk"
)

func main() {
	logger := sdk.Logger()
	p := xaa.New(logger)
	defer p.Close()
	sdk.Serve(&sdk.ServeOpts{
		Info:   sdk.Info{Name: "auth-xaa", Version: "0.1.0", AuthSchemes: []sdk.Component{xaa.Component}},
		Auth:   p,
		Logger: logger,
	})
}
