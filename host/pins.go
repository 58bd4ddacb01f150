package host

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"

	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/registry"
)

// ErrToolChanged is returned for a call to a tool whose definition changed
// since it was first seen (a "rug pull"): it stays blocked until approved.
var ErrToolChanged = errors.New("tool definition changed")

// pins remembers the fingerprint of every tool definition the host has seen
// (trust on first sight). A later, different definition of the same tool
// blocks it until `mcphost tools approve` records the new one.
type pins struct {
	path string // "" keeps pins in memory only

	mu   sync.Mutex
	seen map[string]string // registry name -> fingerprint
}

func loadPins(path string) (*pins, error) {
	p := &pins{path: path, seen: map[string]string{}}
	if path == "" {
		return p, nil
	}
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return p, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading tool pins: %w", err)
	}
	if err := json.Unmarshal(b, &p.seen); err != nil {
		return nil, fmt.Errorf("tool pins file %s is damaged: %w", path, err)
	}
	return p, nil
}

// observe pins the tools it has not seen and reports which ones changed.
func (p *pins) observe(tools []*registry.Tool) map[string]bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	changed := map[string]bool{}
	added := false
	for _, t := range tools {
		fp, ok := p.seen[t.Name]
		switch {
		case !ok:
			p.seen[t.Name] = t.Fingerprint
			added = true
		case fp != t.Fingerprint:
			changed[t.Name] = true
		}
	}
	if added {
		p.saveLocked()
	}
	return changed
}

// check fails for a tool whose definition differs from its pin (pinning it
// if it was never seen).
func (p *pins) check(t *registry.Tool) error {
	if changed := p.observe([]*registry.Tool{t}); changed[t.Name] {
		return fmt.Errorf("%w: %s is not what it was when first seen (its description, schema or annotations changed); review it with `mcphost tools --server %s` and approve it with `mcphost tools approve %s`",
			ErrToolChanged, t.Name, t.Server, t.Name)
	}
	return nil
}

// approve records a tool's current definition.
func (p *pins) approve(t *registry.Tool) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.seen[t.Name] = t.Fingerprint
	return p.saveLocked()
}

func (p *pins) saveLocked() error {
	if p.path == "" {
		return nil
	}
	b, err := json.MarshalIndent(p.seen, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(p.path), 0o700); err != nil {
		return err
	}
	return config.WriteFileAtomic(p.path, b, 0o600)
}
