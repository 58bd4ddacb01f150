package conn

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host/config"
)

// pids records the process of each server as it starts.
type pids struct {
	mu sync.Mutex
	by map[string][]int
}

func (p *pids) record(server string, pid int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.by == nil {
		p.by = map[string][]int{}
	}
	p.by[server] = append(p.by[server], pid)
}

func (p *pids) of(server string) []int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.by[server])
}

func echo(t *testing.T, m *Manager, server, msg string) {
	t.Helper()
	res, err := m.CallTool(context.Background(), server, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": msg}}, nil)
	if err != nil {
		t.Fatalf("echo on %s: %v", server, err)
	}
	if got := res.Content[0].(*mcp.TextContent).Text; got != msg {
		t.Fatalf("echo on %s = %q, want %q", server, got, msg)
	}
}

func TestApplyChangesOnlyWhatChanged(t *testing.T) {
	t.Parallel()
	var p pids
	var mu sync.Mutex
	changed := map[string]int{}
	m := NewManager([]*config.Server{demo("keep"), demo("edit"), demo("drop"), demo("tune")}, &Options{
		OnProcessStart: p.record,
		OnListChanged: func(server string, kind ChangeKind) {
			mu.Lock()
			changed[server]++
			mu.Unlock()
		},
	})
	defer m.Close()
	for _, s := range []string{"keep", "edit", "drop", "tune"} {
		echo(t, m, s, "before")
	}
	keepSession, _ := m.Session(context.Background(), "keep")
	oldEdit := m.Get("edit")

	edited := demo("edit", "-passthrough")
	tuned := demo("tune")
	tuned.ToolTimeout = 42 * time.Second
	a := m.Apply(Reconfig{Servers: []*config.Server{demo("keep"), edited, tuned, demo("new")}, Drain: time.Second})
	if want := (Applied{Added: []string{"new"}, Removed: []string{"drop"}, Replaced: []string{"edit"}, Updated: []string{"tune"}}); !slices.Equal(a.Added, want.Added) ||
		!slices.Equal(a.Removed, want.Removed) || !slices.Equal(a.Replaced, want.Replaced) || !slices.Equal(a.Updated, want.Updated) {
		t.Fatalf("applied %+v, want %+v", a, want)
	}
	select {
	case <-a.Done:
	case <-time.After(10 * time.Second):
		t.Fatal("the retired connections did not close")
	}

	// Unchanged: the same session, the same process.
	if cs, _ := m.Session(context.Background(), "keep"); cs != keepSession || len(p.of("keep")) != 1 {
		t.Errorf("keep was reconnected (pids %v)", p.of("keep"))
	}
	// Updated: the same process, the new per-call settings.
	echo(t, m, "tune", "after")
	if len(p.of("tune")) != 1 || m.Get("tune").Config().ToolTimeout != 42*time.Second {
		t.Errorf("tune: pids %v, tool_timeout %s", p.of("tune"), m.Get("tune").Config().ToolTimeout)
	}
	// Replaced: a new process; the old one stopped.
	echo(t, m, "edit", "after")
	if got := p.of("edit"); len(got) != 2 {
		t.Fatalf("edit processes %v, want the old and a new one", got)
	} else {
		waitDead(t, got[0], 5*time.Second)
	}
	// A request that meets the old connection goes to the new one.
	if _, err := oldEdit.Session(context.Background()); !errors.Is(err, ErrRetired) || !errors.Is(err, ErrClosed) {
		t.Errorf("old connection's Session = %v, want ErrRetired", err)
	}
	// Removed: stopped, and unknown from now on.
	waitDead(t, p.of("drop")[0], 5*time.Second)
	if _, err := m.CallTool(context.Background(), "drop", &mcp.CallToolParams{Name: "echo"}, nil); !errors.Is(err, ErrUnknown) {
		t.Errorf("call to a removed server: %v, want ErrUnknown", err)
	}
	// Added: connected without being asked.
	deadline := time.Now().Add(10 * time.Second)
	for m.Get("new").State() != StateConnected {
		if time.Now().After(deadline) {
			t.Fatalf("new server not connected: %+v", m.Get("new").Status())
		}
		time.Sleep(10 * time.Millisecond)
	}
	if names := m.Names(); !slices.Equal(names, []string{"keep", "edit", "tune", "new"}) {
		t.Errorf("names %v", names)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, s := range []string{"edit", "drop", "tune", "new"} {
		if changed[s] == 0 {
			t.Errorf("no list change reported for %s", s)
		}
	}
	if changed["keep"] != 0 {
		t.Errorf("list change reported for the unchanged server")
	}
}

func TestApplyDrainsCallsInFlight(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		work    int           // ms the call takes
		drain   time.Duration // the drain deadline
		wantCut bool
	}{
		{"the call finishes within the deadline", 800, 10 * time.Second, false},
		{"the call is cut at the deadline", 20000, 300 * time.Millisecond, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var p pids
			m := NewManager([]*config.Server{demo("busy")}, &Options{OnProcessStart: p.record})
			defer m.Close()
			echo(t, m, "busy", "up")
			type result struct {
				res *mcp.CallToolResult
				err error
			}
			done := make(chan result, 1)
			started := make(chan struct{})
			go func() {
				res, err := m.CallTool(context.Background(), "busy", &mcp.CallToolParams{Name: "slow",
					Arguments: map[string]any{"milliseconds": tt.work, "steps": 100}}, func(*mcp.ProgressNotificationParams) {
					select {
					case <-started:
					default:
						close(started)
					}
				})
				done <- result{res, err}
			}()
			<-started // in flight
			begun := time.Now()
			a := m.Apply(Reconfig{Drain: tt.drain}) // every server removed
			r := <-done
			if tt.wantCut {
				var cut *CutError
				if !errors.As(r.err, &cut) || cut.Server != "busy" || cut.Drain != tt.drain {
					t.Fatalf("call = %v, %v; want a CutError", r.res, r.err)
				}
			} else if r.err != nil || r.res.IsError {
				t.Fatalf("call = %+v, %v; want its result", r.res, r.err)
			}
			<-a.Done
			if took := time.Since(begun); tt.wantCut && took > tt.drain+5*time.Second {
				t.Errorf("the drain took %s", took)
			}
			waitDead(t, p.of("busy")[0], 5*time.Second)
		})
	}
}
