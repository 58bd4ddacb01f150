package conn

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/mcphost/mcphost/host/config"
)

// TestHTTPLaneReusesConnections: 8 callers making raw calls at once on a
// streamable HTTP server keep to about as many connections as callers —
// each call's connection goes back to the pool and serves a later call —
// rather than dialing a connection for many of the calls (the per-host
// idle pool too small for the callers, or a response body not read to its
// end before the next call needs a connection).
func TestHTTPLaneReusesConnections(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		stateless bool
		version   string
	}{
		{"2026-07-28", true, NewProtocol},
		{"2025-11-25", false, "2025-11-25"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg, _, _, conns := recordingDemo(t, tc.stateless)
			m := NewManager([]*config.Server{cfg}, &Options{Capabilities: gatewayCaps})
			t.Cleanup(func() { m.Close() })
			listedSession(t, m, cfg.Name)
			gen := m.Generation(context.Background(), cfg.Name)
			const callers, calls = 8, 40
			call := func() error {
				resp, handled, err := m.CallRaw(context.Background(), cfg.Name, RawCall{Tool: "echo", Args: []byte(`{"message":"hi"}`),
					ProtocolVersion: tc.version, Gen: gen, Requester: newAnswerer("a", "yes"), Asks: true})
				if err != nil || !handled {
					return fmt.Errorf("raw call: %s %v %v", resp, handled, err)
				}
				return nil
			}
			before := conns.Load()
			var wg sync.WaitGroup
			errs := make(chan error, callers)
			for range callers {
				wg.Go(func() {
					for range calls {
						if err := call(); err != nil {
							errs <- err
							return
						}
					}
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Fatal(err)
			}
			if n := conns.Load() - before; n > 2*callers {
				t.Errorf("%d raw calls from %d callers opened %d connections (want at most %d: connections reused)", callers*calls, callers, n, 2*callers)
			}
		})
	}
}
