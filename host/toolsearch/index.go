// Package toolsearch ranks the tools of a registry by how well they match a
// query, for hosts whose registries are too large to hand a model whole
// (`mcphost serve --tool-search` serves a search tool in place of the full
// list).
//
// An Index holds a snapshot of tools. Each tool is a document of six fields:
// its server's name, its own name (as its server names it, snake, camel or
// kebab case split into words; not the registry name mcp__SERVER__TOOL,
// whose words are those of these two fields), its title, its description,
// the names of its parameters (the top-level properties of its input
// schema) and their descriptions. Search scores the documents with BM25F
// (BM25 over weighted fields, each length-normalised on its own), Lucene's
// idf = ln(1 + (N − df + 0.5)/(df + 0.5)), k1 = 1.2 and b = 0.75 by
// default; a field's weight says how much a word there counts against the
// same word in the description (Weights). Queries and fields go through one
// analyzer: words split at non-alphanumerics and at case changes,
// lower-cased, stop words dropped, English inflections folded (issues,
// created and creating match issue and create).
//
// An Index never changes; it is safe for concurrent use. Build a new one
// when the registry changes (registry.Registry.OnChange; `mcphost serve
// --tool-search` rebuilds on every Sync that sees the tools change):
// building one over 1,000 tools takes about 10 ms, a query about 25 µs (see
// BENCHMARKS.md, "(i) tool search").
//
// Why not a search library: bleve v2, the usual choice in Go, links 80
// more packages into mcphost and adds 9.5 MB to its binary (6.5 MB
// stripped), for an index of a few thousand short documents held in
// memory. This package is a few hundred lines (about 17 KB of code in the
// binary) and needs no dependency. On the benchmark catalogue
// (internal/testing/toolcatalog: 1,000 tools) and its first 70 queries it finds
// the right tool first for 41 queries and among the first five for 57;
// bleve v2.6.3 with BM25 scoring and its English analyzer (stemming, stop
// words) found 40 and 53 at best (all fields in one, 0.13 s to index), 33
// and 51 with the same field weights as here. Many of those queries name
// their tool, though: on the 30 of the catalogue's 83 queries that share
// no word with the right tool's name (SharedTerms), it finds 6 first and
// 14 among the first five.
package toolsearch

import (
	"cmp"
	"errors"
	"math"
	"slices"

	"github.com/mcphost/mcphost/host/registry"
)

// DefaultLimit is how many results Search returns when SearchOptions.Limit
// is not set.
const DefaultLimit = 5

// ErrEmptyQuery is returned by Search for a query with no words to search
// for (empty, or only punctuation).
var ErrEmptyQuery = errors.New("the query has no words to search for")

// Weights are the fields' weights in the score: a word in a field counts
// this many times a word in the description. A weight of 0 leaves the field
// out.
type Weights struct {
	Server            float64 // the server's name
	Name              float64 // the tool's own name
	Title             float64 // the title, when it is not the name
	Description       float64
	Params            float64 // top-level parameter names
	ParamDescriptions float64 // their descriptions
}

// DefaultWeights are the weights used when Options.Weights is nil: names
// and titles are short and chosen with care, so a word there says more than
// one in a paragraph of description; parameter descriptions say the least.
var DefaultWeights = Weights{Server: 1.5, Name: 3, Title: 2, Description: 1, Params: 1, ParamDescriptions: 0.5}

// Options configures an Index. Nil options mean defaults.
type Options struct {
	// Weights of the fields. OPTIONAL: DefaultWeights.
	Weights *Weights
	// K1 is BM25's term-frequency saturation. OPTIONAL: 1.2.
	K1 float64
	// B is BM25's length normalisation, from 0 (none) to 1. OPTIONAL: 0.75
	// (use a negative value for 0).
	B float64
}

// field is one of a document's fields.
type field int

const (
	fServer field = iota
	fName
	fTitle
	fDescription
	fParams
	fParamDescriptions
	numFields
)

func (w *Weights) of(f field) float64 {
	return [numFields]float64{w.Server, w.Name, w.Title, w.Description, w.Params, w.ParamDescriptions}[f]
}

// posting is a term's occurrence in a document: its BM25F pseudo-frequency
// (the weighted, length-normalised sum of its counts in the fields).
type posting struct {
	doc int32
	tf  float32
}

// Index is a search index over a snapshot of tools. It never changes after
// New and is safe for concurrent use.
type Index struct {
	tools    []*registry.Tool
	servers  []string // of the tools, sorted, each once
	byName   map[string]int32
	postings map[string][]posting
	k1       float64
}

// New indexes tools. A tool appears once, by its registry name; a later
// tool of the same name is ignored.
func New(tools []*registry.Tool, opts *Options) *Index {
	var o Options
	if opts != nil {
		o = *opts
	}
	w := DefaultWeights
	if o.Weights != nil {
		w = *o.Weights
	}
	if o.K1 <= 0 {
		o.K1 = 1.2
	}
	switch {
	case o.B == 0:
		o.B = 0.75
	case o.B < 0:
		o.B = 0
	case o.B > 1:
		o.B = 1
	}
	ix := &Index{byName: make(map[string]int32, len(tools)), postings: map[string][]posting{}, k1: o.K1}
	// Each document's term counts per field, and its fields' lengths.
	type doc struct {
		terms  []string
		counts [][numFields]float64 // of terms[i]
		lens   [numFields]float64
	}
	docs := make([]doc, 0, len(tools))
	var total [numFields]float64
	a := newAnalyzer()
	at := map[string]int{} // a term's index in the current document
	for _, t := range tools {
		if t == nil {
			continue
		}
		if _, dup := ix.byName[t.Name]; dup {
			continue
		}
		ix.byName[t.Name] = int32(len(ix.tools))
		ix.tools = append(ix.tools, t)
		var d doc
		clear(at)
		add := func(f field, text string) {
			if w.of(f) <= 0 {
				return
			}
			a.terms(text, func(term string) {
				i, ok := at[term]
				if !ok {
					i = len(d.terms)
					at[term] = i
					d.terms = append(d.terms, term)
					d.counts = append(d.counts, [numFields]float64{})
				}
				d.counts[i][f]++
				d.lens[f]++
			})
		}
		add(fServer, t.Server)
		add(fName, t.Original)
		if t.DisplayName != t.Original {
			add(fTitle, t.DisplayName)
		}
		add(fDescription, t.Description)
		for name, desc := range params(t.InputSchema) {
			add(fParams, name)
			add(fParamDescriptions, desc)
		}
		for f := range numFields {
			total[f] += d.lens[f]
		}
		docs = append(docs, d)
	}
	for _, t := range ix.tools {
		ix.servers = append(ix.servers, t.Server)
	}
	slices.Sort(ix.servers)
	ix.servers = slices.Compact(ix.servers)
	var avg [numFields]float64
	for f := range numFields {
		if len(docs) > 0 {
			avg[f] = total[f] / float64(len(docs))
		}
	}
	for i, d := range docs {
		for j, term := range d.terms {
			c := &d.counts[j]
			tf := 0.0
			for f := range numFields {
				if c[f] == 0 || avg[f] == 0 {
					continue
				}
				tf += w.of(f) * c[f] / (1 - o.B + o.B*d.lens[f]/avg[f])
			}
			if tf > 0 {
				ix.postings[term] = append(ix.postings[term], posting{doc: int32(i), tf: float32(tf)})
			}
		}
	}
	return ix
}

// params yields the top-level parameter names of an input schema, with
// their descriptions ("" if none).
func params(schema any) func(yield func(name, desc string) bool) {
	return func(yield func(string, string) bool) {
		m, _ := schema.(map[string]any)
		props, _ := m["properties"].(map[string]any)
		// In name order: the index is the same whatever the map's order.
		names := make([]string, 0, len(props))
		for name := range props {
			names = append(names, name)
		}
		slices.Sort(names)
		for _, name := range names {
			desc := ""
			if p, ok := props[name].(map[string]any); ok {
				desc, _ = p["description"].(string)
			}
			if !yield(name, desc) {
				return
			}
		}
	}
}

// Len returns the number of tools indexed.
func (ix *Index) Len() int { return len(ix.tools) }

// Servers returns the servers of the tools indexed, sorted (the caller
// must not modify the slice).
func (ix *Index) Servers() []string { return ix.servers }

// Tool returns the indexed tool of a registry name.
func (ix *Index) Tool(name string) (*registry.Tool, bool) {
	i, ok := ix.byName[name]
	if !ok {
		return nil, false
	}
	return ix.tools[i], true
}

// SearchOptions narrows a search. Nil options mean defaults.
type SearchOptions struct {
	// Limit is the most results returned. OPTIONAL: DefaultLimit.
	Limit int
	// Server keeps only the tools of this server. OPTIONAL.
	Server string
	// Filter keeps only the tools for which it returns true (for example,
	// those the permission rules do not deny). It is called only for tools
	// that match the query, best first, until Limit are kept. OPTIONAL.
	Filter func(*registry.Tool) bool
}

// Result is one match.
type Result struct {
	Tool *registry.Tool
	// Score is the tool's BM25F score: higher is better; only comparable
	// within one search.
	Score float64
}

// Search returns the tools that match query best, best first (equal scores
// in name order). A tool matches if any of the query's terms occurs in one
// of its fields. Only the first MaxQueryBytes of query are read. It returns
// ErrEmptyQuery for a query with no words.
func (ix *Index) Search(query string, opts *SearchOptions) ([]Result, error) {
	var o SearchOptions
	if opts != nil {
		o = *opts
	}
	if o.Limit <= 0 {
		o.Limit = DefaultLimit
	}
	qts := queryTerms(query)
	if len(qts) == 0 {
		return nil, ErrEmptyQuery
	}
	scores := make([]float64, len(ix.tools))
	var matched []int32
	n := float64(len(ix.tools))
	for _, term := range qts {
		ps := ix.postings[term]
		if len(ps) == 0 {
			continue
		}
		df := float64(len(ps))
		idf := math.Log(1 + (n-df+0.5)/(df+0.5))
		for _, p := range ps {
			if scores[p.doc] == 0 {
				matched = append(matched, p.doc)
			}
			tf := float64(p.tf)
			scores[p.doc] += idf * tf * (ix.k1 + 1) / (ix.k1 + tf)
		}
	}
	slices.SortFunc(matched, func(a, b int32) int {
		if c := cmp.Compare(scores[b], scores[a]); c != 0 {
			return c
		}
		return cmp.Compare(ix.tools[a].Name, ix.tools[b].Name)
	})
	var out []Result
	for _, d := range matched {
		t := ix.tools[d]
		if o.Server != "" && t.Server != o.Server {
			continue
		}
		if o.Filter != nil && !o.Filter(t) {
			continue
		}
		out = append(out, Result{Tool: t, Score: scores[d]})
		if len(out) == o.Limit {
			break
		}
	}
	return out, nil
}
