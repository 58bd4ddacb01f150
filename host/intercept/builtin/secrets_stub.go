package builtin

import (
	"fmt"

	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/intercept"
)

// newSecrets is a placeholder until the secrets built-in lands (WP4's
// secrets.go replaces this file): it refuses the block, so a secrets
// interceptor is never accepted and not enforced.
func newSecrets(ic *config.Interceptor) (*intercept.Entry, error) {
	return nil, fmt.Errorf("interceptor %q: builtin secrets: %w", ic.Name, intercept.ErrUnsupported)
}
