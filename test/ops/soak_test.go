package ops

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Soak test figures.
const (
	soakClients  = 8
	soakDuration = time.Minute
	soakRewrite  = 3 * time.Second
)

// soakConfig is version i of the soak test's configuration: the server
// "stable" always, servers r1…r3 added, removed and changed (args), and
// every third version a rule that denies mcp__stable__add (permissions
// tightened, then loosened again).
func soakConfig(i int) string {
	var b strings.Builder
	b.WriteString("settings {\n  drain_timeout = \"5s\"\n}\ntelemetry {\n  prometheus = true\n  traces = false\n}\n")
	b.WriteString("permissions {\n  default_mode = \"allow_all\"\n")
	if i%3 == 2 {
		b.WriteString("  deny = [\"mcp__stable__add\"]\n")
	}
	b.WriteString("}\n")
	b.WriteString(demoServer("stable"))
	switch i % 4 {
	case 0:
		b.WriteString(demoServer("r1"))
	case 1:
		b.WriteString(demoServer("r1", "-passthrough")) // changed: restarted
		b.WriteString(demoServer("r2"))
	case 2:
		b.WriteString(demoServer("r2"))
	case 3:
		b.WriteString(demoServer("r2"))
		b.WriteString(demoServer("r3"))
	}
	return b.String()
}

// runtimeFigures reads the gateway's goroutines and open file descriptors
// from its /metrics (the Go and process collectors), parsed with the
// Prometheus text parser.
func runtimeFigures(t *testing.T, g *gateway) (goroutines, fds float64) {
	t.Helper()
	// (A connection per scrape: a kept-alive one would be counted.)
	c := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := c.Get(g.base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	p := expfmt.NewTextParser(model.UTF8Validation)
	families, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("/metrics: %v", err)
	}
	get := func(name string) float64 {
		f := families[name]
		if f == nil || len(f.Metric) == 0 {
			t.Fatalf("/metrics has no %s", name)
		}
		return f.Metric[0].GetGauge().GetValue()
	}
	return get("go_goroutines"), get("process_open_fds")
}

// settle waits until the gateway's goroutines stop falling (idle
// connections and sessions closing), and returns the last figures.
func settle(t *testing.T, g *gateway) (goroutines, fds float64) {
	t.Helper()
	// The test's own idle connections (the clients', /readyz polls') hold a
	// goroutine and a descriptor each in the gateway.
	http.DefaultTransport.(*http.Transport).CloseIdleConnections()
	goroutines, fds = runtimeFigures(t, g)
	for range 20 {
		time.Sleep(250 * time.Millisecond)
		n, f := runtimeFigures(t, g)
		if n == goroutines && f == fds {
			break
		}
		goroutines, fds = n, f
	}
	return goroutines, fds
}

// settleTo is settle for the end of a run: it waits (up to 10 s) for the
// gateway's goroutines and descriptors to come back to the baseline (baseG,
// baseFD), as connections retired by the last reloads end their drains and
// second sessions one by one (two equal readings 250 ms apart are no sign
// of that: a drain waits longer between its steps), and returns the last
// figures: the caller still fails on any above the baseline.
func settleTo(t *testing.T, g *gateway, baseG, baseFD float64) (goroutines, fds float64) {
	t.Helper()
	goroutines, fds = settle(t, g)
	for deadline := time.Now().Add(10 * time.Second); (goroutines > baseG || fds > baseFD) && time.Now().Before(deadline); {
		time.Sleep(250 * time.Millisecond)
		http.DefaultTransport.(*http.Transport).CloseIdleConnections()
		goroutines, fds = runtimeFigures(t, g)
	}
	return goroutines, fds
}

// TestReloadSoak: soakClients clients loop calls through serve --http for
// soakDuration while the configuration is rewritten every soakRewrite
// (servers added, removed, restarted with other args; permissions tightened
// and loosened) and once made invalid. Every request gets exactly its own
// response, the invalid version is never applied, and the gateway's
// goroutines and file descriptors are back at their baseline after.
func TestReloadSoak(t *testing.T) {
	t.Parallel()
	g := startGateway(t, soakConfig(0))
	_, r := g.readyz(t)
	if r.Status != "ready" {
		t.Fatalf("not ready: %+v", r)
	}
	baseG, baseFD := settle(t, g)

	ctx := context.Background()
	var requests, responses, ok, refused atomic.Int64
	var failures sync.Map // unexpected outcomes, by description
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for c := range soakClients {
		cs := g.connect(t)
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer cs.Close()
			for n := 0; ; n++ {
				select {
				case <-stop:
					return
				default:
				}
				server := []string{"stable", "r1", "r2", "r3"}[rand.IntN(4)]
				msg := fmt.Sprintf("client %d call %d", c, n)
				requests.Add(1)
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "mcp__" + server + "__echo", Arguments: map[string]any{"message": msg}})
				var rpcErr *jsonrpc.Error
				switch {
				case err == nil && !res.IsError:
					responses.Add(1)
					if got := res.Content[0].(*mcp.TextContent).Text; got != msg {
						failures.Store(fmt.Sprintf("crossed result: sent %q, got %q", msg, got), true)
					} else {
						ok.Add(1)
					}
				case err == nil: // a tool error result: the server is gone
					responses.Add(1)
					refused.Add(1)
					if server == "stable" {
						failures.Store("stable refused: "+res.Content[0].(*mcp.TextContent).Text, true)
					}
				case errors.As(err, &rpcErr):
					responses.Add(1)
					refused.Add(1)
					if server == "stable" {
						failures.Store("stable refused: "+err.Error(), true)
					}
				default: // no response: lost
					failures.Store("no response: "+err.Error(), true)
				}
			}
		}()
	}

	// The rewrites.
	start := time.Now()
	applied, version := 0, 0
	invalidDone := false
	check := g.connect(t)
	defer check.Close()
	for time.Since(start) < soakDuration {
		time.Sleep(soakRewrite)
		if !invalidDone && time.Since(start) > soakDuration/3 {
			invalidDone = true
			before := time.Now()
			g.write(t, soakConfig(version)+"server \"bad\" {\n  transport = \"nope\"\n") // unterminated block
			r := g.waitReload(t, before)
			if r.Config.LastReload != "rejected" || len(r.Config.Errors) == 0 || !strings.Contains(r.Config.Errors[0], "mcphost.hcl:") {
				t.Fatalf("invalid configuration: /readyz %+v", r)
			}
			if r.Status != "ready" {
				t.Errorf("not ready after a rejected reload: %+v", r)
			}
			for _, s := range r.Servers {
				if s.Name == "bad" {
					t.Fatal("the invalid configuration was applied")
				}
			}
			continue
		}
		version++
		before := time.Now()
		g.write(t, soakConfig(version))
		r := g.waitReload(t, before)
		if r.Config.LastReload != "applied" {
			t.Fatalf("version %d: /readyz %+v; stderr:\n%s", version, r, g.stderr)
		}
		applied++
		// The permission rule of this version applies to the next call.
		res, err := check.CallTool(ctx, &mcp.CallToolParams{Name: "mcp__stable__add", Arguments: map[string]any{"a": 1, "b": 2}})
		denied := err != nil || res.IsError
		if want := version%3 == 2; denied != want {
			t.Errorf("version %d: mcp__stable__add denied=%v, want %v (%v)", version, denied, want, err)
		}
	}
	close(stop)
	wg.Wait()

	// Back to the first version: the baseline's servers.
	before := time.Now()
	g.write(t, soakConfig(0))
	g.waitReload(t, before)
	time.Sleep(2 * time.Second) // the retired servers drain and stop
	check.Close()
	endG, endFD := settleTo(t, g, baseG, baseFD)

	failures.Range(func(k, _ any) bool {
		t.Error(k)
		return true
	})
	if requests.Load() != responses.Load() {
		t.Errorf("%d requests, %d responses", requests.Load(), responses.Load())
	}
	if ok.Load() == 0 || applied < 5 {
		t.Errorf("too little happened: %d calls answered, %d reloads applied", ok.Load(), applied)
	}
	if endG > baseG || endFD > baseFD {
		t.Errorf("goroutines %v → %v, file descriptors %v → %v: not back at baseline", baseG, endG, baseFD, endFD)
	}
	secs := time.Since(start).Seconds()
	t.Logf("soak: %d clients, %.0f s, %d reloads applied + 1 rejected; %d requests = %d responses (%.0f/s): %d results, %d refused (server gone); goroutines %v → %v, fds %v → %v",
		soakClients, secs, applied, requests.Load(), responses.Load(), float64(requests.Load())/secs, ok.Load(), refused.Load(), baseG, endG, baseFD, endFD)
	if os.Getenv("MCPHOST_SOAK_LOG") != "" {
		t.Log(g.stderr.String())
	}
}
