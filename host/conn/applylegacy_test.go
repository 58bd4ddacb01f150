package conn

import (
	"testing"

	"github.com/mcphost/mcphost/host/config"
)

// legacy_session = false and the attribute left out hash alike
// (ConfigHash keeps the hashes of before), yet differ as connections:
// turning the second session off or on is a change of the server.
func TestSameConnectionLegacySession(t *testing.T) {
	on, off := true, false
	for _, tc := range []struct {
		name string
		a, b *bool
		same bool
	}{
		{"left out, false", nil, &off, false},
		{"left out, true", nil, &on, false}, // (the hash differs: see ConfigHash)
		{"false, false", &off, &off, true},
		{"left out, left out", nil, nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := &config.Server{Name: "r", Transport: config.TransportHTTP, URL: "https://example.com", LegacySession: tc.a}
			b := &config.Server{Name: "r", Transport: config.TransportHTTP, URL: "https://example.com", LegacySession: tc.b}
			if got := sameConnection(a, b); got != tc.same {
				t.Fatalf("sameConnection = %v, want %v", got, tc.same)
			}
		})
	}
}
