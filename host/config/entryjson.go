package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/mcphost/mcphost/internal/rawjson"
)

// ErrServerJSON classifies what ServerEntryFromJSON refuses.
var ErrServerJSON = errors.New("invalid server JSON")

// The members of an add-json oauth object (exactly so spelt).
var oauthJSONKeys = []string{"clientId", "callbackPort", "scopes"}

// ServerEntryFromJSON reads one server in the mcpServers JSON shape:
//
//	{"type": "stdio", "command": "npx", "args": ["-y", "pkg"], "env": {"K": "V"}}
//	{"type": "http", "url": "https://…/mcp", "headers": {"K": "V"},
//	 "headersHelper": "/path/helper", "oauth": {"clientId": "…", "callbackPort": 8080}}
//
// "type" is stdio (the default when there is a command), http, sse or a
// plugin transport (ws); Gemini's httpUrl (streamable HTTP), envFile and
// disabled are read too. ${NAME}, ${NAME:-default} and ${env:NAME} in the
// values are read from the environment, as those hosts read them: they are
// written as env() calls (ServerEntry.Expand). The JSON is read strictly:
// an unknown or duplicated member, a member spelt in another case, or
// trailing data is an error. A client secret is not taken from JSON (give
// --client-secret); a literal secret in env or headers is an error (see
// ServerEntryFromJSONWith to store it).
func ServerEntryFromJSON(name string, data []byte) (*ServerEntry, error) {
	return ServerEntryFromJSONWith(name, data, EntryOptions{})
}

// ServerEntryFromJSONWith is ServerEntryFromJSON with the options of
// ServerEntryFromFields (opts.Format is EntryMCPServers).
func ServerEntryFromJSONWith(name string, data []byte, opts EntryOptions) (*ServerEntry, error) {
	if err := strictMembers(data, jsonEntryKeys, ""); err != nil {
		return nil, err
	}
	ms, _ := rawjson.Members(nil, data)
	for _, m := range ms {
		switch string(m.Key) {
		case "env", "headers":
			if err := strictMembers(m.Value, nil, string(m.Key)); err != nil {
				return nil, err
			}
		case "oauth":
			if err := strictMembers(m.Value, oauthJSONKeys, "oauth"); err != nil {
				return nil, err
			}
		}
	}
	var fields map[string]any
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&fields); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrServerJSON, err)
	}
	if dec.More() {
		return nil, fmt.Errorf("%w: data after the object", ErrServerJSON)
	}
	opts.Format = EntryMCPServers
	e, _, err := ServerEntryFromFields(name, fields, opts)
	return e, err
}

// strictMembers checks that data is an object without duplicated members
// and, if allowed is not nil, with only those members.
func strictMembers(data []byte, allowed []string, where string) error {
	ms, err := rawjson.Members(nil, data)
	if err != nil {
		if where != "" {
			return fmt.Errorf("%w: %s: %v", ErrServerJSON, where, err)
		}
		return fmt.Errorf("%w: %v", ErrServerJSON, err)
	}
	if allowed == nil {
		return nil
	}
	for _, m := range ms {
		if !slices.Contains(allowed, string(m.Key)) {
			in := ""
			if where != "" {
				in = " in " + where
			}
			hint := ""
			if strings.EqualFold(string(m.Key), "clientSecret") {
				hint = "; a client secret is given with --client-secret"
			}
			return fmt.Errorf("%w: unknown member %q%s (allowed: %s)%s", ErrServerJSON, m.Key, in, strings.Join(allowed, ", "), hint)
		}
	}
	return nil
}

// TransportFromURL is the transport a server URL implies: ws for ws:// and
// wss:// (the ws plugin), sse for an http(s) path ending in /sse, http for
// other http(s) URLs, and for any other scheme the plugin transport of
// that name (tcp for tcp://…). A URL without a scheme implies http.
func TransportFromURL(u string) string {
	lower := strings.ToLower(u)
	scheme, _, ok := strings.Cut(lower, "://")
	switch {
	case scheme == "ws" || scheme == "wss":
		return "ws"
	case ok && scheme != "http" && scheme != "https" && schemeRE.MatchString(scheme):
		return scheme
	case strings.HasSuffix(strings.SplitN(strings.SplitN(lower, "?", 2)[0], "#", 2)[0], "/sse"):
		return TransportSSE
	}
	return TransportHTTP
}

// schemeRE matches a URL scheme (RFC 3986, section 3.1).
var schemeRE = regexp.MustCompile(`^[a-z][a-z0-9+.-]*$`)
