package toolsearch

import (
	"testing"

	"github.com/mcphost/mcphost/internal/testing/toolcatalog"
)

// BenchmarkIndexBuild indexes the benchmark catalogue's 1,000 tools.
func BenchmarkIndexBuild(b *testing.B) {
	tools := catalogue(b)
	b.ReportAllocs()
	for b.Loop() {
		New(tools, nil)
	}
}

// BenchmarkIndexSearch runs the catalogue's queries in turn against its index.
func BenchmarkIndexSearch(b *testing.B) {
	ix := New(catalogue(b), nil)
	qs := toolcatalog.Queries()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if _, err := ix.Search(qs[i%len(qs)].Text, nil); err != nil {
			b.Fatal(err)
		}
	}
}
