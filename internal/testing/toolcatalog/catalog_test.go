package toolcatalog

import (
	"testing"
)

// TestCatalogue: 50 servers of ToolsPerServer tools, names unique within a
// server, every query's tools present.
func TestCatalogue(t *testing.T) {
	t.Parallel()
	all := map[string]bool{}
	ss := Servers()
	if len(ss) != 50 {
		t.Errorf("%d servers, want 50", len(ss))
	}
	for _, s := range ss {
		if len(s.Tools) != ToolsPerServer {
			t.Errorf("server %s has %d tools, want %d", s.Name, len(s.Tools), ToolsPerServer)
		}
		for _, tl := range s.Tools {
			name := "mcp__" + s.Name + "__" + tl.Name
			if all[name] {
				t.Errorf("tool %s twice", name)
			}
			all[name] = true
		}
	}
	qs := Queries()
	if len(qs) < 50 {
		t.Errorf("%d queries, want at least 50", len(qs))
	}
	for _, q := range qs {
		for _, w := range q.Want {
			if !all[w] {
				t.Errorf("query %q wants %s, which is not in the catalogue", q.Text, w)
			}
		}
	}
}
