package clientconf

import (
	"errors"
	"fmt"
	"net/url"
	"regexp"
)

// DefaultName is the name of the gateway's entry in a client's file.
const DefaultName = "mcphost"

// DefaultTokenEnv is the environment variable a client expands into the
// bearer token of an HTTP entry: the one `mcphost serve --http` reads.
const DefaultTokenEnv = "MCPHOST_SERVE_TOKEN"

// Entry is the gateway's entry in a client's configuration: a stdio
// command (Command, Args) or a streamable HTTP endpoint (URL) whose bearer
// token the client takes from the environment variable TokenEnv.
type Entry struct {
	// Name is the entry's key (DefaultName when empty).
	Name string
	// Command and Args start the gateway on stdio.
	Command string
	Args    []string
	// URL is the gateway's streamable HTTP endpoint (instead of Command).
	URL string
	// TokenEnv names the environment variable holding the bearer token of
	// URL, which the client expands when it connects: its value is never
	// written. Empty: no Authorization header.
	TokenEnv string
	// Env are environment variables (name, value) the client sets for the
	// stdio command: mcphost's own relocation variables, so that a client
	// started from elsewhere serves the same configuration.
	Env [][2]string
}

// ErrNoHTTP is returned for an HTTP entry in a client that cannot reach
// HTTP servers from its configuration file (Claude Desktop).
var ErrNoHTTP = errors.New("cannot reach an HTTP server from its configuration file")

// ErrBadEntry is returned for an entry that is neither stdio nor HTTP, or
// whose names cannot be written.
var ErrBadEntry = errors.New("invalid entry")

var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

func (e Entry) name() string {
	if e.Name == "" {
		return DefaultName
	}
	return e.Name
}

func (e Entry) validate(c Client) error {
	switch {
	case e.Command == "" && e.URL == "":
		return fmt.Errorf("%w: neither a command nor a URL", ErrBadEntry)
	case e.Command != "" && e.URL != "":
		return fmt.Errorf("%w: both a command and a URL", ErrBadEntry)
	case e.TokenEnv != "" && !envName.MatchString(e.TokenEnv):
		return fmt.Errorf("%w: %q is not an environment variable name", ErrBadEntry, e.TokenEnv)
	case e.URL != "" && !httpURL(e.URL):
		return fmt.Errorf("%w: %q is not an http:// or https:// URL", ErrBadEntry, e.URL)
	case !envNames(e.Env):
		return fmt.Errorf("%w: an env entry's name is not an environment variable name", ErrBadEntry)
	case e.URL != "" && len(e.Env) > 0:
		return fmt.Errorf("%w: environment variables go with a command", ErrBadEntry)
	case e.URL != "" && c.ID == "claude-desktop":
		return fmt.Errorf("%s %w: add the gateway's URL in Claude Desktop under Settings > Connectors, or connect it over stdio (the default, without --http)", c.Name, ErrNoHTTP)
	}
	return nil
}

func envNames(env [][2]string) bool {
	for _, kv := range env {
		if !envName.MatchString(kv[0]) {
			return false
		}
	}
	return true
}

func httpURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}

// field is one member of a JSON object written in order.
type field struct {
	key string
	val any // string, []string, object
}

// object is a JSON object whose members keep their order.
type object []field

// jsonEntry is e as client c writes it in its JSON file.
func (e Entry) jsonEntry(c Client) object {
	if e.Command != "" {
		args := append([]string{}, e.Args...)
		o := object{{"command", e.Command}, {"args", args}}
		switch c.ID {
		case "claude-code", "vscode":
			o = append(object{{"type", "stdio"}}, o...)
		}
		if len(e.Env) > 0 {
			var env object
			for _, kv := range e.Env {
				env = append(env, field{kv[0], kv[1]})
			}
			o = append(o, field{"env", env})
		}
		return o
	}
	var headers object
	if e.TokenEnv != "" {
		headers = object{{"Authorization", "Bearer " + expandRef(c, e.TokenEnv)}}
	}
	var o object
	switch c.ID {
	case "claude-code", "vscode":
		o = object{{"type", "http"}, {"url", e.URL}}
	case "gemini":
		// Gemini CLI: "url" is SSE, "httpUrl" streamable HTTP.
		o = object{{"httpUrl", e.URL}}
	default:
		o = object{{"url", e.URL}}
	}
	if headers != nil {
		o = append(o, field{"headers", headers})
	}
	return o
}

// expandRef is a reference to the environment variable name in client c's
// own expansion syntax.
func expandRef(c Client, name string) string {
	switch c.ID {
	case "cursor", "vscode":
		return "${env:" + name + "}"
	}
	// Claude Code ${VAR}; Gemini CLI $VAR or ${VAR}.
	return "${" + name + "}"
}
