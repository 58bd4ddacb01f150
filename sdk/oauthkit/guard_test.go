package oauthkit

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
)

// TestGuardBlocksInternalAddresses: every spelling of a loopback canary is
// refused before a connection is made (SECURITY.md A6).
func TestGuardBlocksInternalAddresses(t *testing.T) {
	var hits atomic.Int32
	canary := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { hits.Add(1) }))
	defer canary.Close()
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(canary.URL, "http://"))
	// A resolver name mapped to 127.0.0.1: the dial-time check sees the address.
	dialer := &net.Dialer{}
	client := NewGuardedClient(GuardOptions{})
	client.Transport.(*guardTransport).base.(*http.Transport).DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		if strings.HasPrefix(addr, "rebind.example:") {
			addr = "127.0.0.1:" + port
		}
		// Keep the guard's Control check: dial through a copy of its dialer.
		d := *dialer
		d.Control = guardControl(false)
		return d.DialContext(ctx, network, addr)
	}
	for _, u := range []string{
		canary.URL,                           // plain http
		"https://127.0.0.1:" + port,          // loopback
		"https://0x7f000001:" + port,         // hex IPv4
		"https://2130706433:" + port,         // decimal IPv4
		"https://127.1:" + port,              // short form
		"https://[::ffff:127.0.0.1]:" + port, // IPv4-mapped
		"https://localhost:" + port,          // loopback name
		"https://rebind.example:" + port,     // DNS answer is loopback
		"https://10.0.0.1/", "https://169.254.169.254/latest/meta-data", "https://[fe80::1]/", "https://[fc00::1]/",
		"file:///etc/passwd",
	} {
		resp, err := client.Get(u)
		if err == nil {
			resp.Body.Close()
			t.Errorf("GET %s succeeded", u)
		}
	}
	if n := hits.Load(); n != 0 {
		t.Fatalf("the canary was reached %d times", n)
	}
}

// TestGuardRedirects: each redirect hop is checked again.
func TestGuardRedirects(t *testing.T) {
	var hits atomic.Int32
	canary := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { hits.Add(1) }))
	defer canary.Close()
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(canary.URL, "http://"))
	hop := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, fmt.Sprintf("http://[::ffff:10.0.0.1]:%s/", port), http.StatusFound)
	}))
	defer hop.Close()
	client := NewGuardedClient(GuardOptions{AllowLoopback: true}) // the hop itself is on loopback
	resp, err := client.Get(hop.URL)
	if err == nil {
		resp.Body.Close()
		t.Fatal("redirect to a private address was followed")
	}
	if hits.Load() != 0 {
		t.Fatal("canary reached")
	}
	// AllowLoopback still permits loopback itself.
	resp, err = client.Get(canary.URL)
	if err != nil {
		t.Fatalf("loopback with AllowLoopback: %v", err)
	}
	resp.Body.Close()
}

// TestAllowLoopbackMeansRealLoopback: allow_loopback permits 127.0.0.0/8
// and ::1 as themselves, never a NAT64 or IPv4-mapped spelling of them,
// which would be dialled over IPv6 (the attack: http://[64:ff9b::7f00:1]/).
func TestAllowLoopbackMeansRealLoopback(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		host string
		want bool // allowed
	}{
		{"127.0.0.1", true},
		{"127.5.6.7", true},
		{"::1", true},
		{"64:ff9b::7f00:1", false},
		{"64:ff9b::127.0.0.1", false},
		{"::ffff:127.0.0.1", false},
		{"::ffff:7f00:1", false},
		{"64:ff9b::a00:1", false}, // NAT64 of 10.0.0.1
	} {
		t.Run(tc.host, func(t *testing.T) {
			hostport := net.JoinHostPort(tc.host, "8080")
			u, err := url.Parse("http://" + hostport + "/.well-known/oauth-authorization-server")
			if err != nil {
				t.Fatal(err)
			}
			urlErr := CheckOAuthURL(u, true)
			dialErr := guardControl(true)("tcp", hostport, nil)
			for name, err := range map[string]error{"URL check": urlErr, "dial check": dialErr} {
				if got := err == nil; got != tc.want {
					t.Errorf("%s with AllowLoopback: allowed = %v, want %v (%v)", name, got, tc.want, err)
				}
				if err != nil && !errors.Is(err, ErrBlockedAddress) {
					t.Errorf("%s: error %v is not ErrBlockedAddress", name, err)
				}
			}
		})
	}
}
