package serve

import (
	"encoding/json"
	"net/http"
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
}

// MountHealth mounts /healthz and /readyz on mux. Neither needs a token.
//
// /healthz answers 200 {"status":"ok"} while the process serves.
// /readyz answers 200 when the gateway should be sent requests and 503
// otherwise, with each server's state: ready means the configuration is
// loaded, the gateway is not shutting down nor still connecting its servers
// at start (every one connected or failed), and the servers that should be
// connected are, as settings { ready_when } says — "all" of them, "any"
// (at least one; or none is configured), or "none" (servers do not count).
// Disabled, unapproved and blocked servers, and servers connected per user,
// do not count.
func (g *Gateway) MountHealth(mux *http.ServeMux, opts *HealthOptions) {
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, r *http.Request) {
		writeHealth(w, http.StatusOK, map[string]string{"status": "ok"})
	})
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, r *http.Request) {
		hs := g.readiness(opts)
		code := http.StatusOK
		if hs.Status != "ready" {
			code = http.StatusServiceUnavailable
		}
		writeHealth(w, code, hs)
	})
}

// readiness computes /readyz's answer.
func (g *Gateway) readiness(opts *HealthOptions) *health {
	cfg := g.h.Config()
	hs := &health{ReadyWhen: cfg.Settings.ReadyWhen, Servers: []serverHealth{}}
	if hs.ReadyWhen == "" {
		hs.ReadyWhen = config.ReadyAny
	}
	if opts != nil && opts.Reload != nil {
		hs.Config = opts.Reload()
	}
	g.drainMu.Lock()
	hs.Draining = g.draining
	g.drainMu.Unlock()
	counted, connected := 0, 0
	for _, st := range g.h.Connections().Status() {
		sh := serverHealth{Name: st.Name, State: st.State}
		if s := cfg.Server(st.Name); s != nil && ((g.users.Load() && s.PerUser()) || (s.OAuth != nil && s.OAuth.Grant == config.GrantTokenExchange)) {
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
	hs.Starting = g.starting.Load()
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

func writeHealth(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(v)
}
