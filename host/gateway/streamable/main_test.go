package streamable

import (
	"os"
	"testing"

	"github.com/mcphost/mcphost/internal/demoserver"
)

// TestMain runs the demo MCP server when the test binary is started as
// one (demotest.Server), else the tests.
func TestMain(m *testing.M) {
	demoserver.RunIfChild()
	os.Exit(m.Run())
}
