package gateway

import (
	"bytes"
	"context"
	"fmt"
	"runtime"
	"runtime/pprof"
	"strings"
	"testing"

	"github.com/mcphost/mcphost/host"
	hauth "github.com/mcphost/mcphost/host/auth"
	"github.com/mcphost/mcphost/host/config"
)

// TestCloseEndsTheGatewaysGoroutines: Close ends every goroutine the
// gateway started (its sync loop, a login the user never completed), and
// leaves the host's registry. The gateway's goroutines are told from the
// rest of the process's by a profiler label, which they inherit from the
// test's goroutine that made the gateway.
func TestCloseEndsTheGatewaysGoroutines(t *testing.T) {
	t.Parallel()
	h, err := host.New(&config.Config{DefaultMode: "allow_all"}, &host.Options{OutputDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	label := fmt.Sprintf("%p", t)
	var g *Gateway
	pprof.Do(t.Context(), pprof.Labels("gateway", label), func(context.Context) {
		g = New(h, nil)
		g.logins.run = func(ctx context.Context, _ string, _ hauth.Presenter) error {
			<-ctx.Done() // the user never completes the login
			return ctx.Err()
		}
		wait, stopWaiting := context.WithCancel(t.Context())
		stopWaiting() // the call gave up waiting for the login's URL
		// (The login outlives the call, as login's does.)
		if _, err := g.startLogin(context.Background(), wait, "srv"); err == nil {
			t.Fatal("startLogin returned a login with no URL")
		}
	})
	h.Registry().NotifyChanged() // the sync loop syncs
	if n := gatewayGoroutines(label); n < 2 {
		t.Fatalf("%d goroutines of the gateway before Close, want its sync loop and the login's:\n%s", n, strings.Join(goroutinesLabelled(label), "\n\n"))
	}

	g.Close()
	g.Close() // idempotent
	n := gatewayGoroutines(label)
	for i := 0; n > 0 && i < 1000; i++ { // (one may still be returning)
		runtime.Gosched()
		n = gatewayGoroutines(label)
	}
	if n > 0 {
		t.Errorf("%d goroutines of the gateway remain after Close:\n%s", n, strings.Join(goroutinesLabelled(label), "\n\n"))
	}
	select {
	case <-g.changed: // (a change pending when Close ended the loop)
	default:
	}
	h.Registry().NotifyChanged()
	if len(g.changed) != 0 {
		t.Error("Close left the gateway listening to the host's registry")
	}
	if _, err := g.startLogin(context.Background(), t.Context(), "srv"); err == nil {
		t.Error("a login started after Close")
	}
}

// goroutinesLabelled returns the goroutine profile's entries (debug=1: one
// per distinct stack, with its count) labelled gateway=label.
func goroutinesLabelled(label string) []string {
	var b bytes.Buffer
	pprof.Lookup("goroutine").WriteTo(&b, 1)
	var out []string
	for _, entry := range strings.Split(b.String(), "\n\n") {
		entry = strings.TrimSpace(entry)
		if head, rest, ok := strings.Cut(entry, "\n"); ok && strings.HasPrefix(head, "goroutine profile:") {
			entry = rest // (the first entry follows the header line)
		}
		if strings.Contains(entry, `"gateway":"`+label+`"`) {
			out = append(out, entry)
		}
	}
	return out
}

// gatewayGoroutines counts the goroutines labelled gateway=label.
func gatewayGoroutines(label string) int {
	n := 0
	for _, entry := range goroutinesLabelled(label) {
		var c int
		if _, err := fmt.Sscanf(entry, "%d @", &c); err == nil {
			n += c
		}
	}
	return n
}
