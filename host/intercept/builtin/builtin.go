// Package builtin holds the interceptors built into mcphost:
// validate_input (a tool call's arguments against the tool's inputSchema),
// validate_output (a result's structuredContent against its outputSchema)
// and secrets (token shapes in arguments and results).
package builtin

import (
	"fmt"
	"slices"

	"github.com/hashicorp/go-hclog"

	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/intercept"
)

// The built-ins' names, as `builtin = "…"` spells them.
const (
	ValidateInput  = "validate_input"
	ValidateOutput = "validate_output"
	Secrets        = "secrets"
)

// Names are the built-ins, for diagnostics.
var Names = []string{ValidateInput, ValidateOutput, Secrets}

// Option sets an option of New.
type Option func(*options)

type options struct {
	log hclog.Logger
}

// WithLogger makes New's checks log to l (default: nowhere).
func WithLogger(l hclog.Logger) Option {
	return func(o *options) { o.log = l }
}

// New returns the entry of the interceptor block ic whose builtin is set.
// A configuration the built-in cannot enforce is an error (matching
// intercept.ErrUnsupported), never accepted.
func New(ic *config.Interceptor, opts ...Option) (*intercept.Entry, error) {
	o := options{log: hclog.NewNullLogger()}
	for _, opt := range opts {
		opt(&o)
	}
	switch ic.Builtin {
	case ValidateInput, ValidateOutput:
		return newValidate(ic, o)
	case Secrets:
		return newSecrets(ic)
	}
	return nil, fmt.Errorf("interceptor %q: builtin %q: %w (built-ins: %v)", ic.Name, ic.Builtin, intercept.ErrUnsupported, Names)
}

// onlyToolsCall refuses a built-in configured for other events or phases
// than it checks.
func onlyToolsCall(ic *config.Interceptor, phase string) error {
	for _, ev := range ic.Events {
		if ev != intercept.EventToolsCall {
			return fmt.Errorf("interceptor %q: builtin %q checks tools/call only, not %q: %w", ic.Name, ic.Builtin, ev, intercept.ErrUnsupported)
		}
	}
	if slices.ContainsFunc(ic.Phases, func(p string) bool { return p != phase }) {
		return fmt.Errorf("interceptor %q: builtin %q checks the %s phase only: %w", ic.Name, ic.Builtin, phase, intercept.ErrUnsupported)
	}
	return nil
}
