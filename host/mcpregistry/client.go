package mcpregistry

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// DefaultURL is the official MCP Registry.
const DefaultURL = "https://registry.modelcontextprotocol.io"

// EnvURL names the environment variable that replaces DefaultURL (a mirror
// or an internal registry); --registry replaces both.
const EnvURL = "MCPHOST_REGISTRY_URL"

// Limits of a Client.
const (
	// DefaultMaxBytes bounds an answer's body.
	DefaultMaxBytes = 4 << 20
	// DefaultTimeout bounds a request, its body read included.
	DefaultTimeout = 30 * time.Second
	// MaxLimit is the largest page a search asks for.
	MaxLimit = 100
)

// ErrTooLarge is returned (wrapped) for an answer larger than MaxBytes.
var ErrTooLarge = errors.New("the registry's answer is too large")

// NotFoundError is a server (or a version of it) the registry does not have.
type NotFoundError struct {
	Name, Version, Registry string
}

func (e *NotFoundError) Error() string {
	if e.Version != "" && e.Version != "latest" {
		return fmt.Sprintf("no server %s version %s in %s", e.Name, e.Version, e.Registry)
	}
	return fmt.Sprintf("no server %s in %s", e.Name, e.Registry)
}

// StatusError is an answer with an HTTP status other than 200 and 404.
type StatusError struct {
	URL    string
	Status int
	// Detail is the start of the body (the registry's error message),
	// printable text only.
	Detail string
}

func (e *StatusError) Error() string {
	s := fmt.Sprintf("registry request %s: HTTP %d", e.URL, e.Status)
	if e.Detail != "" {
		s += ": " + e.Detail
	}
	return s
}

// DecodeError is an answer that is not the API's JSON.
type DecodeError struct {
	URL string
	Err error
}

func (e *DecodeError) Error() string {
	return fmt.Sprintf("the registry's answer to %s is not the MCP Registry API's JSON: %v", e.URL, e.Err)
}

func (e *DecodeError) Unwrap() error { return e.Err }

// Client reads a registry. Its zero value is not usable: see New.
type Client struct {
	base     *url.URL
	http     *http.Client
	maxBytes int64
}

// Option configures a Client.
type Option func(*Client)

// WithHTTPClient makes the client use hc (its Timeout is kept if set).
func WithHTTPClient(hc *http.Client) Option { return func(c *Client) { c.http = hc } }

// WithMaxBytes bounds an answer's body (DefaultMaxBytes otherwise).
func WithMaxBytes(n int64) Option { return func(c *Client) { c.maxBytes = n } }

// New returns a client of the registry at base, an https URL, or an http
// one of a loopback host (DefaultURL if empty); the API's paths (/v0.1/...) are appended to it.
func New(base string, opts ...Option) (*Client, error) {
	if base == "" {
		base = DefaultURL
	}
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("registry URL %q: want an http:// or https:// URL", base)
	}
	if u.User != nil {
		return nil, fmt.Errorf("registry URL %q: credentials in the URL are not supported", u.Redacted())
	}
	if u.Scheme == "http" && !isLoopback(u.Hostname()) {
		// The answer decides what command is written: over plain http,
		// anyone on the path would choose it.
		return nil, fmt.Errorf("registry URL %q: plain http is accepted for a loopback host only (localhost, 127.0.0.1, ::1); use https://", u.Redacted())
	}
	u.Path = strings.TrimSuffix(u.Path, "/")
	u.RawQuery, u.Fragment = "", ""
	c := &Client{base: u, http: &http.Client{Timeout: DefaultTimeout}, maxBytes: DefaultMaxBytes}
	for _, o := range opts {
		o(c)
	}
	return c, nil
}

// URL is the registry's base URL.
func (c *Client) URL() string { return c.base.String() }

// SearchOptions are the parameters of a search.
type SearchOptions struct {
	// Limit is the page size (1..MaxLimit; 0: the registry's default).
	Limit int
	// Cursor is a previous page's Metadata.NextCursor.
	Cursor string
	// AllVersions lists every version; otherwise only the latest of each server.
	AllVersions bool
}

// Search lists the servers whose name contains query (all servers if
// empty).
func (c *Client) Search(ctx context.Context, query string, o SearchOptions) (*ServerList, error) {
	q := url.Values{}
	if query != "" {
		q.Set("search", query)
	}
	if o.Limit > 0 {
		q.Set("limit", strconv.Itoa(min(o.Limit, MaxLimit)))
	}
	if o.Cursor != "" {
		q.Set("cursor", o.Cursor)
	}
	if !o.AllVersions {
		q.Set("version", "latest")
	}
	var out ServerList
	if _, err := c.get(ctx, "/v0.1/servers", q, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Server returns one version of the server name ("latest" or "": the
// latest). A server or version the registry does not have is a
// *NotFoundError.
func (c *Client) Server(ctx context.Context, name, version string) (*ServerResponse, error) {
	if version == "" {
		version = "latest"
	}
	p := "/v0.1/servers/" + url.PathEscape(name) + "/versions/" + url.PathEscape(version)
	var out ServerResponse
	status, err := c.get(ctx, p, nil, &out)
	if status == http.StatusNotFound {
		return nil, &NotFoundError{Name: name, Version: version, Registry: c.URL()}
	}
	if err != nil {
		return nil, err
	}
	if out.Server.Name == "" {
		return nil, &DecodeError{URL: c.URL() + p, Err: errors.New("no server name in the answer")}
	}
	return &out, nil
}

// get reads path (with query q) into out. A 404 returns its status and a
// *StatusError.
func (c *Client) get(ctx context.Context, path string, q url.Values, out any) (int, error) {
	u := *c.base
	plain, err := url.PathUnescape(path)
	if err != nil {
		return 0, fmt.Errorf("registry path %q: %w", path, err)
	}
	u.Path += plain
	u.RawPath = c.base.EscapedPath() + path
	u.RawQuery = q.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return 0, fmt.Errorf("registry request %s: %w", u.Redacted(), err)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := c.http.Do(req)
	if err != nil {
		return 0, fmt.Errorf("registry request: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, c.maxBytes+1))
	if err != nil {
		return resp.StatusCode, fmt.Errorf("reading the registry's answer to %s: %w", u.Redacted(), err)
	}
	if int64(len(body)) > c.maxBytes {
		return resp.StatusCode, fmt.Errorf("%s: %w (more than %d bytes)", u.Redacted(), ErrTooLarge, c.maxBytes)
	}
	if resp.StatusCode != http.StatusOK {
		return resp.StatusCode, &StatusError{URL: u.Redacted(), Status: resp.StatusCode, Detail: errorDetail(body)}
	}
	if err := Decode(body, out); err != nil {
		return resp.StatusCode, &DecodeError{URL: u.Redacted(), Err: err}
	}
	return resp.StatusCode, nil
}

// Decode decodes a registry's JSON answer into out (a *ServerList or a
// *ServerResponse): one JSON value, nothing after it.
func Decode(body []byte, out any) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(out); err != nil {
		return err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return errors.New("data after the JSON value")
	}
	return nil
}

// errorDetail is the message of an error answer (RFC 9457 problem details
// as the registry sends them, or the body's start), printable and short.
func errorDetail(body []byte) string {
	var p struct {
		Title  string `json:"title"`
		Detail string `json:"detail"`
		Error  string `json:"error"`
	}
	s := string(body)
	if json.Unmarshal(body, &p) == nil {
		s = strings.TrimSpace(strings.Join([]string{p.Title, p.Detail, p.Error}, " "))
	}
	return printable(s, 200)
}

// printable keeps the printable characters of s, at most n runes.
func printable(s string, n int) string {
	var b strings.Builder
	for _, r := range s {
		if n == 0 {
			b.WriteString("…")
			break
		}
		if r == '\n' || r == '\t' {
			r = ' '
		}
		if r < ' ' || r == 0x7f || r == '\uFFFD' || (r >= 0x80 && r < 0xa0) {
			continue
		}
		b.WriteRune(r)
		n--
	}
	return strings.TrimSpace(b.String())
}

// Printable returns s (a value from a registry's answer) without control
// characters, at most n runes: safe to print on a terminal.
func Printable(s string, n int) string { return printable(s, n) }

// isLoopback reports whether host (no port) is localhost or a loopback IP.
func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.Unmap().IsLoopback()
}
