package host_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/registry"
	"github.com/mcphost/mcphost/internal/demoserver"
	"github.com/mcphost/mcphost/internal/testing/demotest"
)

func TestMain(m *testing.M) {
	demoserver.RunIfChild()
	// The examples load configuration as a program would: keep them from
	// this machine's managed file, plugins and user configuration.
	dir, err := os.MkdirTemp("", "mcphost-host-test")
	if err != nil {
		panic(err)
	}
	os.Setenv(config.EnvManagedConfig, filepath.Join(dir, "none.hcl"))
	os.Setenv(config.EnvConfigDir, filepath.Join(dir, "config"))
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

var demo = demotest.Server

func newHost(t *testing.T, servers ...*config.Server) *host.Host {
	t.Helper()
	cfg := &config.Config{Servers: servers, DefaultMode: "allow_all"} // permissions are tested on their own
	h, err := host.New(cfg, &host.Options{OutputDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	return h
}

func TestCallThroughRegistry(t *testing.T) {
	t.Parallel()
	h := newHost(t, demo("one"), demo("two"))
	ctx := context.Background()
	tools, problems := h.Tools(ctx)
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	var names []string
	for _, tl := range tools {
		names = append(names, tl.Name)
	}
	for _, want := range []string{"mcp__one__echo", "mcp__two__echo", "mcp__two__add"} {
		if !strings.Contains(strings.Join(names, " "), want) {
			t.Errorf("registry lacks %s: %v", want, names)
		}
	}
	res, err := h.CallTool(ctx, "mcp__two__echo", map[string]any{"message": "hello"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := host.TextOf(res.Content); got != "hello" {
		t.Errorf("echo = %q", got)
	}
	if _, err := h.CallTool(ctx, "mcp__three__echo", nil, nil); !errors.Is(err, registry.ErrNotFound) && err == nil {
		t.Errorf("unknown server: %v", err)
	}
	if _, err := h.CallTool(ctx, "mcp__one__nope", nil, nil); !errors.Is(err, registry.ErrNotFound) {
		t.Errorf("unknown tool: %v", err)
	}
}

func TestIsErrorIsHonoured(t *testing.T) {
	t.Parallel()
	h := newHost(t, demo("d"))
	res, err := h.CallTool(context.Background(), "mcp__d__fail", map[string]any{"message": "kaputt"}, nil)
	var te *host.ToolError
	if !errors.As(err, &te) || !res.IsError || !strings.Contains(err.Error(), "kaputt") {
		t.Fatalf("res %+v err %v", res, err)
	}
}

func TestLargeOutputGoesToAFile(t *testing.T) {
	t.Parallel()
	h := newHost(t, demo("d"))
	ctx := context.Background()
	res, err := h.CallTool(ctx, "mcp__d__large", map[string]any{"chars": 250000}, nil)
	if err != nil {
		t.Fatal(err)
	}
	text := host.TextOf(res.Content)
	if len(text) > 5000 || !strings.Contains(text, "Output too large (250000 characters)") {
		t.Fatalf("pointer = %.300q", text)
	}
	path := text[strings.Index(text, "saved to ")+len("saved to ") : strings.Index(text, "\n")]
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) != 250000 {
		t.Errorf("file has %d bytes, want 250000", len(b))
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o600 {
		t.Errorf("file mode %v, want 0600", st.Mode().Perm())
	}
	// At the limit, output stays inline.
	res, err = h.CallTool(ctx, "mcp__d__large", map[string]any{"chars": host.MaxResultChars}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := len(host.TextOf(res.Content)); got != host.MaxResultChars {
		t.Errorf("inline output of %d characters, want %d", got, host.MaxResultChars)
	}
}

func TestTimeoutAndCancellation(t *testing.T) {
	t.Parallel()
	s := demo("d")
	s.ToolTimeout = 200 * time.Millisecond
	h := newHost(t, s)
	ctx := context.Background()
	_, err := h.CallTool(ctx, "mcp__d__slow", map[string]any{"milliseconds": 5000}, nil)
	if err == nil || !strings.Contains(err.Error(), "timed out after 200ms") {
		t.Fatalf("err = %v", err)
	}
	cctx, cancel := context.WithCancel(ctx)
	time.AfterFunc(100*time.Millisecond, cancel)
	if _, err := h.CallTool(cctx, "mcp__d__slow", map[string]any{"milliseconds": 5000}, &host.CallOptions{Timeout: time.Hour}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled call: %v", err)
	}
	// The server is still usable afterwards.
	if _, err := h.CallTool(ctx, "mcp__d__echo", map[string]any{"message": "x"}, nil); err != nil {
		t.Error(err)
	}
}

func TestProgress(t *testing.T) {
	t.Parallel()
	h := newHost(t, demo("d"))
	var mu sync.Mutex
	var got []float64
	_, err := h.CallTool(context.Background(), "mcp__d__slow", map[string]any{"milliseconds": 100, "steps": 4}, &host.CallOptions{
		OnProgress: func(p *mcp.ProgressNotificationParams) {
			mu.Lock()
			got = append(got, p.Progress)
			mu.Unlock()
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	// The last notification may lose the race with the result (see the
	// gateway's progress test); the others must all arrive, in order.
	if len(got) < 3 || got[0] != 1 || got[1] != 2 || got[2] != 3 {
		t.Errorf("progress = %v", got)
	}
}

func TestListChangedRefreshesRegistry(t *testing.T) {
	t.Parallel()
	h := newHost(t, demo("d"))
	ctx := context.Background()
	changed := make(chan string, 10)
	h.Registry().OnChange(func(s string) { changed <- s })
	if _, err := h.Registry().Lookup(ctx, "mcp__d__echo"); err != nil {
		t.Fatal(err)
	}
	if _, err := h.CallTool(ctx, "mcp__d__add_tool", map[string]any{"name": "fresh"}, nil); err != nil {
		t.Fatal(err)
	}
	select {
	case s := <-changed:
		if s != "d" {
			t.Errorf("change for %q", s)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no tools/list_changed reached the registry")
	}
	res, err := h.CallTool(ctx, "mcp__d__fresh", map[string]any{"message": "new"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := host.TextOf(res.Content); got != "fresh: new" {
		t.Errorf("fresh = %q", got)
	}
}

func TestResourcesAndPrompts(t *testing.T) {
	t.Parallel()
	h := newHost(t, demo("d"))
	ctx := context.Background()
	rs, problems := h.Resources(ctx, "")
	if len(problems) > 0 || len(rs) != 2 {
		t.Fatalf("resources %v problems %v", rs, problems)
	}
	contents, err := h.ReadResource(ctx, "", "demo://readme")
	if err != nil || len(contents) != 1 || contents[0].Text != "This is the mcphost demo server." {
		t.Fatalf("readme: %+v %v", contents, err)
	}
	contents, err = h.ReadResource(ctx, "d", "demo://pixel.png")
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(contents[0].File)
	if err != nil || !strings.HasPrefix(string(b), "\x89PNG") || !strings.HasSuffix(contents[0].File, ".png") {
		t.Errorf("blob file %s: %q %v", contents[0].File, b[:min(len(b), 8)], err)
	}
	ps, _ := h.Prompts(ctx)
	if len(ps) != 1 || ps[0].Name != "mcp__d__greet" {
		t.Fatalf("prompts %v", ps)
	}
	pr, err := h.GetPrompt(ctx, "mcp__d__greet", map[string]string{"name": "Ada"})
	if err != nil || host.TextOf([]mcp.Content{pr.Messages[0].Content}) != "Say hello to Ada." {
		t.Fatalf("prompt %+v %v", pr, err)
	}
}

func TestTextOf(t *testing.T) {
	t.Parallel()
	got := host.TextOf([]mcp.Content{
		&mcp.TextContent{Text: "a"},
		&mcp.ImageContent{MIMEType: "image/png"},
		&mcp.AudioContent{MIMEType: "audio/wav"},
		&mcp.TextContent{Text: "b"},
	})
	if want := "a\n[Image: image/png]\n[Audio: audio/wav]\nb"; got != want {
		t.Errorf("TextOf = %q, want %q", got, want)
	}
}

// TestChangedToolIsBlockedUntilApproved: a pinned fingerprint that no longer
// matches the server's definition blocks the tool (hidden from Tools, calls
// refused, never sent) until ApproveTool records the new definition.
func TestChangedToolIsBlockedUntilApproved(t *testing.T) {
	t.Parallel()
	pinsFile := filepath.Join(t.TempDir(), "pins.json")
	if err := os.WriteFile(pinsFile, []byte(`{"mcp__d__echo": "fingerprint-of-an-older-definition"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	h, err := host.New(&config.Config{Servers: []*config.Server{demo("d")}, DefaultMode: "allow_all"}, &host.Options{OutputDir: t.TempDir(), PinsFile: pinsFile})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	ctx := context.Background()
	tools, problems := h.Tools(ctx)
	for _, tl := range tools {
		if tl.Name == "mcp__d__echo" {
			t.Error("a changed tool is listed")
		}
	}
	if len(problems) != 1 || !strings.Contains(problems[0].Detail, "changed since it was first seen") {
		t.Errorf("problems %v", problems)
	}
	if _, err := h.CallTool(ctx, "mcp__d__echo", map[string]any{"message": "x"}, nil); !errors.Is(err, host.ErrToolChanged) {
		t.Fatalf("call of a changed tool: %v", err)
	}
	res, _ := h.CallTool(ctx, "mcp__d__stats", map[string]any{}, nil)
	if m, _ := res.StructuredContent.(map[string]any); m["echo"] != nil {
		t.Errorf("the changed tool reached the server: %v", m)
	}
	if err := h.ApproveTool(ctx, "mcp__d__echo"); err != nil {
		t.Fatal(err)
	}
	if _, err := h.CallTool(ctx, "mcp__d__echo", map[string]any{"message": "x"}, nil); err != nil {
		t.Errorf("after approval: %v", err)
	}
	b, _ := os.ReadFile(pinsFile)
	if strings.Contains(string(b), "older-definition") {
		t.Error("the approval was not saved")
	}
	if st, _ := os.Stat(pinsFile); st.Mode().Perm() != 0o600 {
		t.Errorf("pins file mode %v", st.Mode().Perm())
	}
}

// TestProgressForeverHitsTheCap: a real server that reports progress forever
// keeps the idle timeout (tool_timeout) from firing, but max_tool_duration
// ends the call with a TimeoutError, and the server is told to cancel.
func TestProgressForeverHitsTheCap(t *testing.T) {
	t.Parallel()
	s := demo("d")
	s.ToolTimeout = 300 * time.Millisecond // far shorter than the call: progress must extend it
	s.MaxToolDuration = 1500 * time.Millisecond
	h := newHost(t, s)
	ctx := context.Background()
	var progress atomic.Int64
	start := time.Now()
	// A progress notification every 50 ms for an hour.
	_, err := h.CallTool(ctx, "mcp__d__slow", map[string]any{"milliseconds": 3_600_000, "steps": 72_000}, &host.CallOptions{
		OnProgress: func(*mcp.ProgressNotificationParams) { progress.Add(1) },
	})
	elapsed := time.Since(start)
	var te *host.TimeoutError
	if !errors.As(err, &te) || !te.Cap || !errors.Is(err, host.ErrTimeout) {
		t.Fatalf("err = %v, want the max_tool_duration TimeoutError", err)
	}
	if elapsed < s.MaxToolDuration || elapsed > s.MaxToolDuration+5*time.Second {
		t.Errorf("the call ended after %s, want about %s", elapsed, s.MaxToolDuration)
	}
	if progress.Load() < 5 {
		t.Errorf("only %d progress notifications arrived", progress.Load())
	}
	// The server received notifications/cancelled and stopped working.
	deadline := time.Now().Add(5 * time.Second)
	for {
		res, err := h.CallTool(ctx, "mcp__d__stats", map[string]any{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if m, _ := res.StructuredContent.(map[string]any); m["slow_cancelled"] == float64(1) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the server was not told to cancel: %v", res.StructuredContent)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
