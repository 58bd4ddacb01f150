package streamable

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestRebinding: a request reaching a loopback listener (IPv4, IPv6, an
// IPv4-mapped IPv6 address, or an address of another type naming one) under
// a Host that is not localhost or a loopback literal is rebinding; one
// reaching another listener, or naming a loopback Host, is not.
func TestRebinding(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		local net.Addr
		host  string
		want  bool
	}{
		{"v4 loopback, foreign host", &net.TCPAddr{IP: net.ParseIP("127.0.0.1"), Port: 80}, "evil.example", true},
		{"v4 loopback, localhost", &net.TCPAddr{IP: net.ParseIP("127.0.0.1"), Port: 80}, "localhost:80", false},
		{"v4 loopback, literal", &net.TCPAddr{IP: net.ParseIP("127.0.0.2"), Port: 80}, "127.0.0.1:8080", false},
		{"v6 loopback, foreign host", &net.TCPAddr{IP: net.IPv6loopback, Port: 80}, "evil.example:80", true},
		{"v6 loopback, literal", &net.TCPAddr{IP: net.IPv6loopback, Port: 80}, "[::1]:80", false},
		{"mapped loopback, foreign host", &net.TCPAddr{IP: net.ParseIP("::ffff:127.0.0.1"), Port: 80}, "evil.example", true},
		{"public listener", &net.TCPAddr{IP: net.ParseIP("10.0.0.1"), Port: 80}, "evil.example", false},
		{"unix socket", &net.UnixAddr{Name: "/tmp/mcp.sock", Net: "unix"}, "evil.example", false},
		{"other type naming loopback", &net.UDPAddr{IP: net.ParseIP("127.0.0.1"), Port: 80}, "evil.example", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodPost, "http://x/mcp", nil)
			r.Host = tc.host
			r = r.WithContext(context.WithValue(r.Context(), http.LocalAddrContextKey, tc.local))
			if got := rebinding(r); got != tc.want {
				t.Errorf("rebinding = %v, want %v", got, tc.want)
			}
		})
	}
	r := httptest.NewRequest(http.MethodPost, "http://x/mcp", nil)
	r.Host = "evil.example"
	if rebinding(r) {
		t.Error("a request without a local address is rebinding")
	}
}
