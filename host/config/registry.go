package config

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// The registry attribute of a server block: registry = "NAME@VERSION" names
// the MCP Registry entry the server was installed from (`mcphost server add
// --from-registry`). Such a server is approved like a project server, in
// whatever scope it is: until `mcphost config approve NAME` it is not
// started, and approving it pins its tools as first seen.

// registryNameRE is the registry's server name pattern (reverse-DNS
// namespace, one "/", the server's name).
var registryNameRE = regexp.MustCompile(`^[a-zA-Z0-9.-]+/[a-zA-Z0-9._-]+$`)

// registryVersionRE is what a version may hold: the registry's versions
// are semantic versions (or dates, build tags), and the version is shown
// on the approval screen, so no control or other characters.
var registryVersionRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9.+_-]*$`)

// ParseRegistryRef splits "NAME@VERSION" (a registry attribute, or an
// IDENTIFIER[@VERSION] of --from-registry with needVersion false: the
// version is then "" when not given).
func ParseRegistryRef(ref string, needVersion bool) (name, version string, err error) {
	name, version, hasVersion := strings.Cut(ref, "@")
	switch {
	case len(name) < 3 || len(name) > 200 || !registryNameRE.MatchString(name):
		return "", "", fmt.Errorf("%q is not an MCP Registry server name (NAMESPACE/NAME, e.g. io.github.user/weather)", name)
	case hasVersion && (len(version) > 255 || !registryVersionRE.MatchString(version)):
		return "", "", fmt.Errorf("%q: not a version after the @ (letters, digits, '.', '+', '_' and '-')", ref)
	case needVersion && !hasVersion:
		return "", "", fmt.Errorf("%q: want NAME@VERSION", ref)
	}
	return name, version, nil
}

// NeedsApproval reports whether the server runs only once the user
// approved it: a project server, and a server installed from a registry.
func (s *Server) NeedsApproval() bool {
	return s.Origin.Scope == ScopeProject || s.Registry != ""
}

// hasRegistryAttr reports whether a server block sets registry.
func hasRegistryAttr(b *hcl.Block) bool {
	body, ok := b.Body.(*hclsyntax.Body)
	if !ok {
		return false
	}
	_, ok = body.Attributes["registry"]
	return ok
}

// checkRegistryAttr checks the value of a registry attribute.
func checkRegistryAttr(a *hcl.Attribute, v string) hcl.Diagnostics {
	if a == nil {
		return nil
	}
	if _, _, err := ParseRegistryRef(v, true); err != nil {
		return hcl.Diagnostics{errorf(a.Expr.Range().Ptr(), "Invalid registry",
			"registry names the MCP Registry entry the server was installed from, as NAME@VERSION (e.g. \"io.github.user/weather@1.0.2\"): %v.", err)}
	}
	return nil
}
