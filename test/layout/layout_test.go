// Package layout holds tests of the repository's layout: what the shipped
// binaries are built from, and which packages may import which.
package layout

import (
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/mcphost/mcphost"

// deps lists the packages that pkgs are built from (go list -deps), for
// the given GOOS.
func deps(t *testing.T, goos string, pkgs ...string) []string {
	t.Helper()
	cmd := exec.Command("go", append([]string{"list", "-deps"}, pkgs...)...)
	cmd.Env = append(cmd.Environ(), "GOOS="+goos)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps %s (GOOS=%s): %v\n%s", strings.Join(pkgs, " "), goos, err, out)
	}
	return strings.Fields(string(out))
}

// TestShippedBinariesHoldNoTestRigs: the test rigs (internal/testing/...:
// a test OpenID provider, Redis and HAProxy launchers, fake authorization
// servers, benchmark tools) and the test-only modules they bring are never
// built into a shipped binary (cmd/..., plugins/...), on any platform.
func TestShippedBinariesHoldNoTestRigs(t *testing.T) {
	t.Parallel()
	testOnly := []string{
		module + "/internal/testing/",
		module + "/test/",
		"github.com/zitadel/oidc",     // the test OpenID provider's
		"github.com/stretchr/testify", // assertions
	}
	for _, goos := range []string{"linux", "darwin", "windows"} {
		for _, dep := range deps(t, goos, module+"/cmd/...", module+"/plugins/...") {
			for _, bad := range testOnly {
				if dep == bad || strings.HasPrefix(dep, strings.TrimSuffix(bad, "/")+"/") {
					t.Errorf("GOOS=%s: a shipped binary is built from %s", goos, dep)
				}
			}
		}
	}
}

// TestTestRigsLiveUnderInternalTesting: every package under internal/ that
// no shipped binary is built from lives under internal/testing/, so that
// the folder names say what ships.
func TestTestRigsLiveUnderInternalTesting(t *testing.T) {
	t.Parallel()
	shipped := map[string]bool{}
	for _, goos := range []string{"linux", "darwin", "windows"} {
		for _, dep := range deps(t, goos, module+"/cmd/...", module+"/plugins/...", module+"/host/...", module+"/sdk/...") {
			shipped[dep] = true
		}
	}
	out, err := exec.Command("go", "list", module+"/internal/...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, pkg := range strings.Fields(string(out)) {
		if !shipped[pkg] && !strings.HasPrefix(pkg, module+"/internal/testing/") {
			t.Errorf("%s is built into nothing that ships: move it under internal/testing/", pkg)
		}
	}
}
