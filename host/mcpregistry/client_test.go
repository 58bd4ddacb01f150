package mcpregistry_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcphost/mcphost/host/mcpregistry"
	"github.com/mcphost/mcphost/host/mcpregistry/registrytest"
)

func newClient(t *testing.T, base string, opts ...mcpregistry.Option) *mcpregistry.Client {
	t.Helper()
	c, err := mcpregistry.New(base, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestSearch: the search lists the latest version of each server whose
// name contains the query, and pages with the cursor.
func TestSearch(t *testing.T) {
	t.Parallel()
	reg := registrytest.Load(t, "testdata/servers.json")
	c := newClient(t, reg.URL+"/")
	for _, tc := range []struct {
		query string
		limit int
		want  []string
		next  bool
	}{
		{"brave", 0, []string{"io.modelcontextprotocol.anonymous/brave-search@1.0.2"}, false},
		{"EXAMPLE", 0, []string{"io.github.example/weather-mcp@0.5.0", "io.github.example/database-manager@3.1.0", "io.example.mcphost/tenant-api@2.1.0"}, false},
		{"example", 2, []string{"io.github.example/weather-mcp@0.5.0", "io.github.example/database-manager@3.1.0"}, true},
		{"nothing-like-it", 0, nil, false},
	} {
		list, err := c.Search(context.Background(), tc.query, mcpregistry.SearchOptions{Limit: tc.limit})
		if err != nil {
			t.Fatalf("%q: %v", tc.query, err)
		}
		var got []string
		for _, s := range list.Servers {
			got = append(got, s.Server.Name+"@"+s.Server.Version)
		}
		if strings.Join(got, " ") != strings.Join(tc.want, " ") {
			t.Errorf("search %q: got %q, want %q", tc.query, got, tc.want)
		}
		if (list.Metadata.NextCursor != "") != tc.next {
			t.Errorf("search %q: next cursor %q", tc.query, list.Metadata.NextCursor)
		}
		if tc.next {
			more, err := c.Search(context.Background(), tc.query, mcpregistry.SearchOptions{Limit: tc.limit, Cursor: list.Metadata.NextCursor})
			if err != nil || len(more.Servers) != 1 || more.Servers[0].Server.Name != "io.example.mcphost/tenant-api" {
				t.Errorf("next page: %+v, %v", more, err)
			}
		}
	}
}

// TestServerVersions: latest ("" or "latest") and an explicit version;
// the name's "/" is sent escaped in one path segment.
func TestServerVersions(t *testing.T) {
	t.Parallel()
	reg := registrytest.Load(t, "testdata/servers.json")
	c := newClient(t, reg.URL)
	for _, tc := range []struct{ version, want string }{
		{"", "1.0.2"}, {"latest", "1.0.2"}, {"1.0.1", "1.0.1"},
	} {
		s, err := c.Server(context.Background(), "io.modelcontextprotocol.anonymous/brave-search", tc.version)
		if err != nil {
			t.Fatalf("%q: %v", tc.version, err)
		}
		if s.Server.Version != tc.want || s.Meta.Official == nil || s.Meta.Official.Status != mcpregistry.StatusActive {
			t.Errorf("version %q: got %+v", tc.version, s)
		}
		if p := s.Server.Packages[0]; p.EnvironmentVariables[0].Name != "BRAVE_API_KEY" || !p.EnvironmentVariables[0].IsSecret {
			t.Errorf("package: %+v", p)
		}
	}
}

// TestErrors: each failure is an error of its own type, never the raw body.
func TestErrors(t *testing.T) {
	t.Parallel()
	reg := registrytest.Load(t, "testdata/servers.json")
	ctx := context.Background()

	c := newClient(t, reg.URL)
	_, err := c.Server(ctx, "io.github.nobody/none", "")
	var nf *mcpregistry.NotFoundError
	if !errors.As(err, &nf) || err.Error() != "no server io.github.nobody/none in "+reg.URL {
		t.Errorf("404: %v", err)
	}
	_, err = c.Server(ctx, "io.modelcontextprotocol.anonymous/brave-search", "9.9.9")
	if !errors.As(err, &nf) || !strings.Contains(err.Error(), "version 9.9.9") {
		t.Errorf("404 of a version: %v", err)
	}

	for _, tc := range []struct {
		name    string
		handler http.HandlerFunc
		opts    []mcpregistry.Option
		check   func(error) bool
	}{
		{"bad JSON", func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte(`{"server": [`)) },
			nil, func(err error) bool { var d *mcpregistry.DecodeError; return errors.As(err, &d) }},
		{"HTML", func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte(`<html>login</html>`)) },
			nil, func(err error) bool { var d *mcpregistry.DecodeError; return errors.As(err, &d) }},
		{"two values", func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte(`{"server":{"name":"a/b"}} {}`)) },
			nil, func(err error) bool { var d *mcpregistry.DecodeError; return errors.As(err, &d) }},
		{"no name", func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte(`{"server":{}}`)) },
			nil, func(err error) bool { var d *mcpregistry.DecodeError; return errors.As(err, &d) }},
		{"too large", func(w http.ResponseWriter, _ *http.Request) {
			w.Write([]byte(`{"server":{"name":"a/b","description":"` + strings.Repeat("x", 2000) + `"}}`))
		}, []mcpregistry.Option{mcpregistry.WithMaxBytes(1000)}, func(err error) bool { return errors.Is(err, mcpregistry.ErrTooLarge) }},
		{"500", func(w http.ResponseWriter, _ *http.Request) {
			w.WriteHeader(http.StatusInternalServerError)
			w.Write([]byte(`{"title":"Internal\u001b[31m error"}`))
		}, nil, func(err error) bool {
			var s *mcpregistry.StatusError
			return errors.As(err, &s) && s.Status == 500 && s.Detail == "Internal[31m error"
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reg := registrytest.Load(t, "testdata/servers.json")
			reg.Override = tc.handler
			c := newClient(t, reg.URL, tc.opts...)
			_, err := c.Server(ctx, "a/b", "")
			if err == nil || !tc.check(err) {
				t.Errorf("got %T %v", err, err)
			}
		})
	}
}

// TestNewURL: only https URLs (http for loopback) without credentials; the default is the
// official registry.
func TestNewURL(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{"", mcpregistry.DefaultURL},
		{"https://mirror.example.com/registry/", "https://mirror.example.com/registry"},
		{"ftp://x", ""},
		{"mirror.example.com", ""},
		{"https://user:pw@mirror.example.com", ""},
		// Plain http only to a loopback host: the answer decides what runs.
		{"http://mirror.example.com", ""},
		{"http://10.0.0.5:8080", ""},
		{"http://127.0.0.1:8080", "http://127.0.0.1:8080"},
		{"http://[::1]:8080/r", "http://[::1]:8080/r"},
		{"http://localhost:8080", "http://localhost:8080"},
	} {
		c, err := mcpregistry.New(tc.in)
		switch {
		case tc.want == "" && err == nil:
			t.Errorf("%q: accepted", tc.in)
		case tc.want != "" && (err != nil || c.URL() != tc.want):
			t.Errorf("%q: %v %v", tc.in, c, err)
		}
		if err != nil && strings.Contains(err.Error(), "pw") {
			t.Errorf("%q: the error shows the password: %v", tc.in, err)
		}
	}
}

// TestTimeout: a registry that does not answer fails the request when the
// context ends (the client's own bound is DefaultTimeout).
func TestTimeout(t *testing.T) {
	t.Parallel()
	reg := registrytest.Load(t, "testdata/servers.json")
	reg.Override = func(_ http.ResponseWriter, r *http.Request) { <-r.Context().Done() }
	c := newClient(t, reg.URL)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err := c.Search(ctx, "x", mcpregistry.SearchOptions{})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("got %v", err)
	}
}
