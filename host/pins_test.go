package host

import (
	"context"
	"errors"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host/registry"
	"github.com/mcphost/mcphost/host/state"
)

// countingPins counts the requests to a pin store, and fails them while
// down (the shared state unreachable: no real Redis is needed to say it is
// down, and the Redis backend's own errors are tested with a real server).
type countingPins struct {
	state.Pins
	calls int
	down  bool
}

var errDown = errors.New("state unreachable")

func (c *countingPins) Pin(ctx context.Context, fps map[string]string) (map[string]string, error) {
	c.calls++
	if c.down {
		return nil, errDown
	}
	return c.Pins.Pin(ctx, fps)
}

func (c *countingPins) Approve(ctx context.Context, name, fp string) error {
	c.calls++
	if c.down {
		return errDown
	}
	return c.Pins.Approve(ctx, name, fp)
}

// TestSharedPins: two hosts (replicas) sharing a pin store: the first
// sight on one pins the tool for both; a changed definition is blocked on
// both until approved on either; a call whose definition matches its pin
// asks the store nothing; with the store unreachable, a tool not known to
// match is refused (fail closed), one known to match is not.
func TestSharedPins(t *testing.T) {
	shared, _ := state.NewFilePins("")
	ca, cb := &countingPins{Pins: shared}, &countingPins{Pins: shared}
	a, b := newPins(ca), newPins(cb)
	v1 := &registry.Tool{Name: "mcp__s__t", Server: "s", Fingerprint: "v1"}
	v2 := &registry.Tool{Name: "mcp__s__t", Server: "s", Fingerprint: "v2"}

	if changed := a.observe([]*registry.Tool{v1}); len(changed) != 0 {
		t.Fatalf("first sight: changed %v", changed)
	}
	if err := b.check(v2); !errors.Is(err, ErrToolChanged) {
		t.Fatalf("a changed definition on the other replica: %v, want ErrToolChanged", err)
	}
	if changed := a.observe([]*registry.Tool{v2}); !errors.Is(changed[v2.Name], ErrToolChanged) {
		t.Fatal("a changed definition is not blocked where it was first seen")
	}
	if err := b.approve(v2); err != nil {
		t.Fatal(err)
	}
	if err := a.check(v2); err != nil {
		t.Fatalf("approved on the other replica, still blocked: %v", err)
	}
	before := ca.calls
	for range 5 {
		if err := a.check(v2); err != nil {
			t.Fatal(err)
		}
	}
	if ca.calls != before {
		t.Errorf("checks of a matching definition asked the store %d times, want 0", ca.calls-before)
	}
	ca.down = true
	if err := a.check(v2); err != nil {
		t.Errorf("a definition known to match, store down: %v", err)
	}
	v3 := &registry.Tool{Name: "mcp__s__u", Server: "s", Fingerprint: "v1"}
	if err := a.check(v3); !errors.Is(err, ErrPinsUnavailable) {
		t.Errorf("an unknown tool with the store down: %v, want ErrPinsUnavailable", err)
	}
	if changed := a.observe([]*registry.Tool{v2, v3}); changed[v2.Name] != nil || !errors.Is(changed[v3.Name], ErrPinsUnavailable) {
		t.Errorf("observe with the store down: changed %v, want only %s", changed, v3.Name)
	}
}

// TestPinsOfEarlierVersions: a pin recorded by an earlier version (whose
// fingerprint covered neither _meta, icons, output schema nor execution)
// stays valid for the definition it was made of — by observe and by check
// — and is upgraded to the fingerprint that covers them; a tool whose
// ui.resourceUri then changes is blocked.
func TestPinsOfEarlierVersions(t *testing.T) {
	ctx := context.Background()
	tool := func(uri string) *registry.Tool {
		mt := &mcp.Tool{Name: "t", Description: "d", InputSchema: map[string]any{"type": "object"},
			Meta: mcp.Meta{"ui": map[string]any{"resourceUri": uri}}}
		return &registry.Tool{Name: "mcp__s__t", Server: "s", Fingerprint: registry.Fingerprint(mt), PriorFingerprint: registry.PriorFingerprint(mt)}
	}
	v1, moved := tool("ui://app/view.html"), tool("ui://evil/view.html")
	for _, how := range []string{"observe", "check"} {
		t.Run(how, func(t *testing.T) {
			store, _ := state.NewFilePins("")
			if _, err := store.Pin(ctx, map[string]string{v1.Name: v1.PriorFingerprint}); err != nil { // (an earlier version's pin)
				t.Fatal(err)
			}
			p := newPins(store)
			var err error
			if how == "observe" {
				err = p.observe([]*registry.Tool{v1})[v1.Name]
			} else {
				err = p.check(v1)
			}
			if err != nil {
				t.Fatalf("the pinned definition: %v", err)
			}
			if got, _ := store.Pin(ctx, map[string]string{v1.Name: "x"}); got[v1.Name] != v1.Fingerprint {
				t.Errorf("pin %s, want upgraded to %s", got[v1.Name], v1.Fingerprint)
			}
			if err := newPins(store).check(moved); !errors.Is(err, ErrToolChanged) {
				t.Errorf("ui.resourceUri changed under the pin: %v, want ErrToolChanged", err)
			}
		})
	}
}
