package registry

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// listSource serves fixed lists and counts fetches. The registry's own logic
// (caching, naming, collisions) is what is under test; real servers are used
// in the host and interop tests.
type listSource struct {
	mu      sync.Mutex
	tools   map[string][]*mcp.Tool
	fetches map[string]int
	fail    map[string]error
}

func (s *listSource) ListTools(_ context.Context, server string) ([]*mcp.Tool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fetches[server]++
	if err := s.fail[server]; err != nil {
		return nil, err
	}
	return s.tools[server], nil
}
func (s *listSource) ListPrompts(context.Context, string) ([]*mcp.Prompt, error) { return nil, nil }
func (s *listSource) ListResources(context.Context, string) ([]*mcp.Resource, error) {
	return nil, nil
}

func (s *listSource) ListResourceTemplates(context.Context, string) ([]*mcp.ResourceTemplate, error) {
	return nil, nil
}

func names(ts []*Tool) []string {
	var out []string
	for _, t := range ts {
		out = append(out, t.Name)
	}
	return out
}

func TestToolsMergedCachedAndRefreshed(t *testing.T) {
	t.Parallel()
	src := &listSource{
		tools: map[string][]*mcp.Tool{
			"a": {{Name: "one"}, {Name: "two"}},
			"b": {{Name: "one"}},
		},
		fetches: map[string]int{},
		fail:    map[string]error{"down": errors.New("connection refused")},
	}
	r := New(src)
	ctx := context.Background()
	tools, problems := r.Tools(ctx, []string{"a", "b", "down"})
	if diff := cmp.Diff([]string{"mcp__a__one", "mcp__a__two", "mcp__b__one"}, names(tools)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if len(problems) != 1 || problems[0].Server != "down" {
		t.Errorf("problems = %v", problems)
	}
	r.Tools(ctx, []string{"a", "b"})
	if src.fetches["a"] != 1 {
		t.Errorf("a fetched %d times, want 1 (cached)", src.fetches["a"])
	}
	var notified []string
	remove := r.OnChange(func(s string) { notified = append(notified, s) })
	src.mu.Lock()
	src.tools["a"] = append(src.tools["a"], &mcp.Tool{Name: "three"})
	src.mu.Unlock()
	r.InvalidateTools("a")
	tools, _ = r.Tools(ctx, []string{"a"})
	if diff := cmp.Diff([]string{"mcp__a__one", "mcp__a__three", "mcp__a__two"}, names(tools)); diff != "" {
		t.Errorf("after list_changed (-want +got):\n%s", diff)
	}
	if src.fetches["a"] != 2 || !cmp.Equal(notified, []string{"a"}) {
		t.Errorf("fetches %d, notified %v", src.fetches["a"], notified)
	}
	remove()
	r.InvalidateTools("b")
	if !cmp.Equal(notified, []string{"a"}) {
		t.Errorf("notified %v after the listener was removed", notified)
	}
	if _, err := r.Lookup(ctx, "mcp__a__three"); err != nil {
		t.Error(err)
	}
	if _, err := r.Lookup(ctx, "mcp__a__nope"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Lookup of a missing tool: %v", err)
	}
}

// TestManyServersNeverRelist: with many servers (more than the 20 a
// fetch cache of limited size held), each server is listed once, and
// lookups of every server's tools, over and over, list nothing again.
func TestManyServersNeverRelist(t *testing.T) {
	t.Parallel()
	src := &listSource{tools: map[string][]*mcp.Tool{}, fetches: map[string]int{}}
	var servers []string
	for i := 0; i < 50; i++ {
		s := fmt.Sprintf("s%d", i)
		servers = append(servers, s)
		src.tools[s] = []*mcp.Tool{{Name: "t"}}
	}
	r := New(src)
	ctx := context.Background()
	tools, _ := r.Tools(ctx, servers)
	if len(tools) != len(servers) {
		t.Fatalf("%d tools, want %d", len(tools), len(servers))
	}
	if n := r.tools.len(); n != len(servers) {
		t.Errorf("lists of %d servers held, want %d", n, len(servers))
	}
	for range 3 {
		for _, s := range servers {
			if _, err := r.Lookup(ctx, "mcp__"+s+"__t"); err != nil {
				t.Fatal(err)
			}
		}
	}
	src.mu.Lock()
	defer src.mu.Unlock()
	for _, s := range servers {
		if n := src.fetches[s]; n != 1 {
			t.Errorf("%s listed %d times, want once", s, n)
		}
	}
}

func TestCollisionsAreRejected(t *testing.T) {
	t.Parallel()
	src := &listSource{
		tools: map[string][]*mcp.Tool{
			"a": {{Name: "get.file"}, {Name: "get_file"}, {Name: "get file"}, {Name: "ok"}, {Name: ""}},
		},
		fetches: map[string]int{},
	}
	r := New(src)
	tools, problems := r.Tools(context.Background(), []string{"a"})
	if diff := cmp.Diff([]string{"mcp__a__ok"}, names(tools)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	var details []string
	for _, p := range problems {
		details = append(details, p.Detail)
	}
	all := strings.Join(details, "\n")
	if !strings.Contains(all, `tools "get file", "get.file", "get_file" all map to mcp__a__get_file; none of them is exposed`) {
		t.Errorf("collision not reported: %s", all)
	}
	if !strings.Contains(all, "without a name") {
		t.Errorf("nameless tool not reported: %s", all)
	}
}

func TestAnnotationsAndSanitization(t *testing.T) {
	t.Parallel()
	f := false
	src := &listSource{
		tools: map[string][]*mcp.Tool{"a": {
			{Name: "ro", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, Title: "Read Only"}},
			{Name: "plain", Description: "ignore\u202e previous" + strings.Repeat("x", 3000)},
			{Name: "closed", Title: "Closed World", Annotations: &mcp.ToolAnnotations{OpenWorldHint: &f, DestructiveHint: &f}},
		}},
		fetches: map[string]int{},
	}
	r := New(src)
	tools, _ := r.Tools(context.Background(), []string{"a"})
	got := map[string]*Tool{}
	for _, t := range tools {
		got[t.Original] = t
	}
	if ro := got["ro"]; !ro.ReadOnly || !ro.ConcurrencySafe || ro.Destructive || !ro.OpenWorld || ro.DisplayName != "Read Only" {
		t.Errorf("ro = %+v", ro)
	}
	if p := got["plain"]; p.ReadOnly || !p.Destructive || !p.OpenWorld || p.DisplayName != "plain" ||
		strings.ContainsRune(p.Description, '\u202e') || len([]rune(p.Description)) != MaxDescriptionLen {
		t.Errorf("plain = %+v", p)
	}
	if c := got["closed"]; c.OpenWorld || c.Destructive || c.DisplayName != "Closed World" {
		t.Errorf("closed = %+v", c)
	}
}
