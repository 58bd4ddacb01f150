// Command auth-xaa is the mcphost plugin for Enterprise-Managed
// Authorization (SEP-990, Cross-App Access): auth scheme "xaa". See package
// xaa.
package main

import (
	"os"

	"github.com/hashicorp/go-hclog"
	"github.com/mcphost/mcphost/plugins/auth-xaa/xaa"
	"github.com/mcphost/mcphost/sdk"
)

func main() {
	logger := sdk.Logger()
	os.Exit(serve(logger))
}

// serve runs the plugin and returns main's exit status; it is apart from main
// so that the deferred Close runs before the process exits.
func serve(logger hclog.Logger) int {
	p := xaa.New(logger)
	defer p.Close()
	err := sdk.Serve(&sdk.ServeOpts{
		Info:   sdk.Info{Name: "auth-xaa", Version: "0.1.0", AuthSchemes: []sdk.Component{xaa.Component}},
		Auth:   p,
		Logger: logger,
	})
	if err != nil {
		logger.Error("cannot serve", "error", err)
		return 1
	}
	return 0
}
