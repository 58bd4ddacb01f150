package auth

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/mcphost/mcphost/sdk/oauthkit"
)

// FuzzWWWAuthenticate: WWW-Authenticate values (one per line) as the
// handler reads them after a 401 or 403 (oauthkit.ParseChallenges: the
// go-sdk's parser behind a size bound, then the error, scope and resource_metadata parameters) and rewrites
// them for the go-sdk (pinnedTransport.challenge). Invariants: no panic;
// the rewritten challenge always parses, points only at the pinned
// document, and carries the server's scope and error unchanged when they
// could be quoted (and not at all otherwise).
func FuzzWWWAuthenticate(f *testing.F) {
	// More seeds (duplicate parameters, "\x00\xff{}", huge values, many
	// commas) are in testdata/fuzz/FuzzWWWAuthenticate.
	f.Add(`Bearer error="insufficient_scope", scope="files:read files:write", resource_metadata="https://x/.well-known/oauth-protected-resource"`)
	f.Fuzz(func(t *testing.T, raw string) {
		var (
			cs  []oauthex.Challenge
			err error
		)
		start := time.Now()
		cs, err = oauthkit.ParseChallenges(strings.Split(raw, "\n"))
		if d := time.Since(start); d > time.Second {
			t.Fatalf("parsing %d bytes took %s", len(raw), d)
		}
		if err != nil {
			cs = nil // the handler goes on without challenges
		}
		scope, errCode := oauthkit.ChallengeParam(cs, "scope"), oauthkit.ChallengeParam(cs, "error")
		_ = oauthkit.ChallengeParam(cs, "resource_metadata")
		if len(raw) > oauthkit.MaxChallengeBytes && cs != nil {
			t.Fatalf("%d bytes of challenges were parsed", len(raw))
		}
		p := &pinnedTransport{}
		out := p.challenge(cs)
		got, err := oauthex.ParseWWWAuthenticate(http.Header{"Www-Authenticate": {out}}.Values("WWW-Authenticate"))
		if err != nil || len(got) != 1 || got[0].Scheme != "bearer" {
			t.Fatalf("rewritten challenge %q does not parse as one Bearer challenge: %v %v", out, got, err)
		}
		if rm := got[0].Params["resource_metadata"]; rm != "https://"+pinnedHost+"/" {
			t.Fatalf("rewritten challenge points at %q", rm)
		}
		for name, want := range map[string]string{"scope": scope, "error": errCode} {
			if !quotable(want) {
				want = ""
			}
			if v := got[0].Params[name]; v != want {
				t.Fatalf("%s = %q after rewriting, want %q (from %q)", name, v, want, raw)
			}
		}
		if len(got[0].Params) > 3 {
			t.Fatalf("rewritten challenge has extra parameters: %v", got[0].Params)
		}
	})
}
