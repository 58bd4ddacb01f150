package docs

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// registryServers are the servers of the local MCP Registry the README
// test starts: official server.json documents (schema 2025-12-11), the
// README's example among them.
var registryServers = []string{`{
  "$schema": "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json",
  "name": "io.github.upstash/context7",
  "title": "Context7",
  "description": "Up-to-date code documentation for LLMs and AI code editors",
  "version": "1.0.31",
  "repository": {"url": "https://github.com/upstash/context7", "source": "github"},
  "websiteUrl": "https://context7.com",
  "packages": [{
    "registryType": "npm",
    "registryBaseUrl": "https://registry.npmjs.org",
    "identifier": "@upstash/context7-mcp",
    "version": "1.0.31",
    "transport": {"type": "stdio"},
    "environmentVariables": [{
      "name": "CONTEXT7_API_KEY",
      "description": "API key for higher rate limits",
      "isRequired": false,
      "isSecret": true
    }]
  }]
}`, `{
  "$schema": "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json",
  "name": "io.github.modelcontextprotocol/server-everything",
  "description": "An MCP server that exercises all the features of the MCP protocol",
  "version": "2026.8.31",
  "packages": [{
    "registryType": "npm",
    "identifier": "@modelcontextprotocol/server-everything",
    "version": "2026.8.31",
    "transport": {"type": "stdio"}
  }]
}`}

// startRegistry serves registryServers on 127.0.0.1 with the read
// endpoints of the MCP Registry API (v0.1, and v0 alike): GET /servers
// (?search= by name, ?version=latest), /servers/NAME,
// /servers/NAME/versions and /servers/NAME/versions/VERSION (NAME
// URL-encoded, "latest" allowed), answered with the official
// ServerResponse and ServerListResponse shapes.
func startRegistry(t *testing.T) string {
	t.Helper()
	type entry struct {
		name, version string
		doc           json.RawMessage
	}
	var entries []entry
	for _, s := range registryServers {
		var head struct{ Name, Version string }
		if err := json.Unmarshal([]byte(s), &head); err != nil {
			t.Fatal(err)
		}
		entries = append(entries, entry{head.Name, head.Version, json.RawMessage(s)})
	}
	response := func(e entry) map[string]any {
		return map[string]any{
			"server": e.doc,
			"_meta": map[string]any{"io.modelcontextprotocol.registry/official": map[string]any{
				"status": "active", "publishedAt": "2026-10-01T12:00:00Z", "updatedAt": "2026-10-01T12:00:00Z", "isLatest": true,
			}},
		}
	}
	reply := func(w http.ResponseWriter, status int, v any) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(v)
	}
	notFound := func(w http.ResponseWriter) {
		w.Header().Set("Content-Type", "application/problem+json")
		w.WriteHeader(http.StatusNotFound)
		_, _ = w.Write([]byte(`{"title":"Not Found","status":404,"detail":"Server not found"}`))
	}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		path := r.URL.Path
		var ok bool
		if path, ok = strings.CutPrefix(path, "/v0.1"); !ok {
			if path, ok = strings.CutPrefix(path, "/v0"); !ok {
				notFound(w)
				return
			}
		}
		if path == "/servers" || path == "/servers/" {
			q := strings.ToLower(r.URL.Query().Get("search"))
			list := []any{}
			for _, e := range entries {
				if strings.Contains(strings.ToLower(e.name), q) {
					list = append(list, response(e))
				}
			}
			reply(w, http.StatusOK, map[string]any{"servers": list, "metadata": map[string]any{"count": len(list)}})
			return
		}
		rest, ok := strings.CutPrefix(path, "/servers/")
		if !ok {
			notFound(w)
			return
		}
		name, version := rest, "latest"
		listVersions := false
		if n, v, ok := strings.Cut(rest, "/versions/"); ok {
			name, version = n, v
		} else if n, ok := strings.CutSuffix(rest, "/versions"); ok {
			name, listVersions = n, true
		}
		for _, e := range entries {
			if e.name != name {
				continue
			}
			switch {
			case listVersions:
				reply(w, http.StatusOK, map[string]any{"servers": []any{response(e)}, "metadata": map[string]any{"count": 1}})
			case version == "latest" || version == e.version:
				reply(w, http.StatusOK, response(e))
			default:
				notFound(w)
			}
			return
		}
		notFound(w)
	})
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL
}
