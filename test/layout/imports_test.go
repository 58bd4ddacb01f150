package layout

import (
	"os/exec"
	"strings"
	"testing"
)

// The gateway's layout (issue 34): the front-agnostic core, the wire
// package every step reads a message through, and the fronts, each a
// package of its own.
const (
	gatewayCore       = module + "/host/gateway"
	gatewayWire       = module + "/host/gateway/wire"
	gatewayStdio      = module + "/host/gateway/stdio"
	gatewayStreamable = module + "/host/gateway/streamable"
	gatewayCluster    = module + "/host/gateway/cluster"
)

// importGraph is the module's packages under host/..., by import path: the
// packages each imports directly.
func importGraph(t *testing.T) map[string][]string {
	t.Helper()
	cmd := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .Imports " "}}`, module+"/host/...")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	g := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		g[f[0]] = f[1:]
	}
	return g
}

// within reports whether pkg is path or a package under it.
func within(pkg, path string) bool {
	return pkg == path || strings.HasPrefix(pkg, path+"/")
}

// reaches returns the packages of the graph (the module's own; others are
// not followed) that pkg imports directly or through others.
func reaches(g map[string][]string, pkg string) map[string]bool {
	seen := map[string]bool{}
	var walk func(string)
	walk = func(p string) {
		for _, dep := range g[p] {
			if !seen[dep] {
				seen[dep] = true
				walk(dep)
			}
		}
	}
	walk(pkg)
	return seen
}

// TestGatewayImports: the core of the gateway is free of its fronts, the
// fronts are free of each other, and the core, the stdio front, the
// replica protocol's keys and the wire package do not import net/http
// themselves (the go-sdk's server, which the core runs, does).
func TestGatewayImports(t *testing.T) {
	t.Parallel()
	g := importGraph(t)
	tests := []struct {
		name string
		pkg  string // the package, and those under it (but for except)
		// except are packages under pkg that are not its (another
		// package of the layout)
		except []string
		// direct: pkg imports none of these itself; reach: none of these
		// (or a package under one) is among pkg's imports, direct or not.
		direct, reach []string
	}{
		{name: "the core imports no front and no HTTP", pkg: gatewayCore, except: []string{gatewayStdio, gatewayStreamable, gatewayWire, gatewayCluster},
			direct: []string{"net/http"}, reach: []string{gatewayStdio, gatewayStreamable}},
		{name: "the replica protocol's keys import no gateway", pkg: gatewayCluster,
			direct: []string{"net/http"}, reach: []string{gatewayCore, gatewayStdio, gatewayStreamable}},
		{name: "the stdio front imports no HTTP", pkg: gatewayStdio,
			direct: []string{"net/http"}, reach: []string{gatewayStreamable}},
		{name: "the streamable front imports not the stdio front", pkg: gatewayStreamable,
			reach: []string{gatewayStdio}},
		{name: "wire imports no HTTP and no gateway", pkg: gatewayWire,
			direct: []string{"net/http"}, reach: []string{gatewayCore, gatewayStdio, gatewayStreamable}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			found := false
		pkgs:
			for pkg, imports := range g {
				if !within(pkg, tc.pkg) {
					continue
				}
				for _, e := range tc.except {
					if e != tc.pkg && within(pkg, e) {
						continue pkgs
					}
				}
				found = true
				for _, imp := range imports {
					for _, bad := range tc.direct {
						if imp == bad {
							t.Errorf("%s imports %s", pkg, bad)
						}
					}
				}
				for dep := range reaches(g, pkg) {
					for _, bad := range tc.reach {
						if within(dep, bad) {
							t.Errorf("%s imports %s (directly or not)", pkg, dep)
						}
					}
				}
			}
			if !found {
				t.Fatalf("no package %s: the layout changed, update this test", tc.pkg)
			}
		})
	}
}
