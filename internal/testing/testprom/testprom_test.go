package testprom

import (
	"context"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcphost/mcphost/host/telemetry"
)

// TestScrapeTelemetry has a real Prometheus scrape the host's /metrics
// handler, with and without the bearer token the handler requires.
func TestScrapeTelemetry(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tel, err := telemetry.New(ctx, &telemetry.Options{Prometheus: true, ServiceName: "mcphost-test",
		LookupEnv: func(string) (string, bool) { return "", false }})
	if err != nil {
		t.Fatal(err)
	}
	defer tel.Shutdown(ctx)
	tel.RecordCall(ctx, "github", "create_issue", 20*time.Millisecond, "")
	tel.RecordCall(ctx, "github", "create_issue", 40*time.Millisecond, "")
	tel.RecordCall(ctx, "github", "create_issue", time.Second, telemetry.ErrorTypeToolError)
	tel.ObserveConnections(func(yield func(string, int)) { yield("ready", 3) })

	const token = "scrape-t0ken"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+token {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		tel.Handler().ServeHTTP(w, r)
	}))
	defer srv.Close()

	prom := Start(t,
		Target{URL: srv.URL + "/metrics", BearerToken: token, Job: "mcphost"},
		Target{URL: srv.URL + "/metrics", Job: "anonymous"},
	)
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()

	targets, err := prom.AwaitTargets(ctx, func(ts []TargetHealth) bool {
		for _, tg := range ts {
			if tg.Health == "unknown" {
				return false
			}
		}
		return len(ts) == 2
	})
	if err != nil {
		t.Fatalf("%v\n%s", err, prom.Log())
	}
	for _, tg := range targets {
		switch tg.Job {
		case "mcphost":
			if tg.Health != "up" {
				t.Errorf("mcphost target: %+v", tg)
			}
		case "anonymous":
			if tg.Health != "down" || !strings.Contains(tg.LastError, "401") {
				t.Errorf("anonymous target: %+v, want down with a 401", tg)
			}
		}
	}

	for _, q := range []struct {
		promql string
		ok     func(float64) bool
	}{
		{`mcp_client_operation_duration_seconds_count{job="mcphost",mcphost_server_name="github",gen_ai_tool_name="create_issue",error_type=""}`, func(v float64) bool { return v == 2 }},
		{`sum(mcp_client_operation_duration_seconds_count{job="mcphost",error_type!=""})`, func(v float64) bool { return v == 1 }},
		{`histogram_quantile(0.5, sum by (le) (mcp_client_operation_duration_seconds_bucket{job="mcphost"}))`, func(v float64) bool { return v > 0.01 && v <= 0.05 }},
		{`mcphost_connection_count{job="mcphost",mcphost_connection_state="ready"}`, func(v float64) bool { return v == 3 }},
		{`go_goroutines{job="mcphost"}`, func(v float64) bool { return v >= 1 }},
		{`process_open_fds{job="mcphost"}`, func(v float64) bool { return runtime.GOOS != "linux" || v >= 1 }},
		{`target_info{job="mcphost",service_name="mcphost-test"}`, func(v float64) bool { return v == 1 }},
	} {
		if v, err := prom.Await(ctx, q.promql, q.ok); err != nil {
			t.Errorf("%s = %v: %v", q.promql, v, err)
		}
	}
}

// fatalTB records the first Fatalf and ends its goroutine, as testing.T
// does.
type fatalTB struct {
	testing.TB
	mu  sync.Mutex
	msg string
}

func (f *fatalTB) Helper() {}

func (f *fatalTB) Fatalf(format string, args ...any) {
	f.mu.Lock()
	f.msg = format
	f.mu.Unlock()
	runtime.Goexit()
}

// TestMissingBinary checks that a missing Prometheus fails the test with
// the command that installs it.
func TestMissingBinary(t *testing.T) {
	t.Parallel()
	tb := &fatalTB{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		start(tb, "/nonexistent/prometheus", nil)
		t.Error("start returned")
	}()
	<-done
	if !strings.Contains(tb.msg, "install it with") {
		t.Errorf("Fatalf(%q), want the install command", tb.msg)
	}
}

func TestConfigFile(t *testing.T) {
	t.Parallel()
	got, err := configFile([]Target{{URL: "http://127.0.0.1:9/metrics", BearerToken: `a"b`}, {URL: "https://h:1"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"scrape_interval": "1s"`, `"job_name": "target0"`, `"credentials": "a\"b"`, `"metrics_path": "/metrics"`, `"targets": [`, `"scheme": "https"`, `"metrics_path": "/"`} {
		if !strings.Contains(string(got), want) {
			t.Errorf("config lacks %s:\n%s", want, got)
		}
	}
	if _, err := configFile([]Target{{URL: "127.0.0.1:9"}}); err == nil {
		t.Error("a URL without scheme was accepted")
	}
}
