package streamable

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"time"

	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/conn"
)

// Outcomes of a configuration reload (ReloadStatus.Outcome).
const (
	ReloadApplied   = "applied"   // the new configuration is in effect
	ReloadUnchanged = "unchanged" // loaded, with nothing to apply
	ReloadRejected  = "rejected"  // invalid: the previous one stays in effect
)

// ReloadStatus is the outcome of the last configuration reload, for /readyz.
type ReloadStatus struct {
	// LoadedAt is when the configuration in effect was loaded.
	LoadedAt time.Time `json:"loaded_at"`
	// At is when the last reload was tried (zero: never), and Outcome how
	// it ended.
	At      time.Time `json:"last_reload_at,omitzero"`
	Outcome string    `json:"last_reload,omitempty"`
	// Errors are the diagnostics of a rejected reload (file:line:col:
	// summary).
	Errors []string `json:"errors,omitempty"`
	// RestartNeeded names changes that apply only after a restart.
	RestartNeeded []string `json:"restart_needed,omitempty"`
}

// HealthOptions configures the health endpoints.
type HealthOptions struct {
	// Reload reports the last reload's outcome. OPTIONAL.
	Reload func() ReloadStatus
}

// health is /readyz's answer: nothing secret (no URL, command, error text
// or user), as it is served without a token.
type health struct {
	Status    string         `json:"status"`
	ReadyWhen string         `json:"ready_when"`
	Draining  bool           `json:"draining,omitempty"`
	Starting  bool           `json:"starting,omitempty"` // the servers' first connects are still running
	Config    ReloadStatus   `json:"config"`
	Servers   []serverHealth `json:"servers"`
}

type serverHealth struct {
	Name  string     `json:"name"`
	State conn.State `json:"state"`
	// PerUser servers are connected for each gateway user, on use: they
	// do not count toward readiness.
	PerUser bool `json:"per_user,omitempty"`
	// Interceptor servers (SEP-2624, named by an interceptor block) serve
	// no client: they do not count toward readiness either.
	Interceptor bool `json:"interceptor,omitempty"`
}

// MountHealth mounts /healthz and /readyz on mux. Neither needs a token;
// both refuse, as /mcp does, a Host that is not the loopback name a
// loopback connection was addressed by (DNS rebinding: GuardHost).
//
// /healthz answers 200 {"status":"ok"} while the process serves.
// /readyz answers 200 when the gateway should be sent requests and 503
// otherwise, with each server's state: ready means the configuration is
// loaded, the gateway is not shutting down nor still connecting its servers
// at start (every one connected or failed), and the servers that should be
// connected are, as settings { ready_when } says — "all" of them, "any"
// (at least one; or none is configured), or "none" (servers do not count).
// Disabled, unapproved and blocked servers, and servers connected per user,
// do not count. The last reload's errors name files by base name only.
func (f *Front) MountHealth(mux *http.ServeMux, opts *HealthOptions) {
	mux.Handle("/healthz", GuardHost(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeHealth(w, http.StatusOK, map[string]string{"status": "ok"})
	})))
	mux.Handle("/readyz", GuardHost(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hs := f.readiness(opts)
		code := http.StatusOK
		if hs.Status != "ready" {
			code = http.StatusServiceUnavailable
		}
		writeHealth(w, code, hs)
	})))
}

// GuardHost serves h only to requests whose Host is a loopback name when
// they came in on a loopback address, as the MCP endpoint does: a web page
// whose name was rebound to 127.0.0.1 gets 403 (DNS rebinding). For the
// endpoints beside /mcp that need no token (/healthz, /readyz, /metrics,
// OAuth metadata). A request without Host passes: browsers always send
// one, and a load balancer's HTTP/1.0 health check (HAProxy's option
// httpchk) does not.
func GuardHost(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Host != "" && rebinding(r) {
			http.Error(w, fmt.Sprintf("Forbidden: invalid Host header %q", r.Host), http.StatusForbidden)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// absPath matches an absolute file path in a message: a Unix one, or a
// Windows one with a drive letter or a UNC prefix, starting the message or
// after a space, quote, parenthesis or '='. (A URL's path follows "//host"
// and a ':', so it does not match.)
var absPath = regexp.MustCompile(`(^|[\s"'(=])(/[^\s"'():,]+|[A-Za-z]:\\[^\s"'():,]*|\\\\[^\s"'():,]+)`)

// baseNames replaces each absolute path in msg with its base name: /readyz
// is served without a token, and where the configuration lives is not for
// anyone who can reach the port.
func baseNames(msg string) string {
	var b strings.Builder
	last := 0
	for _, m := range absPath.FindAllStringSubmatchIndex(msg, -1) {
		start, end := m[4], m[5]
		path := strings.TrimRight(msg[start:end], `/\`)
		if i := strings.LastIndexAny(path, `/\`); i >= 0 {
			path = path[i+1:]
		}
		b.WriteString(msg[last:start])
		b.WriteString(path)
		last = end
	}
	b.WriteString(msg[last:])
	return b.String()
}

// readiness computes /readyz's answer.
func (f *Front) readiness(opts *HealthOptions) *health {
	cfg := f.h.Config()
	hs := &health{ReadyWhen: cfg.Settings.ReadyWhen, Servers: []serverHealth{}}
	if hs.ReadyWhen == "" {
		hs.ReadyWhen = config.ReadyAny
	}
	if opts != nil && opts.Reload != nil {
		hs.Config = opts.Reload()
		hs.Config.Errors = mapStrings(hs.Config.Errors, baseNames)
		hs.Config.RestartNeeded = mapStrings(hs.Config.RestartNeeded, baseNames)
	}
	hs.Draining = f.gw.Draining()
	counted, connected := 0, 0
	for _, st := range f.h.Connections().Status() {
		sh := serverHealth{Name: st.Name, State: st.State}
		if s := cfg.Server(st.Name); s != nil && s.InterceptorOnly {
			sh.Interceptor = true
		} else if s != nil && ((f.gw.ServesUsers() && s.PerUser()) || (s.OAuth != nil && s.OAuth.Grant == config.GrantTokenExchange)) {
			sh.PerUser = true
		} else if st.State != conn.StateDisabled {
			counted++
			if st.State == conn.StateConnected {
				connected++
			}
		}
		hs.Servers = append(hs.Servers, sh)
	}
	// Not ready while the servers' first connects run (ConnectAll), whatever
	// ready_when says: a balancer would send clients a partial tool list.
	hs.Starting = f.gw.Starting()
	ready := !hs.Draining && !hs.Starting
	switch hs.ReadyWhen {
	case config.ReadyAll:
		ready = ready && connected == counted
	case config.ReadyAny:
		ready = ready && (counted == 0 || connected > 0)
	}
	hs.Status = "ready"
	if !ready {
		hs.Status = "not ready"
	}
	return hs
}

// mapStrings returns f of each of list, in a new slice (nil for none).
func mapStrings(list []string, f func(string) string) []string {
	if len(list) == 0 {
		return list
	}
	out := make([]string, len(list))
	for i, s := range list {
		out[i] = f(s)
	}
	return out
}

func writeHealth(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(v)
}
