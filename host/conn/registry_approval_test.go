package conn

import (
	"errors"
	"testing"
)

// TestRegistryNotApproved: the error of an unapproved registry server is
// ErrNotApproved for errors.Is, in words of its own.
func TestRegistryNotApproved(t *testing.T) {
	err := error(registryNotApproved{"server from the MCP Registry (a/b@1) is not approved"})
	if !errors.Is(err, ErrNotApproved) || err.Error() != "server from the MCP Registry (a/b@1) is not approved" {
		t.Fatal(err)
	}
}
