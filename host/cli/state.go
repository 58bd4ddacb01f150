package cli

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	hauth "github.com/mcphost/mcphost/host/auth"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/state"
	"github.com/mcphost/mcphost/host/state/redisstate"
	"github.com/mcphost/mcphost/internal/sealbox"
)

// stateOpenTimeout bounds the first contact with a shared state backend.
const stateOpenTimeout = 10 * time.Second

// tokenPurpose is the sealbox purpose of OAuth tokens at rest in shared
// state.
const tokenPurpose = "token-at-rest"

// pinPurpose is the sealbox purpose of the tool pins in shared state.
const pinPurpose = "tool-pins"

// sharedState opens, once per command, the state the configuration's state
// block names (this machine's files without one) and the keys of
// MCPHOST_SESSION_KEYS (nil when unset: a random key per process). The
// backend is closed when the command ends.
func (a *app) sharedState(ctx context.Context, cfg *config.Config) (state.Backend, *sealbox.Keys, error) {
	if a.state != nil {
		return a.state, a.keys, nil
	}
	var keys *sealbox.Keys
	if v, ok := a.lookupEnv(sealbox.EnvSessionKeys); ok {
		k, err := sealbox.Parse(v)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", sealbox.EnvSessionKeys, err)
		}
		keys = k
	}
	var st state.Backend
	switch s := cfg.State; {
	case s == nil || s.Backend == config.StateLocal:
		var tokens hauth.Store
		pinsFile := ""
		if dir := config.Locate(a.lookupEnv, a.workDir).ConfigDir; dir != "" {
			pinsFile = filepath.Join(dir, "tool-pins.json")
			tokens = &hauth.FileStore{Dir: filepath.Join(dir, "tokens")}
		}
		local, err := state.NewLocal(tokens, pinsFile)
		if err != nil {
			return nil, nil, err
		}
		st = local
	default:
		if keys == nil {
			return nil, nil, fmt.Errorf("state (%s): the redis backend needs %s (comma-separated keys of 32 random bytes in standard base64, the same on every replica; make one with: openssl rand -base64 32): OAuth tokens are kept sealed with them, and every replica must open the others' session ids",
				s.Origin.Source(), sealbox.EnvSessionKeys)
		}
		octx, cancel := context.WithTimeout(ctx, stateOpenTimeout)
		defer cancel()
		rs, err := redisstate.New(octx, redisstate.Options{URL: s.URL, KeyPrefix: s.KeyPrefix, CAFile: s.CAFile, CertFile: s.CertFile, KeyFile: s.KeyFile,
			TokenBox: keys.Box(tokenPurpose), PinBox: keys.Box(pinPurpose), Logger: a.logger().Named("state"),
			// A held reply, the largest value stored, is at most twice
			// max_message_bytes, sealed: the replies' cap leaves room for it.
			MaxReplyBytes: max(redisstate.DefaultMaxReplyBytes, 2*int64(cfg.Settings.MaxMessageBytes)+1<<20)})
		if err != nil {
			return nil, nil, fmt.Errorf("state (%s): %w", s.Origin.Source(), err)
		}
		st = rs
	}
	a.state, a.keys = st, keys
	return st, keys, nil
}

// closeState closes the shared state a command opened.
func (a *app) closeState() error {
	if a.state == nil {
		return nil
	}
	err := a.state.Close()
	a.state = nil
	if err != nil {
		return errors.Join(errors.New("closing the shared state"), err)
	}
	return nil
}
