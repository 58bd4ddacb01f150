package wire

import (
	"os/exec"
	"strings"
	"testing"
)

// TestImports keeps wire a leaf of the gateway: no HTTP, and none of the
// gateway's own packages (fronts, core, host), so that every part of the
// gateway can use it.
func TestImports(t *testing.T) {
	t.Parallel()
	out, err := exec.Command("go", "list", "-f", `{{join .Imports "\n"}}`, ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, imp := range strings.Fields(string(out)) {
		if imp == "net/http" || strings.HasPrefix(imp, "github.com/mcphost/mcphost/host") {
			t.Errorf("wire imports %s", imp)
		}
	}
}
