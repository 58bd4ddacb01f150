package oauthkit

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"syscall"
	"time"
)

// ErrBlockedAddress is returned for an OAuth request to an address the SSRF
// guard refuses.
var ErrBlockedAddress = errors.New("blocked OAuth endpoint")

// GuardOptions configures NewGuardedClient.
type GuardOptions struct {
	// AllowLoopback permits http:// and loopback addresses (127.0.0.0/8,
	// ::1, "localhost"), for local development and tests. Private,
	// link-local and other reserved addresses stay blocked.
	AllowLoopback bool
	// Timeout bounds each request (default 30 s).
	Timeout time.Duration
}

// NewGuardedClient returns the HTTP client for every OAuth fetch of one
// server (protected-resource and authorization-server metadata,
// registration, token, revocation, client metadata documents): https only;
// no private, loopback, link-local, unique-local, CGNAT, multicast,
// unspecified or IPv4-mapped forms of them, checked on the URL, again on
// every redirect hop, and again at dial time on the address actually dialled
// (which also defeats DNS rebinding). At most 5 redirects are followed.
//
// A proxy from the environment is not used: a proxy would make the dial-time
// check see the proxy's address instead of the destination.
func NewGuardedClient(opts GuardOptions) *http.Client {
	timeout := opts.Timeout
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	dialer := &net.Dialer{
		Timeout:   10 * time.Second,
		KeepAlive: 30 * time.Second,
		Control:   guardControl(opts.AllowLoopback),
	}
	base := &http.Transport{
		DialContext:           dialer.DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          8,
		IdleConnTimeout:       30 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ResponseHeaderTimeout: timeout,
	}
	return &http.Client{
		Transport: &guardTransport{base: base, allowLoopback: opts.AllowLoopback},
		Timeout:   timeout,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) >= 5 {
				return errors.New("too many redirects")
			}
			return CheckOAuthURL(req.URL, opts.AllowLoopback)
		},
	}
}

// guardControl checks the address actually dialled.
func guardControl(allowLoopback bool) func(string, string, syscall.RawConn) error {
	return func(_, address string, _ syscall.RawConn) error {
		host, _, err := net.SplitHostPort(address)
		if err != nil {
			host = address
		}
		ip, err := netip.ParseAddr(host)
		if err != nil {
			return fmt.Errorf("%w: dialling non-IP address %q", ErrBlockedAddress, host)
		}
		return checkIP(ip, allowLoopback)
	}
}

// guardTransport checks each request's URL before it is sent (the client
// also sends every redirect hop through it).
type guardTransport struct {
	base          http.RoundTripper
	allowLoopback bool
}

func (g *guardTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if err := CheckOAuthURL(req.URL, g.allowLoopback); err != nil {
		if req.Body != nil {
			req.Body.Close()
		}
		return nil, err
	}
	return g.base.RoundTrip(req)
}

// CheckOAuthURL applies the guard's URL rules: https (or http to loopback
// when allowed) and, for a literal IP host in any spelling Go's URL parser
// and resolver accept, a public address.
func CheckOAuthURL(u *url.URL, allowLoopback bool) error {
	host := u.Hostname()
	if host == "" {
		return fmt.Errorf("%w: %q has no host", ErrBlockedAddress, u.Redacted())
	}
	loopbackName := strings.EqualFold(host, "localhost") || strings.HasSuffix(strings.ToLower(host), ".localhost")
	ip, isIP := parseHostIP(host)
	switch u.Scheme {
	case "https":
	case "http":
		if !allowLoopback || !(loopbackName || (isIP && ip.Unmap().IsLoopback())) {
			return fmt.Errorf("%w: %s is not https", ErrBlockedAddress, u.Redacted())
		}
	default:
		return fmt.Errorf("%w: scheme %q", ErrBlockedAddress, u.Scheme)
	}
	if loopbackName && !allowLoopback {
		return fmt.Errorf("%w: %s is a loopback name", ErrBlockedAddress, host)
	}
	if isIP {
		return checkIP(ip, allowLoopback)
	}
	return nil
}

// parseHostIP parses a host as an IP address, including the legacy forms
// inet_aton accepts (0x7f000001, 2130706433, 127.1), which a resolver may
// turn into an address though netip rejects them.
func parseHostIP(host string) (netip.Addr, bool) {
	if ip, err := netip.ParseAddr(strings.Trim(host, "[]")); err == nil {
		return ip, true
	}
	parts := strings.Split(host, ".")
	if len(parts) > 4 {
		return netip.Addr{}, false
	}
	var vals []uint64
	for _, p := range parts {
		var v uint64
		var err error
		switch {
		case strings.HasPrefix(strings.ToLower(p), "0x"):
			_, err = fmt.Sscanf(p[2:], "%x", &v)
		case len(p) > 1 && p[0] == '0':
			_, err = fmt.Sscanf(p[1:], "%o", &v)
		default:
			_, err = fmt.Sscanf(p, "%d", &v)
		}
		if err != nil || p == "" {
			return netip.Addr{}, false
		}
		vals = append(vals, v)
	}
	var n uint64
	switch len(vals) {
	case 1:
		n = vals[0]
	case 2:
		n = vals[0]<<24 | vals[1]
	case 3:
		n = vals[0]<<24 | vals[1]<<16 | vals[2]
	case 4:
		n = vals[0]<<24 | vals[1]<<16 | vals[2]<<8 | vals[3]
	}
	if n > 0xffffffff {
		return netip.Addr{}, false
	}
	return netip.AddrFrom4([4]byte{byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)}), true
}

var (
	cgnat     = netip.MustParsePrefix("100.64.0.0/10")
	benchmark = netip.MustParsePrefix("198.18.0.0/15")
	nat64     = netip.MustParsePrefix("64:ff9b::/96")
)

// checkIP refuses every address that is not public unicast. IPv4-mapped
// (::ffff:a.b.c.d) and NAT64 (64:ff9b::a.b.c.d) addresses are judged by the
// IPv4 address they embed. allowLoopback permits only loopback written as
// itself (127.0.0.0/8, ::1): an IPv4-mapped or NAT64 spelling of loopback is
// dialled over IPv6 to whatever a translator puts there, so it stays blocked.
func checkIP(ip netip.Addr, allowLoopback bool) error {
	orig := ip
	ip = ip.Unmap()
	if ip.Is6() && nat64.Contains(ip) {
		b := ip.As16()
		ip = netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]})
	}
	if ip.IsLoopback() {
		if allowLoopback && orig == ip {
			return nil
		}
		return fmt.Errorf("%w: %s is a loopback address", ErrBlockedAddress, orig)
	}
	if !ip.IsValid() || ip.IsPrivate() || ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast() ||
		ip.IsInterfaceLocalMulticast() || ip.IsMulticast() || ip.IsUnspecified() ||
		cgnat.Contains(ip) || benchmark.Contains(ip) || (ip.Is4() && ip.As4()[0] == 0) || (ip.Is4() && ip.As4()[0] >= 240) {
		return fmt.Errorf("%w: %s is not a public address", ErrBlockedAddress, ip)
	}
	return nil
}
