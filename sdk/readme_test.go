package sdk_test

import (
	"os"
	"strings"
	"testing"
)

// TestREADMEPluginExampleCompiles keeps the example plugin of
// docs/writing-a-plugin.md equal to
// examples/transport-tcp/main.go, which go build and go vet check.
func TestREADMEPluginExampleCompiles(t *testing.T) {
	t.Parallel()
	readme, err := os.ReadFile("../docs/writing-a-plugin.md")
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile("../examples/transport-tcp/main.go")
	if err != nil {
		t.Fatal(err)
	}
	code := string(src)
	code = code[strings.Index(code, "package main"):]
	if !strings.Contains(string(readme), "```go\n"+code+"```") {
		t.Error("docs/writing-a-plugin.md's plugin example differs from examples/transport-tcp/main.go")
	}
}
