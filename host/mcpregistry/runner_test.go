package mcpregistry_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/mcphost/mcphost/host/mcpregistry"
)

// TestPlanPackageRunners: a runtimeHint names a known runner of the
// package's type, which gets the package in its own form; anything else,
// and a package without a pinned version, is refused, the hint printed
// without control characters.
func TestPlanPackageRunners(t *testing.T) {
	s := &mcpregistry.ServerJSON{Name: "io.example/x", Version: "1.2.0"}
	tests := []struct {
		name string
		pkg  mcpregistry.Package
		want string // the command line, or "refused: TEXT"
	}{
		{"npm default", mcpregistry.Package{RegistryType: "npm", Identifier: "pkg", Version: "1.0.0"}, "npx -y pkg@1.0.0"},
		{"npm npx", mcpregistry.Package{RegistryType: "npm", Identifier: "pkg", Version: "1.0.0", RuntimeHint: "npx"}, "npx -y pkg@1.0.0"},
		{"npm bunx", mcpregistry.Package{RegistryType: "npm", Identifier: "pkg", Version: "1.0.0", RuntimeHint: "bunx"}, "bunx pkg@1.0.0"},
		{"npm pnpm", mcpregistry.Package{RegistryType: "npm", Identifier: "pkg", Version: "1.0.0", RuntimeHint: "pnpm"}, "pnpm dlx pkg@1.0.0"},
		{"npm yarn", mcpregistry.Package{RegistryType: "npm", Identifier: "pkg", Version: "1.0.0", RuntimeHint: "yarn"}, "yarn dlx pkg@1.0.0"},
		{"pypi uvx", mcpregistry.Package{RegistryType: "pypi", Identifier: "pkg", Version: "1.0.0", RuntimeHint: "uvx"}, "uvx pkg==1.0.0"},
		{"oci podman", mcpregistry.Package{RegistryType: "oci", Identifier: "docker.io/a/b", Version: "1.0.0", RuntimeHint: "podman"}, "podman run -i --rm docker.io/a/b:1.0.0"},
		{"oci tag in the identifier", mcpregistry.Package{RegistryType: "oci", Identifier: "docker.io/a/b:1.0.0"}, "docker run -i --rm docker.io/a/b:1.0.0"},
		{"nuget dnx", mcpregistry.Package{RegistryType: "nuget", Identifier: "Pkg", Version: "1.0.0", RuntimeHint: "dnx"}, "dnx Pkg@1.0.0 --yes"},
		{"a shell", mcpregistry.Package{RegistryType: "npm", Identifier: "pkg", Version: "1.0.0", RuntimeHint: "sh"}, `refused: run by "sh"`},
		{"a path", mcpregistry.Package{RegistryType: "npm", Identifier: "pkg", Version: "1.0.0", RuntimeHint: "/tmp/x"}, `refused: run by "/tmp/x"`},
		{"another type's runner", mcpregistry.Package{RegistryType: "pypi", Identifier: "pkg", Version: "1.0.0", RuntimeHint: "npx"}, `refused: with uvx only`},
		{"node for npm", mcpregistry.Package{RegistryType: "npm", Identifier: "pkg", Version: "1.0.0", RuntimeHint: "node"}, `refused: npx, bunx, pnpm, yarn only`},
		{"escapes in the hint", mcpregistry.Package{RegistryType: "npm", Identifier: "pkg", Version: "1.0.0", RuntimeHint: "np\x1b[2Jx"}, `refused: run by "np[2Jx"`},
		{"npm without a version", mcpregistry.Package{RegistryType: "npm", Identifier: "pkg"}, "refused: without a version"},
		{"npm latest", mcpregistry.Package{RegistryType: "npm", Identifier: "pkg", Version: "latest"}, "refused: without a version"},
		{"pypi without a version", mcpregistry.Package{RegistryType: "pypi", Identifier: "pkg"}, "refused: without a version"},
		{"nuget without a version", mcpregistry.Package{RegistryType: "nuget", Identifier: "Pkg"}, "refused: without a version"},
		{"oci without a tag", mcpregistry.Package{RegistryType: "oci", Identifier: "docker.io/a/b"}, "refused: without a version"},
		{"oci latest", mcpregistry.Package{RegistryType: "oci", Identifier: "docker.io/a/b:latest"}, "refused: without a version"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			plan, err := mcpregistry.PlanPackage(s, &tt.pkg, answers(nil))
			if want, refused := strings.CutPrefix(tt.want, "refused: "); refused {
				var u *mcpregistry.UnsupportedError
				if !errors.As(err, &u) || !strings.Contains(err.Error(), want) {
					t.Fatalf("got %v, want an UnsupportedError with %q", err, want)
				}
				if strings.ContainsRune(err.Error(), 0x1b) {
					t.Errorf("the error holds an escape: %q", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			line := plan.Command
			for _, a := range plan.Args {
				line += " " + a.Text
			}
			if line != tt.want {
				t.Errorf("got %q, want %q", line, tt.want)
			}
		})
	}
}

// TestPlanErrorsPrintable: the keys of a registry's answer reach error
// messages without control characters.
func TestPlanErrorsPrintable(t *testing.T) {
	s := &mcpregistry.ServerJSON{Name: "io.example/x", Version: "1.2.0"}
	p := &mcpregistry.Package{RegistryType: "npm", Identifier: "pkg", Version: "1.0.0",
		EnvironmentVariables: []mcpregistry.KeyValueInput{{Name: "K\x1b]0;T\x07EY", Input: mcpregistry.Input{IsRequired: true}}}}
	_, err := mcpregistry.PlanPackage(s, p, answers(nil))
	if err == nil || strings.ContainsAny(err.Error(), "\x1b\x07") {
		t.Fatalf("got %q", err)
	}
	p = &mcpregistry.Package{RegistryType: "npm", Identifier: "pkg", Version: "1.0.0",
		EnvironmentVariables: []mcpregistry.KeyValueInput{{Name: "U\x1b[2JRL", Input: mcpregistry.Input{Value: "x{v}", Variables: map[string]mcpregistry.Input{"v": {}}}}}}
	_, err = mcpregistry.PlanPackage(s, p, answers(map[string]string{"v": "env:V"}))
	if err == nil || strings.ContainsAny(err.Error(), "\x1b\x07") {
		t.Fatalf("got %q", err)
	}
}
