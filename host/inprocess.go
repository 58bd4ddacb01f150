package host

import (
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host/config"
)

// ErrInProcess classifies a mismatch between Options.InProcess and the
// configuration's in-process servers.
var ErrInProcess = errors.New("in-process server")

// checkInProcess checks that every in-process server of cfg has an
// implementation, and that every implementation is a server of cfg (in
// use, or skipped: overridden, or excluded by the managed configuration).
func checkInProcess(cfg *config.Config, impl map[string]*mcp.Server) error {
	declared := map[string]bool{}
	for _, s := range cfg.Servers {
		if s.Transport != config.TransportInProcess {
			continue
		}
		declared[s.Name] = true
		if impl[s.Name] == nil {
			return fmt.Errorf("%w %q has no implementation: give it in Options.InProcess", ErrInProcess, s.Name)
		}
	}
	for _, s := range cfg.Skipped {
		if s.Server.Transport == config.TransportInProcess {
			declared[s.Server.Name] = true
		}
	}
	for name, srv := range impl {
		if srv == nil {
			return fmt.Errorf("%w %q: the server is nil", ErrInProcess, name)
		}
		if !declared[name] {
			return fmt.Errorf("%w %q is not in the configuration: add config.InProcessServer(%q) to LoadOptions.Dynamic", ErrInProcess, name, name)
		}
	}
	return nil
}
