package sdk_test

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// fence matches a fenced code block of a Markdown file: its language and
// its text.
var fence = regexp.MustCompile("(?ms)^```(\\w*)\n(.*?)^```$")

// TestPluginGuideMatchesExample keeps docs/writing-a-plugin.md equal to what
// examples/transport-tcp builds and tests: its Go block is the example's
// main.go, and its shell blocks are, in order, the blocks of
// testdata/guide.sh, which the example's TestGuide runs (make example-test).
func TestPluginGuideMatchesExample(t *testing.T) {
	t.Parallel()
	guide := read(t, "../docs/writing-a-plugin.md")
	mainGo := read(t, "../examples/transport-tcp/main.go")
	mainGo = mainGo[strings.Index(mainGo, "package main"):]
	steps := strings.Split(strings.TrimSpace(read(t, "../examples/transport-tcp/testdata/guide.sh")), "\n\n")
	var goBlocks, shBlocks []string
	for _, m := range fence.FindAllStringSubmatch(guide, -1) {
		switch m[1] {
		case "go":
			goBlocks = append(goBlocks, m[2])
		case "sh":
			shBlocks = append(shBlocks, strings.TrimSuffix(m[2], "\n"))
		}
	}
	if len(goBlocks) != 1 || goBlocks[0] != mainGo {
		t.Errorf("the guide's Go block differs from examples/transport-tcp/main.go (%d Go blocks)", len(goBlocks))
	}
	if len(shBlocks) != len(steps) {
		t.Fatalf("the guide has %d shell blocks, examples/transport-tcp/testdata/guide.sh %d", len(shBlocks), len(steps))
	}
	for i := range steps {
		if shBlocks[i] != steps[i] {
			t.Errorf("the guide's shell block %d differs from block %d of examples/transport-tcp/testdata/guide.sh:\n%s\nwant:\n%s", i+1, i+1, shBlocks[i], steps[i])
		}
	}
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
