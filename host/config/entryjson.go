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

// serverJSON is one server of the mcpServers JSON shape that other MCP
// hosts use (`mcphost server add-json`).
type serverJSON struct {
	Type          string            `json:"type"`
	Command       string            `json:"command"`
	Args          []string          `json:"args"`
	Env           map[string]string `json:"env"`
	Cwd           string            `json:"cwd"`
	URL           string            `json:"url"`
	Headers       map[string]string `json:"headers"`
	HeadersHelper json.RawMessage   `json:"headersHelper"`
	OAuth         *struct {
		ClientID     string   `json:"clientId"`
		CallbackPort int      `json:"callbackPort"`
		Scopes       []string `json:"scopes"`
	} `json:"oauth"`
}

// The members each object of the shape may have (exactly so spelt).
var (
	serverJSONKeys = []string{"type", "command", "args", "env", "cwd", "url", "headers", "headersHelper", "oauth"}
	oauthJSONKeys  = []string{"clientId", "callbackPort", "scopes"}
)

// ServerEntryFromJSON reads one server in the mcpServers JSON shape:
//
//	{"type": "stdio", "command": "npx", "args": ["-y", "pkg"], "env": {"K": "V"}}
//	{"type": "http", "url": "https://…/mcp", "headers": {"K": "V"},
//	 "headersHelper": "/path/helper", "oauth": {"clientId": "…", "callbackPort": 8080}}
//
// "type" is stdio (the default when there is a command), http, sse or a
// plugin transport (ws). ${NAME} and ${NAME:-default} in the values are
// read from the environment, as those hosts read them: they are written as
// env() calls (ServerEntry.Expand). The JSON is read strictly: an unknown or
// duplicated member, a member spelt in another case, or trailing data is an
// error. A client secret is not taken from JSON (give --client-secret).
func ServerEntryFromJSON(name string, data []byte) (*ServerEntry, error) {
	if err := strictMembers(data, serverJSONKeys, ""); err != nil {
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
	var sj serverJSON
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&sj); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrServerJSON, err)
	}
	if dec.More() {
		return nil, fmt.Errorf("%w: data after the object", ErrServerJSON)
	}
	e := &ServerEntry{Name: name, Command: sj.Command, Args: sj.Args, Env: sj.Env, Cwd: sj.Cwd, URL: sj.URL, Headers: sj.Headers, Expand: true}
	switch {
	case sj.Type != "":
		e.Transport = sj.Type
	case sj.Command != "":
		e.Transport = TransportStdio
	case sj.URL != "":
		e.Transport = TransportFromURL(sj.URL)
	default:
		return nil, fmt.Errorf("%w: give \"command\" (stdio) or \"url\"", ErrServerJSON)
	}
	if e.Transport == TransportStdio {
		e.Transport = "" // the default: no attribute
	}
	if len(sj.HeadersHelper) > 0 && string(sj.HeadersHelper) != "null" {
		var one string
		if err := json.Unmarshal(sj.HeadersHelper, &one); err == nil {
			e.HeadersHelper = []string{one}
		} else if err := json.Unmarshal(sj.HeadersHelper, &e.HeadersHelper); err != nil {
			return nil, fmt.Errorf("%w: headersHelper must be a string or a list of strings", ErrServerJSON)
		}
	}
	if o := sj.OAuth; o != nil {
		e.OAuth = &OAuthEntry{ClientID: o.ClientID, CallbackPort: o.CallbackPort, Scopes: o.Scopes}
	}
	return e, nil
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
