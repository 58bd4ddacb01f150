//go:build unix

// (The host refuses a plugin directory writable by group or others, by its
// unix mode bits; this test follows the guide on unix systems.)

package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestGuide runs the steps of docs/writing-a-plugin.md, kept verbatim in
// testdata/guide.sh, with the real tools: from an empty directory outside
// any module it makes a module that depends on the SDK, builds the plugin
// into the plugin directory of a fresh HOME, locks it with the real
// mcphost, starts the real demo server behind a TCP port, configures a
// server with transport "tcp", and lists and calls it through the host.
//
// mcphost and mcphost-demo are built from the source of the
// github.com/mcphost/mcphost module this module uses (a replace in this
// checkout). Only two steps differ from the guide, both for the test:
// 127.0.0.1:9000 becomes a free port, and `go get …/sdk@latest` becomes a
// replace of the same SDK this module builds against when go.mod replaces it.
func TestGuide(t *testing.T) {
	if testing.Short() {
		t.Skip("builds mcphost")
	}
	script, err := os.ReadFile("testdata/guide.sh")
	if err != nil {
		t.Fatal(err)
	}
	mainGo, err := os.ReadFile("main.go")
	if err != nil {
		t.Fatal(err)
	}
	src, replaced := mcphostModule(t)
	bin := t.TempDir()
	build := exec.Command("go", "build", "-o", bin+string(filepath.Separator), "./cmd/mcphost", "./cmd/mcphost-demo")
	build.Dir = src
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building mcphost in %s: %v\n%s", src, err, out)
	}

	home, work := t.TempDir(), t.TempDir()
	g := &guide{t: t, home: home, dir: work, bin: bin, src: src, replaced: replaced, addr: freeAddr(t), outputs: map[string]string{}}
	blocks := strings.Split(strings.TrimSpace(string(script)), "\n\n")
	if len(blocks) != 3 {
		t.Fatalf("testdata/guide.sh has %d blocks, want 3: make the module, build and lock, try it", len(blocks))
	}
	g.run(blocks[0])
	// The guide: "Save this as main.go".
	if err := os.WriteFile(filepath.Join(g.dir, "main.go"), mainGo, 0o644); err != nil {
		t.Fatal(err)
	}
	g.run(blocks[1])
	g.run(blocks[2])

	// The guide's expected output of the last two steps.
	servers := regexp.MustCompile(`(?m)^demo\s+user\s+\S+config\.hcl\s+tcp\s+connected\s+8\s*$`)
	if out := g.outputs["mcphost servers"]; !servers.MatchString(out) {
		t.Errorf("mcphost servers: want demo connected over tcp with 8 tools:\n%s", out)
	}
	if out := g.outputs[`mcphost call mcp__demo__echo '{"message":"hello over tcp"}'`]; out != "hello over tcp\n" {
		t.Errorf("mcphost call printed %q, want %q", out, "hello over tcp\n")
	}
}

// mcphostModule returns the directory of the mcphost module this module
// builds against, and whether go.mod replaces it with a local directory.
func mcphostModule(t *testing.T) (dir string, replaced bool) {
	t.Helper()
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}\t{{with .Replace}}replaced{{end}}", "github.com/mcphost/mcphost").Output()
	if err != nil {
		t.Fatalf("go list -m github.com/mcphost/mcphost: %v", err)
	}
	dir, rep, _ := strings.Cut(strings.TrimSpace(string(out)), "\t")
	if dir == "" {
		t.Fatal("github.com/mcphost/mcphost has no directory; run go mod download")
	}
	return dir, rep == "replaced"
}

// freeAddr returns a 127.0.0.1 address with a port free at the time.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// guide runs the lines of the guide's shell blocks: the few shell forms it
// uses (mkdir, cd, chmod, a background command, a heredoc appended to a
// file) and commands, with ~ as the fresh HOME. mcphost runs with that HOME;
// go with the caller's environment (its module and build caches).
type guide struct {
	t         *testing.T
	home, dir string
	bin, src  string
	replaced  bool
	addr      string
	outputs   map[string]string
}

func (g *guide) run(block string) {
	t := g.t
	t.Helper()
	lines := strings.Split(block, "\n")
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		args := g.fields(strings.ReplaceAll(line, "127.0.0.1:9000", g.addr))
		switch {
		case len(args) == 0 || strings.HasPrefix(args[0], "#"):
		case args[0] == "mkdir":
			p := args[len(args)-1]
			if err := os.MkdirAll(g.path(p), 0o777); err != nil { // (0777 less the umask, as mkdir)
				t.Fatal(err)
			}
		case args[0] == "cd":
			g.dir = g.path(args[1])
		case args[0] == "chmod":
			var mode os.FileMode
			fmt.Sscanf(args[1], "%o", &mode)
			if err := os.Chmod(g.path(args[2]), mode); err != nil {
				t.Fatal(err)
			}
		case args[0] == "cat" && len(args) == 4 && args[1] == ">>" && strings.HasPrefix(args[3], "<<"):
			end := strings.Trim(strings.TrimPrefix(args[3], "<<"), "'")
			var body strings.Builder
			for i++; i < len(lines) && lines[i] != end; i++ {
				body.WriteString(strings.ReplaceAll(lines[i], "127.0.0.1:9000", g.addr) + "\n")
			}
			f, err := os.OpenFile(g.path(args[2]), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
			if err == nil {
				_, err = f.WriteString(body.String())
				err = errors.Join(err, f.Close())
			}
			if err != nil {
				t.Fatal(err)
			}
		case args[len(args)-1] == "&":
			g.background(args[:len(args)-1])
		case args[0] == "go" && args[1] == "get" && g.replaced:
			// This checkout's SDK is the one next to it, not the published
			// @latest: use it as the example's go.mod does.
			g.exec(line, "go", "mod", "edit", "-replace", "github.com/mcphost/mcphost="+g.src)
			g.exec(line, "go", "mod", "tidy")
		default:
			g.outputs[line] = g.exec(line, args[0], args[1:]...)
		}
	}
}

// path resolves a path of the guide: ~ is HOME, a relative path is in the
// current directory.
func (g *guide) path(p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(g.dir, p)
}

// fields splits a line as the shell does for the guide's lines: words
// separated by spaces, '…' quoted, ~/ at the start of a word is HOME.
func (g *guide) fields(line string) []string {
	var out []string
	for rest := strings.TrimSpace(line); rest != ""; rest = strings.TrimSpace(rest) {
		var w string
		if strings.HasPrefix(rest, "'") {
			end := strings.Index(rest[1:], "'")
			if end < 0 {
				g.t.Fatalf("unterminated quote in %q", line)
			}
			w, rest = rest[1:end+1], rest[end+2:]
		} else {
			w, rest, _ = strings.Cut(rest, " ")
			if strings.HasPrefix(w, "~/") {
				w = filepath.Join(g.home, w[2:])
			}
		}
		out = append(out, w)
	}
	return out
}

// command prepares one of the guide's commands: mcphost and mcphost-demo
// from the built binaries with the fresh HOME, anything else (go) as is.
func (g *guide) command(name string, args ...string) *exec.Cmd {
	if name != "mcphost" && name != "mcphost-demo" {
		cmd := exec.Command(name, args...)
		cmd.Dir = g.dir
		return cmd
	}
	cmd := exec.Command(filepath.Join(g.bin, name), args...)
	cmd.Dir = g.dir
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if k == "HOME" || strings.HasPrefix(k, "XDG_") || strings.HasPrefix(k, "MCPHOST_") {
			continue
		}
		cmd.Env = append(cmd.Env, kv)
	}
	cmd.Env = append(cmd.Env, "HOME="+g.home, "XDG_CACHE_HOME="+filepath.Join(g.home, ".cache"),
		"MCPHOST_MANAGED_CONFIG="+filepath.Join(g.home, "managed.hcl")) // not /etc's
	return cmd
}

// exec runs a command to its end and returns its standard output.
func (g *guide) exec(line, name string, args ...string) string {
	g.t.Helper()
	cmd := g.command(name, args...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		g.t.Fatalf("%s (as %s %q): %v\n%s%s", line, name, args, err, out, stderr.String())
	}
	return string(out)
}

// background starts a server and returns once it says it listens; the
// test's cleanup stops it.
func (g *guide) background(args []string) {
	t := g.t
	t.Helper()
	cmd := g.command(args[0], args[1:]...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	listening := make(chan error, 1)
	go func() { // ends when the server's stderr closes, at the latest when the cleanup kills it
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if strings.Contains(sc.Text(), "listening on tcp://"+g.addr) {
				listening <- nil
				io.Copy(io.Discard, stderr)
				return
			}
		}
		listening <- fmt.Errorf("%s ended before it listened on %s", args[0], g.addr)
	}()
	select {
	case err := <-listening:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("%s did not listen within 30s", args[0])
	}
}
