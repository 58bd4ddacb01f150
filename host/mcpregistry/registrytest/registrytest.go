// Package registrytest serves the MCP Registry API v0.1 on 127.0.0.1 for
// tests: GET /v0.1/servers (search, version=latest, limit, cursor) and GET
// /v0.1/servers/{serverName}/versions/{version|latest}, from documents in
// the API's own shapes.
//
// A stand-in, not the real registry: the official one
// (github.com/modelcontextprotocol/registry) needs PostgreSQL and publisher
// authentication to hold servers, which the tests cannot run here. Its
// answers are built from the registry's published examples (see
// ../testdata/README.md), and its routes and parameters follow its
// openapi.yaml.
package registrytest

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
)

// Server is a test registry.
type Server struct {
	*httptest.Server
	servers []json.RawMessage
	names   []string
	version []string
	latest  []bool
	// Requests counts the requests served.
	Requests atomic.Int64
	// Override, if set, answers every request instead.
	Override http.HandlerFunc
}

// Load returns a test registry serving the servers of the ServerList
// document at path, closed when the test ends.
func Load(t testing.TB, path string) *Server {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var list struct {
		Servers []json.RawMessage `json:"servers"`
	}
	if err := json.Unmarshal(b, &list); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	s := &Server{}
	for _, raw := range list.Servers {
		var e struct {
			Server struct{ Name, Version string } `json:"server"`
			Meta   struct {
				Official struct {
					IsLatest bool `json:"isLatest"`
				} `json:"io.modelcontextprotocol.registry/official"`
			} `json:"_meta"`
		}
		if err := json.Unmarshal(raw, &e); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		s.servers = append(s.servers, raw)
		s.names = append(s.names, e.Server.Name)
		s.version = append(s.version, e.Server.Version)
		s.latest = append(s.latest, e.Meta.Official.IsLatest)
	}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	s.Requests.Add(1)
	if s.Override != nil {
		s.Override(w, r)
		return
	}
	if r.Method != http.MethodGet {
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	const prefix = "/v0.1/servers"
	p := r.URL.EscapedPath()
	switch {
	case p == prefix:
		s.list(w, r)
	case strings.HasPrefix(p, prefix+"/"):
		rest := strings.TrimPrefix(p, prefix+"/")
		name, version, ok := strings.Cut(rest, "/versions/")
		if !ok {
			problem(w, http.StatusNotFound, "Not Found")
			return
		}
		name, _ = url.PathUnescape(name)
		version, _ = url.PathUnescape(version)
		for i := range s.servers {
			if s.names[i] == name && (s.version[i] == version || version == "latest" && s.latest[i]) {
				w.Header().Set("Content-Type", "application/json")
				w.Write(s.servers[i])
				return
			}
		}
		problem(w, http.StatusNotFound, "Server not found")
	default:
		problem(w, http.StatusNotFound, "Not Found")
	}
}

func (s *Server) list(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	search := strings.ToLower(q.Get("search"))
	latestOnly := q.Get("version") == "latest"
	limit := 30
	if l := q.Get("limit"); l != "" {
		n, err := strconv.Atoi(l)
		if err != nil || n < 1 || n > 100 {
			problem(w, http.StatusUnprocessableEntity, "limit must be 1..100")
			return
		}
		limit = n
	}
	start := 0
	if c := q.Get("cursor"); c != "" {
		n, err := strconv.Atoi(c)
		if err != nil {
			problem(w, http.StatusBadRequest, "bad cursor")
			return
		}
		start = n
	}
	var page []json.RawMessage
	next := ""
	for i := start; i < len(s.servers); i++ {
		if latestOnly && !s.latest[i] || !strings.Contains(strings.ToLower(s.names[i]), search) {
			continue
		}
		if len(page) == limit {
			next = strconv.Itoa(i)
			break
		}
		page = append(page, s.servers[i])
	}
	out := map[string]any{"servers": page, "metadata": map[string]any{"count": len(page)}}
	if page == nil {
		out["servers"] = []any{}
	}
	if next != "" {
		out["metadata"].(map[string]any)["nextCursor"] = next
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(out)
}

// problem answers as the registry does: RFC 9457 problem details.
func problem(w http.ResponseWriter, status int, title string) {
	w.Header().Set("Content-Type", "application/problem+json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]any{"title": title, "status": status})
}
