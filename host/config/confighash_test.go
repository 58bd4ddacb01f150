package config

import (
	"testing"
	"time"
)

// TestConfigHashLegacySession: no configuration's hash (the key of its
// connection and stored tokens) changed when legacy_session became on by
// default: the hashes below are those of the build before (a bool, omitted
// when false). An explicit false hashes as the attribute left out.
func TestConfigHashLegacySession(t *testing.T) {
	on, off := true, false
	for _, tc := range []struct {
		name   string
		stdio  bool
		legacy *bool
		want   string
	}{
		{"http, left out", false, nil, "82d4cb442212d523"},
		{"http, false", false, &off, "82d4cb442212d523"},
		{"http, true", false, &on, "dbcc6eaf5734a6a3"},
		{"stdio, left out", true, nil, "8171958ada250c69"},
		{"stdio, false", true, &off, "8171958ada250c69"},
		{"stdio, true", true, &on, "b1e7325987ea65c8"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &Server{Name: "r", Transport: TransportHTTP, URL: "https://example.com/mcp", ConnectTimeout: 5 * time.Second, LegacySession: tc.legacy}
			if tc.stdio {
				s = &Server{Name: "s", Transport: TransportStdio, Command: "srv", Args: []string{"-x"}, LegacySession: tc.legacy}
			}
			if got := s.ConfigHash(); got != tc.want {
				t.Fatalf("ConfigHash = %s, want %s (the hash before)", got, tc.want)
			}
		})
	}
}
