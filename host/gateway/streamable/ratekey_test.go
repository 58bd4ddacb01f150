package streamable

import (
	"strings"
	"testing"

	"github.com/mcphost/mcphost/host/gateway/cluster"
	"github.com/mcphost/mcphost/internal/sealbox"
)

// TestRateKeyHidesPrincipal: the rate limiter's key of a principal (a Redis
// key name when the counts are shared) shows neither its issuer nor its
// subject, is the same for the same principal on every replica (same
// keys), and differs between principals and between key sets.
func TestRateKeyHidesPrincipal(t *testing.T) {
	keys := sealbox.Random()
	a := &Front{rateKeys: keys.MACKeys(cluster.RateLimitPurpose)}
	b := &Front{rateKeys: keys.MACKeys(cluster.RateLimitPurpose)}
	other := &Front{rateKeys: sealbox.Random().MACKeys(cluster.RateLimitPurpose)}
	const alice, bob = "https://idp.example alice", "https://idp.example bob"
	ka := a.rateKey(alice)
	for _, part := range []string{"idp", "example", "alice"} {
		if strings.Contains(ka, part) {
			t.Errorf("rate key %q shows %q", ka, part)
		}
	}
	if b.rateKey(alice) != ka {
		t.Error("two replicas with the same keys count alice under different keys")
	}
	if a.rateKey(bob) == ka {
		t.Error("alice and bob share a rate key")
	}
	if other.rateKey(alice) == ka {
		t.Error("the rate key does not depend on the gateway's keys (a guessable digest)")
	}
}
