package config

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/mcphost/mcphost/host/redact"
)

// The mapping of one server entry of another MCP client's configuration
// (Claude Code, Claude Desktop, Cursor, VS Code, Gemini CLI, Codex) to a
// server block: `mcphost import` and `mcphost server add-json`.

// The formats of server entries (what their keys mean); the same names as
// clientconf's Format* constants.
const (
	// EntryMCPServers is the mcpServers entry of Claude Code, Claude
	// Desktop and Cursor (and of `server add-json`).
	EntryMCPServers = "mcpServers"
	// EntryVSCode is an entry of VS Code's servers object.
	EntryVSCode = "vscode"
	// EntryGemini is an mcpServers entry of Gemini CLI (url is SSE,
	// httpUrl streamable HTTP).
	EntryGemini = "gemini"
	// EntryCodex is a [mcp_servers.NAME] table of Codex's config.toml.
	EntryCodex = "codex"
	// EntryClaudeDesktop is an mcpServers entry of Claude Desktop's
	// claude_desktop_config.json, which does not expand ${NAME}: its
	// values are literal text.
	EntryClaudeDesktop = "claude-desktop"
)

// EntryOptions says how ServerEntryFromFields reads an entry.
type EntryOptions struct {
	// Format is one of the Entry* formats ("" is EntryMCPServers).
	Format string
	// WorkspaceDir replaces VS Code's ${workspaceFolder}; when empty,
	// ${workspaceFolder} is a problem.
	WorkspaceDir string
	// StoreSecret is given each literal secret of the entry (where names
	// it: "env.API_KEY", "headers.Authorization") and returns the
	// reference written in its place (secret("…") of the stored value).
	// When nil, a literal secret is a problem: it is never written as text.
	StoreSecret func(where, value string) (SecretRef, error)
	// GOOS is the operating system the block is for (runtime.GOOS): VS
	// Code's ${userHome} is ${USERPROFILE} on windows, ${HOME} elsewhere.
	GOOS string
}

// EntryProblem is one thing of an entry that mcphost does not import.
type EntryProblem struct {
	// Key is the member concerned ("env.API_KEY", "includeTools"); "" for
	// the entry as a whole.
	Key string
	// What is wrong, and Fix what to do about it.
	What, Fix string
}

// EntryError lists what keeps an entry from being imported. It matches
// ErrServerJSON (errors.Is).
type EntryError struct {
	Problems []EntryProblem
}

func (e *EntryError) Error() string {
	var b strings.Builder
	for i, p := range e.Problems {
		if i > 0 {
			b.WriteString("; ")
		}
		if p.Key != "" {
			b.WriteString(p.Key + ": ")
		}
		b.WriteString(p.What)
		if p.Fix != "" {
			b.WriteString(" (" + p.Fix + ")")
		}
	}
	return b.String()
}

// Unwrap classifies the error as ErrServerJSON.
func (e *EntryError) Unwrap() error { return ErrServerJSON }

// jsonEntryKeys are the members ServerEntryFromFields reads from a JSON
// entry (mcpServers, VS Code, Gemini); codexEntryKeys from a Codex table.
var (
	jsonEntryKeys  = []string{"type", "command", "args", "env", "cwd", "url", "httpUrl", "headers", "headersHelper", "oauth", "envFile", "disabled"}
	codexEntryKeys = []string{"command", "args", "env", "env_vars", "cwd", "url", "http_headers", "env_http_headers", "bearer_token_env_var", "enabled"}
)

// ignoredKeys are members that only tune the client or grant it more trust
// than mcphost does: an entry with them is imported without them (noted).
var ignoredKeys = map[string]string{
	"description":         "a description",
	"trust":               "Gemini's trust skips its confirmations; mcphost asks as its permissions say",
	"timeout":             "the client's timeout; set connect_timeout or tool_timeout in the block if needed",
	"autoApprove":         "the client's own approvals; mcphost asks as its permissions say",
	"alwaysAllow":         "the client's own approvals; mcphost asks as its permissions say",
	"startup_timeout_sec": "Codex's startup timeout; set connect_timeout in the block if needed",
	"startup_timeout_ms":  "Codex's startup timeout; set connect_timeout in the block if needed",
	"tool_timeout_sec":    "Codex's tool timeout; set tool_timeout in the block if needed",
}

// unsupportedKeys are members whose meaning mcphost cannot keep: an entry
// with them is not imported (dropping them would change what it does).
var unsupportedKeys = map[string]string{
	"includeTools":     "a tool filter of the client",
	"excludeTools":     "a tool filter of the client",
	"enabled_tools":    "a tool filter of the client",
	"disabled_tools":   "a tool filter of the client",
	"authProviderType": "Gemini's own authentication provider",
	"dev":              "VS Code's development mode",
	"sandbox":          "the client's sandbox",
}

// IsSecretName reports whether name, an environment variable or a header,
// holds a secret (GITHUB_TOKEN, DB_PASSWORD, X-API-Key, Authorization). It
// is redact.SecretName: one heuristic for import, the logs and the ask
// prompt.
func IsSecretName(name string) bool { return redact.SecretName(name) }

// plainValueRE matches values that are no secret whatever their name: a
// number, true or false, a file's path (TOKENIZERS_PARALLELISM=false,
// GOOGLE_APPLICATION_CREDENTIALS=/path/key.json).
var plainValueRE = regexp.MustCompile(`^(?i:[0-9]+|true|false|(/|~/|[A-Za-z]:\\)[^\s]*)$`)

// refRE matches every ${…} reference of a client's value.
var refRE = regexp.MustCompile(`\$\{([^}]*)\}`)

// clientVars are the predefined variables of VS Code and Cursor (not
// environment variables, though spelt like them).
var clientVars = map[string]bool{
	"userHome": true, "workspaceFolder": true, "workspaceFolderBasename": true, "workspaceRoot": true,
	"pathSeparator": true, "/": true, "cwd": true, "file": true, "fileBasename": true, "fileDirname": true,
	"relativeFile": true, "execPath": true, "lineNumber": true, "selectedText": true,
}

// bareVarRE matches Gemini's $NAME (not ${NAME}).
var bareVarRE = regexp.MustCompile(`\$([A-Za-z_][A-Za-z0-9_]*)`)

// ServerEntryFromFields maps one server entry of another client's
// configuration, as decoded JSON (or TOML) members, to a server block.
// ${NAME}, ${NAME:-default} and VS Code's ${env:NAME} become env() calls
// (ServerEntry.Expand); a literal secret (an env variable or header whose
// name says so, or a value shaped like a token) goes to opts.StoreSecret;
// disabled (enabled = false in Codex) is kept. Everything it cannot keep
// (${input:…}, an unknown member, a value of the wrong type) is an
// *EntryError listing each problem with its fix; notes say what was left
// out on purpose.
func ServerEntryFromFields(name string, fields map[string]any, opts EntryOptions) (e *ServerEntry, notes []string, err error) {
	m := &entryMapper{opts: opts, fields: fields}
	e = &ServerEntry{Name: name, Expand: opts.Format != EntryClaudeDesktop}
	if opts.Format == EntryCodex {
		m.codex(e)
	} else {
		m.json(e)
	}
	for _, k := range slices.Sorted(maps.Keys(fields)) {
		if why, ok := ignoredKeys[k]; ok {
			m.notes = append(m.notes, fmt.Sprintf("%s not imported (%s)", k, why))
			continue
		}
		if m.known[k] {
			continue
		}
		if what, ok := unsupportedKeys[k]; ok {
			m.problem(k, what+" cannot be imported", "remove "+k+" from the entry to import it without, or add the server with `mcphost server add`")
			continue
		}
		m.problem(k, "unknown member", "remove it, or add the server with `mcphost server add`")
	}
	if len(m.problems) > 0 {
		return nil, m.notes, &EntryError{Problems: m.problems}
	}
	if e.Transport == TransportStdio {
		e.Transport = "" // the default: no attribute
	}
	return e, m.notes, nil
}

// entryMapper reads one entry's fields, collecting problems.
type entryMapper struct {
	opts     EntryOptions
	fields   map[string]any
	known    map[string]bool
	problems []EntryProblem
	notes    []string
}

func (m *entryMapper) problem(key, what, fix string) {
	m.problems = append(m.problems, EntryProblem{Key: key, What: what, Fix: fix})
}

// note adds a note once.
func (m *entryMapper) note(n string) {
	if !slices.Contains(m.notes, n) {
		m.notes = append(m.notes, n)
	}
}

// get returns member k, marking it read.
func (m *entryMapper) get(k string) (any, bool) {
	if m.known == nil {
		m.known = map[string]bool{}
	}
	m.known[k] = true
	v, ok := m.fields[k]
	return v, ok && v != nil
}

// str reads a string member, converted (value).
func (m *entryMapper) str(k string) string {
	v, ok := m.get(k)
	if !ok {
		return ""
	}
	s, isStr := v.(string)
	if !isStr {
		m.problem(k, fmt.Sprintf("a %T where a string belongs", v), "write a string")
		return ""
	}
	return m.value(k, s)
}

// rawStr reads a string member as it is (a variable name).
func (m *entryMapper) rawStr(k string) string {
	v, ok := m.get(k)
	if !ok {
		return ""
	}
	s, isStr := v.(string)
	if !isStr {
		m.problem(k, fmt.Sprintf("a %T where a string belongs", v), "write a string")
	}
	return s
}

func (m *entryMapper) boolean(k string) (value, set bool) {
	v, ok := m.get(k)
	if !ok {
		return false, false
	}
	b, isBool := v.(bool)
	if !isBool {
		m.problem(k, fmt.Sprintf("a %T where true or false belongs", v), "write true or false")
	}
	return b, isBool
}

// list reads a list of strings; conv converts its values.
func (m *entryMapper) list(k string, conv bool) []string {
	v, ok := m.get(k)
	if !ok {
		return nil
	}
	items, isList := v.([]any)
	if !isList {
		m.problem(k, fmt.Sprintf("a %T where a list of strings belongs", v), "write a list of strings")
		return nil
	}
	out := make([]string, 0, len(items))
	for i, it := range items {
		where := fmt.Sprintf("%s[%d]", k, i)
		s, isStr := it.(string)
		if !isStr {
			m.problem(where, fmt.Sprintf("a %T where a string belongs", it), "write a string")
			continue
		}
		if conv {
			s = m.value(where, s)
			if looksLikeToken(m.literalPart(s)) {
				m.problem(where, "looks like a token: mcphost does not write a secret into args or a URL", "pass it in an env variable and write ${NAME} in its place")
			}
		}
		out = append(out, s)
	}
	return out
}

// object reads an object of strings; secret values (by name or shape) go
// to StoreSecret, returned apart.
func (m *entryMapper) object(k string, secrets bool) (plain map[string]string, secret map[string]SecretRef) {
	v, ok := m.get(k)
	if !ok {
		return nil, nil
	}
	obj, isObj := v.(map[string]any)
	if !isObj {
		m.problem(k, fmt.Sprintf("a %T where an object of strings belongs", v), "write an object of strings")
		return nil, nil
	}
	for _, name := range slices.Sorted(maps.Keys(obj)) {
		where := k + "." + name
		s, isStr := obj[name].(string)
		if !isStr {
			if f, isNum := obj[name].(float64); isNum {
				s = fmt.Sprint(f)
			} else if b, isBool := obj[name].(bool); isBool {
				s = fmt.Sprint(b)
			} else {
				m.problem(where, fmt.Sprintf("a %T where a string belongs", obj[name]), "write a string")
				continue
			}
		}
		s = m.value(where, s)
		if secrets && m.isSecret(name, s) {
			if ref, ok := m.secret(where, s); ok {
				if secret == nil {
					secret = map[string]SecretRef{}
				}
				secret[name] = ref
			}
			continue
		}
		if plain == nil {
			plain = map[string]string{}
		}
		plain[name] = s
	}
	return plain, secret
}

// isSecret reports whether s, the value of name, holds a literal secret.
func (m *entryMapper) isSecret(name, s string) bool {
	lit := m.literalPart(s)
	if lit == "" {
		return false
	}
	if looksLikeToken(lit) {
		return true
	}
	if !IsSecretName(name) || plainValueRE.MatchString(lit) {
		return false
	}
	// "Bearer ${TOKEN}": the secret is the variable's.
	for _, scheme := range []string{"bearer", "basic", "token"} {
		if strings.EqualFold(lit, scheme) {
			return false
		}
	}
	return true
}

// secret stores the literal secret s (where names it).
func (m *entryMapper) secret(where, s string) (SecretRef, bool) {
	if m.expands() && refRE.MatchString(s) {
		m.problem(where, "a secret written partly as text and partly from variables", "put the whole value in one variable and write ${NAME}")
		return SecretRef{}, false
	}
	if m.opts.StoreSecret == nil {
		m.problem(where, "a secret written as text: it cannot go into this file", "put it in an environment variable and write ${NAME} in its place, or import into the local or user scope")
		return SecretRef{}, false
	}
	ref, err := m.opts.StoreSecret(where, s)
	if err != nil {
		m.problem(where, "the secret could not be stored: "+err.Error(), "")
		return SecretRef{}, false
	}
	return ref, true
}

// literalPart is s without its ${…} references, trimmed.
func literalPart(s string) string {
	return strings.TrimSpace(refRE.ReplaceAllString(s, ""))
}

// expands reports whether the client expands ${…} in its values (every
// client but Claude Desktop).
func (m *entryMapper) expands() bool { return m.opts.Format != EntryClaudeDesktop }

// literalPart is the text of s that is literal for the client: without
// its ${…} references, unless the client does not expand them.
func (m *entryMapper) literalPart(s string) string {
	if !m.expands() {
		return strings.TrimSpace(s)
	}
	return literalPart(s)
}

// looksLikeToken reports whether s has the shape of a credential.
func looksLikeToken(s string) bool { return s != "" && redact.String(s) != s }

// value converts the client's variables in s to ${NAME} (what Expand
// writes as env()); what cannot be converted is a problem.
func (m *entryMapper) value(where, s string) string {
	if !m.expands() {
		// Claude Desktop passes ${…} on as text: so does the block
		// (Expand is off, the writer escapes it).
		if refRE.MatchString(s) {
			m.note(fmt.Sprintf("%s: Claude Desktop does not expand ${NAME}: %q is kept as literal text", where, s))
		}
		return s
	}
	if m.opts.Format == EntryGemini {
		// Gemini CLI expands $NAME too.
		s = bareVarRE.ReplaceAllStringFunc(s, func(v string) string { return "${" + v[1:] + "}" })
	}
	return refRE.ReplaceAllStringFunc(s, func(ref string) string {
		inner := ref[2 : len(ref)-1]
		switch {
		case clientVars[inner]:
			switch {
			case inner == "userHome" && m.opts.GOOS == "windows":
				return "${USERPROFILE}"
			case inner == "userHome":
				return "${HOME}"
			case inner == "workspaceFolder" && m.opts.WorkspaceDir != "":
				return m.opts.WorkspaceDir
			}
			m.problem(where, ref+" is a variable of the client that mcphost does not know here", "replace it with its value or ${NAME} of an environment variable")
			return ref
		case varRE.FindString(ref) == ref:
			return ref
		case strings.HasPrefix(inner, "env:") && ValidEnvName(inner[4:]):
			return "${" + inner[4:] + "}"
		case strings.HasPrefix(inner, "input:"):
			m.problem(where, ref+" is a value VS Code prompts for; mcphost does not prompt", "put the value in an environment variable and write ${NAME} in its place, then import again")
		default:
			m.problem(where, ref+" is a variable of the client that mcphost does not know", "replace it with its value or ${NAME} of an environment variable")
		}
		return ref
	})
}

// json reads an entry of mcpServers, VS Code or Gemini.
func (m *entryMapper) json(e *ServerEntry) {
	typ := m.rawStr("type")
	e.Command = m.str("command")
	e.Args = m.list("args", true)
	e.Env, e.SecretEnv = m.object("env", true)
	e.Cwd = m.str("cwd")
	e.EnvFile = m.str("envFile")
	url, httpURL := m.str("url"), m.str("httpUrl")
	e.Headers, e.SecretHeaders = m.object("headers", true)
	if d, ok := m.boolean("disabled"); ok {
		e.Disabled = d
	}
	for _, u := range []string{url, httpURL} {
		if looksLikeToken(m.literalPart(u)) {
			m.problem("url", "has a token in it: mcphost does not write a secret into a URL", "send it in a header from ${NAME} instead")
		}
	}
	if v, ok := m.get("headersHelper"); ok {
		switch h := v.(type) {
		case string:
			e.HeadersHelper = m.shellCommand("headersHelper", m.value("headersHelper", h))
		default:
			e.HeadersHelper = m.list("headersHelper", true)
		}
	}
	if v, ok := m.get("oauth"); ok {
		m.oauth(e, v)
	}
	switch {
	case httpURL != "" && url != "":
		m.problem("httpUrl", "both url and httpUrl", "keep one")
	case httpURL != "":
		e.URL, e.Transport = httpURL, TransportHTTP
	case url != "":
		e.URL = url
		if m.opts.Format == EntryGemini {
			e.Transport = TransportSSE
		} else {
			e.Transport = TransportFromURL(url)
		}
	}
	switch strings.ToLower(typ) {
	case "":
	case "stdio":
		e.Transport = TransportStdio
	case "http", "streamable-http", "streamablehttp", "streamable_http":
		e.Transport = TransportHTTP
	case "sse":
		e.Transport = TransportSSE
	default:
		if m.opts.Format != EntryMCPServers && m.opts.Format != "" {
			m.problem("type", fmt.Sprintf("unknown type %q", typ), "use stdio, http or sse")
		}
		e.Transport = typ // a plugin transport (ws): the loader checks it
	}
	m.shape(e)
}

// plainCommandRE matches a command that a shell runs as one program with
// no arguments: no space, quote, variable, glob or operator in it.
var plainCommandRE = regexp.MustCompile(`^[A-Za-z0-9_./:\\+@%,=-]+$`)

// shellCommand maps cmd, a command line the client runs through a shell
// (Claude Code's headersHelper), to a program and its arguments: a plain
// program path as it is, anything else as ["sh", "-c", cmd], which runs
// it as the client does. On Windows, where there is no sh to rely on, it is
// a problem.
func (m *entryMapper) shellCommand(key, cmd string) []string {
	if lit := literalPart(cmd); lit == "" || plainCommandRE.MatchString(lit) {
		return []string{cmd}
	}
	if m.opts.GOOS == "windows" {
		m.problem(key, "a shell command line, which mcphost does not run through a shell on Windows", "write the helper as a list [program, args…], or add the server with `mcphost server add --header-helper`")
		return nil
	}
	m.note(key + " is a shell command: imported as sh -c, as Claude Code runs it")
	return []string{"sh", "-c", cmd}
}

// oauth reads Claude Code's oauth member.
func (m *entryMapper) oauth(e *ServerEntry, v any) {
	obj, ok := v.(map[string]any)
	if !ok || m.opts.Format == EntryGemini {
		m.problem("oauth", "an oauth setting mcphost cannot read", "remove it: mcphost discovers the server's authorization itself, or give --client-id with `mcphost server add`")
		return
	}
	sub := &entryMapper{opts: m.opts, fields: obj}
	o := &OAuthEntry{ClientID: sub.str("clientId"), Scopes: sub.list("scopes", false)}
	if p, ok := sub.get("callbackPort"); ok {
		if f, isNum := p.(float64); isNum && f == float64(int(f)) && f > 0 && f < 65536 {
			o.CallbackPort = int(f)
		} else {
			sub.problem("callbackPort", "not a port number", "write a number from 1 to 65535")
		}
	}
	for k := range obj {
		if !sub.known[k] {
			sub.problem(k, "unknown member", "remove it; a client secret is given with --client-secret of `mcphost server add`")
		}
	}
	for _, p := range sub.problems {
		p.Key = "oauth." + p.Key
		m.problems = append(m.problems, p)
	}
	e.OAuth = o
}

// codex reads a [mcp_servers.NAME] table of Codex.
func (m *entryMapper) codex(e *ServerEntry) {
	e.Command = m.str("command")
	e.Args = m.list("args", true)
	e.Env, e.SecretEnv = m.object("env", true)
	e.Cwd = m.str("cwd")
	for _, v := range m.list("env_vars", false) {
		if !ValidEnvName(v) {
			m.problem("env_vars", fmt.Sprintf("%q is not a variable name", v), "")
			continue
		}
		e.InheritEnv = append(e.InheritEnv, v)
	}
	if u := m.str("url"); u != "" {
		e.URL, e.Transport = u, TransportHTTP
		if looksLikeToken(literalPart(u)) {
			m.problem("url", "has a token in it: mcphost does not write a secret into a URL", "send it in a header from ${NAME} instead")
		}
	}
	e.Headers, e.SecretHeaders = m.object("http_headers", true)
	fromEnv, _ := m.object("env_http_headers", false)
	for h, v := range fromEnv {
		if !ValidEnvName(v) {
			m.problem("env_http_headers."+h, fmt.Sprintf("%q is not a variable name", v), "")
			continue
		}
		if e.Headers == nil {
			e.Headers = map[string]string{}
		}
		e.Headers[h] = "${" + v + "}"
	}
	if v := m.rawStr("bearer_token_env_var"); v != "" {
		if !ValidEnvName(v) {
			m.problem("bearer_token_env_var", fmt.Sprintf("%q is not a variable name", v), "")
		} else {
			if e.Headers == nil {
				e.Headers = map[string]string{}
			}
			e.Headers["Authorization"] = "Bearer ${" + v + "}"
		}
	}
	if en, ok := m.boolean("enabled"); ok {
		e.Disabled = !en
	}
	if e.URL == "" {
		e.Transport = TransportStdio
	}
	m.shape(e)
}

// shape checks that the entry is a stdio or a remote server, not both.
func (m *entryMapper) shape(e *ServerEntry) {
	remote := e.URL != ""
	switch {
	case e.Command == "" && !remote:
		m.problem("", `neither a command nor a url: give "command" (stdio) or "url"`, "")
	case e.Command != "" && remote:
		m.problem("", "both a command and a url", "keep one")
	case remote && e.Transport == TransportStdio:
		m.problem("type", "stdio with a url", "give a command, or type http or sse")
	case !remote && e.Transport != "" && e.Transport != TransportStdio && e.Command != "" && m.opts.Format != EntryCodex:
		if e.Transport == TransportHTTP || e.Transport == TransportSSE {
			m.problem("type", e.Transport+" without a url", "give a url, or type stdio")
		}
	}
	if remote && (len(e.Env) > 0 || len(e.SecretEnv) > 0) {
		m.problem("env", "env is for stdio servers", "send headers to a remote server")
	}
	if !remote && (len(e.Headers) > 0 || len(e.SecretHeaders) > 0) {
		m.problem("headers", "headers are for remote servers", "give a stdio server env variables")
	}
	if !remote && e.Transport == "" {
		e.Transport = TransportStdio
	}
}

// UnsetVars returns the variables that the ${NAME} references (without a
// default) of e's values read and lookup does not find, sorted: the
// configuration would not load without them. It is empty unless e.Expand.
func (e *ServerEntry) UnsetVars(lookup func(string) (string, bool)) []string {
	if !e.Expand {
		return nil
	}
	values := []string{e.Command, e.Cwd, e.EnvFile, e.URL}
	values = append(values, e.Args...)
	values = append(values, e.HeadersHelper...)
	values = slices.AppendSeq(values, maps.Values(e.Env))
	values = slices.AppendSeq(values, maps.Values(e.Headers))
	if e.OAuth != nil {
		values = append(append(values, e.OAuth.ClientID), e.OAuth.Scopes...)
	}
	var out []string
	for _, v := range values {
		for _, m := range varRE.FindAllStringSubmatchIndex(v, -1) {
			if m[4] >= 0 {
				continue // has a default
			}
			name := v[m[2]:m[3]]
			if _, ok := lookup(name); !ok && !slices.Contains(out, name) {
				out = append(out, name)
			}
		}
	}
	slices.Sort(out)
	return out
}
