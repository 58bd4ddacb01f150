package conn

import (
	"slices"
	"sort"
	"strings"
)

// The host environment variables every stdio server inherits (when set in
// the host), by purpose. Everything else must be named in the server's env,
// env_file or inherit_env: the child's environment is built explicitly, never
// copied wholesale from the host. BaseEnv is all of them. Each function
// returns a fresh slice: no importer can change what every server inherits.

// sessionEnv, proxyEnv, caEnv and windowsEnv are the lists SessionEnv,
// ProxyEnv, CAEnv and WindowsEnv return copies of (never modified).
var (
	sessionEnv = []string{
		"PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LC_ALL", "LC_CTYPE", "TERM", "TZ", "TMPDIR",
		"XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME", "XDG_RUNTIME_DIR",
	}
	proxyEnv = []string{
		"HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "ALL_PROXY",
		"http_proxy", "https_proxy", "no_proxy", "all_proxy",
	}
	caEnv = []string{
		"SSL_CERT_FILE", "SSL_CERT_DIR", "NODE_EXTRA_CA_CERTS", "REQUESTS_CA_BUNDLE",
		"CURL_CA_BUNDLE", "PIP_CERT", "GIT_SSL_CAINFO",
	}
	windowsEnv = []string{
		"SystemRoot", "SystemDrive", "windir", "ComSpec", "PATHEXT",
		"APPDATA", "LOCALAPPDATA", "USERPROFILE", "HOMEDRIVE", "HOMEPATH", "USERNAME", "USERDOMAIN",
		"TEMP", "TMP", "ProgramData", "ProgramFiles", "ProgramFiles(x86)", "ProgramW6432",
		"CommonProgramFiles", "CommonProgramFiles(x86)", "CommonProgramW6432", "ALLUSERSPROFILE", "PUBLIC",
		"COMPUTERNAME", "OS", "NUMBER_OF_PROCESSORS", "PROCESSOR_ARCHITECTURE",
	}
)

// SessionEnv returns the basics of a user's session: where programs and
// the home directory are, who the user is, the locale, the terminal, the
// time zone and the XDG directories.
func SessionEnv() []string { return slices.Clone(sessionEnv) }

// ProxyEnv returns the proxy variables, in both cases (programs differ in
// which they read).
func ProxyEnv() []string { return slices.Clone(proxyEnv) }

// CAEnv returns the variables that name extra or replacement certificate
// authorities, as OpenSSL and Go (SSL_CERT_FILE, SSL_CERT_DIR), Node.js
// (NODE_EXTRA_CA_CERTS), Python's requests, curl, pip and git read them:
// behind a TLS-inspecting proxy a server needs them to reach anything.
func CAEnv() []string { return slices.Clone(caEnv) }

// WindowsEnv returns what programs on Windows need to run at all (npx and
// uvx among them): the system and user directories, the program search
// extensions and the command interpreter. (Windows variable names are
// case-insensitive: Path and PATH are one variable.)
func WindowsEnv() []string { return slices.Clone(windowsEnv) }

// BaseEnv returns the host environment variables every stdio server
// inherits: SessionEnv, ProxyEnv, CAEnv and WindowsEnv, in that order.
func BaseEnv() []string { return slices.Concat(sessionEnv, proxyEnv, caEnv, windowsEnv) }

// envKey is the key that identifies the variable name on goos: Windows
// names are case-insensitive.
func envKey(goos, name string) string {
	if goos == "windows" {
		return strings.ToUpper(name)
	}
	return name
}

// childEnv builds a stdio server's environment on goos: BaseEnv and inherit
// from the host (when set there), then fileEnv (env_file), then the
// configured env on top.
func childEnv(goos string, lookup func(string) (string, bool), inherit []string, fileEnv, env map[string]string) []string {
	type kv struct{ name, value string }
	vars := map[string]kv{}
	set := func(k, v string) { vars[envKey(goos, k)] = kv{k, v} }
	for _, names := range [][]string{BaseEnv(), inherit} {
		for _, k := range names {
			if _, dup := vars[envKey(goos, k)]; dup {
				continue // (http_proxy after HTTP_PROXY on Windows: one variable)
			}
			if v, ok := lookup(k); ok {
				set(k, v)
			}
		}
	}
	for _, m := range []map[string]string{fileEnv, env} {
		for k, v := range m {
			set(k, v)
		}
	}
	out := make([]string, 0, len(vars))
	for _, e := range vars {
		out = append(out, e.name+"="+e.value)
	}
	sort.Strings(out)
	return out
}

// notPassed lists the names of the host's variables (environ: NAME=value
// entries) that the child's environment (child, as childEnv built it) does
// not have, on goos: the ones that matter most for a server that cannot
// connect first (proxies, certificates, Node.js's), sorted, then the count
// of the others. Values are never looked at.
func notPassed(goos string, environ, child []string) (relevant []string, others int) {
	have := map[string]bool{}
	for _, e := range child {
		k, _, _ := strings.Cut(e, "=")
		have[envKey(goos, k)] = true
	}
	seen := map[string]bool{}
	for _, e := range environ {
		k, _, _ := strings.Cut(e, "=")
		key := envKey(goos, k)
		if k == "" || have[key] || seen[key] {
			continue // ("=C:=C:\\" entries on Windows have no name)
		}
		seen[key] = true
		if relevantEnv(k) {
			relevant = append(relevant, k)
		} else {
			others++
		}
	}
	sort.Strings(relevant)
	return relevant, others
}

// relevantEnv reports whether a variable's name says it may decide whether
// a server can reach the network: a proxy, a certificate or a CA, or
// Node.js's settings.
func relevantEnv(name string) bool {
	n := strings.ToUpper(name)
	if strings.Contains(n, "PROXY") || strings.Contains(n, "CERT") || strings.HasPrefix(n, "NODE_") {
		return true
	}
	for _, w := range strings.Split(n, "_") {
		switch w {
		case "CA", "CAINFO", "CAFILE", "CAPATH", "CABUNDLE":
			return true
		}
	}
	return false
}
