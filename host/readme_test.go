package host_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"strings"
	"testing"
)

// TestREADMELibrarySnippet: the library snippet of docs/library.md is the body of
// Example (example_test.go), which runs with `go test`: the docs cannot
// drift from code that compiles and works.
func TestREADMELibrarySnippet(t *testing.T) {
	readme, err := os.ReadFile("../docs/library.md")
	if err != nil {
		t.Fatal(err)
	}
	_, block, ok := strings.Cut(string(readme), "```go\n")
	if !ok {
		t.Fatal("docs/library.md has no go block")
	}
	block, _, _ = strings.Cut(block, "```")

	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "example_test.go", nil, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	src, _ := os.ReadFile("example_test.go")
	var body string
	for _, d := range f.Decls {
		if fn, ok := d.(*ast.FuncDecl); ok && fn.Name.Name == "Example" {
			body = string(src[fset.Position(fn.Body.Lbrace).Offset+1 : fset.Position(fn.Body.Rbrace).Offset])
		}
	}
	if body == "" {
		t.Fatal("no func Example in example_test.go")
	}
	var want []string
	for _, line := range strings.Split(strings.Trim(body, "\n"), "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "// Output:") {
			break
		}
		want = append(want, strings.TrimPrefix(line, "\t"))
	}
	if got, w := strings.TrimSpace(block), strings.TrimSpace(strings.Join(want, "\n")); got != w {
		t.Errorf("docs/library.md's snippet differs from func Example:\n--- docs/library.md\n%s\n--- Example\n%s", got, w)
	}
}
