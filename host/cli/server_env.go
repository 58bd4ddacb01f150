package cli

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/mcphost/mcphost/host/config"
)

// applyInheritEnv sets the entry's inherit_env from --inherit-env: names of
// host variables (each flag may hold several, comma-separated), checked and
// kept once each in the order given.
func (f *addFlags) applyInheritEnv(e *config.ServerEntry, remote bool) error {
	if len(f.inheritEnv) == 0 {
		return nil
	}
	if remote {
		return errors.New("--inherit-env passes host variables to a stdio server; a remote server takes -H headers")
	}
	for _, n := range f.inheritEnv {
		n = strings.TrimSpace(n)
		switch {
		case n == "":
			continue
		case strings.Contains(n, "="):
			// (Not quoted: what follows '=' may be a secret.)
			return errors.New("--inherit-env takes variable names (--inherit-env HTTPS_PROXY,NODE_EXTRA_CA_CERTS); to set a value use -e KEY=VALUE")
		case !config.ValidEnvName(n):
			return fmt.Errorf("--inherit-env: %q is not a valid environment variable name (letters, digits and '_', not starting with a digit)", n)
		}
		if !slices.Contains(e.InheritEnv, n) {
			e.InheritEnv = append(e.InheritEnv, n)
		}
	}
	return nil
}
