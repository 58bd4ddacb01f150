package toolcatalog

import (
	"slices"

	"github.com/mcphost/mcphost/host/registry"
)

// Tally counts where the right tool of each query came in a ranking: first,
// among the first five, and the same on the queries that share no word
// with the name of a tool that answers them (which the tool's name alone
// does not find).
type Tally struct {
	Queries, At1, At5                  int
	Disjoint, DisjointAt1, DisjointAt5 int
}

// Add records query q's ranking (registry names, best first, at most five
// counted) and returns the right tool's place in it, or -1. shared returns
// the words a query shares with a tool's own name, as the ranker splits
// and stems them (toolsearch.SharedTerms).
func (t *Tally) Add(q Query, ranked []string, shared func(query, tool string) []string) int {
	disjoint := true
	for _, w := range q.Want {
		_, tool, _ := registry.ParseName(w)
		disjoint = disjoint && len(shared(q.Text, tool)) == 0
	}
	i := slices.IndexFunc(ranked, func(n string) bool { return slices.Contains(q.Want, n) })
	if i >= 5 {
		i = -1
	}
	t.Queries++
	if disjoint {
		t.Disjoint++
	}
	if i == 0 {
		t.At1++
		if disjoint {
			t.DisjointAt1++
		}
	}
	if i >= 0 {
		t.At5++
		if disjoint {
			t.DisjointAt5++
		}
	}
	return i
}

// Recall returns the shares at one and at five, over all the queries and
// over the disjoint ones (0 when there are none).
func (t *Tally) Recall() (at1, at5, disjointAt1, disjointAt5 float64) {
	if t.Queries > 0 {
		at1, at5 = float64(t.At1)/float64(t.Queries), float64(t.At5)/float64(t.Queries)
	}
	if t.Disjoint > 0 {
		disjointAt1, disjointAt5 = float64(t.DisjointAt1)/float64(t.Disjoint), float64(t.DisjointAt5)/float64(t.Disjoint)
	}
	return
}
