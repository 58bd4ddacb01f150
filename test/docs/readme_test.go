package docs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/mcphost/mcphost/host/cli"
	"github.com/mcphost/mcphost/internal/testing/testbin"
)

// maxNotRun is how many of README.md's command blocks may carry the
// NotRunMarker (today: `make run`, which serves until Ctrl-C, and `make
// test`, which would run this test again).
const maxNotRun = 2

// TestREADMECommands runs every command of README.md's sh and console
// blocks, as written, in order, in one shell (so that an `export` holds for
// the lines after it), from the repository's root, as a newcomer would:
//
//   - HOME and the config directories are a temporary directory's (nothing
//     of the machine's user is read or written), with a Claude Desktop
//     configuration to import; `make install` installs into a temporary
//     GOBIN that comes first on PATH, so `mcphost` is the one just built;
//   - bin/ holds what `make run` leaves there before it serves: `make
//     build`'s binaries and plugins, locked (`plugins lock`), which
//     config.hcl.example uses;
//   - MCPHOST_REGISTRY_URL is a local registry serving the official API's
//     shapes (startRegistry);
//   - each command's standard input is "y" lines: a question (client
//     connect, config approve) is answered yes.
//
// A command that exits non-zero fails the test, and so does an mcphost
// command that the CLI does not have (or a group that does not run: cobra
// prints its help and exits 0) or a flag it does not take. Blocks marked
// NotRunMarker are counted and reported, at most maxNotRun.
func TestREADMECommands(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("README's commands are sh, run on a pseudo-terminal by util-linux script")
	}
	if _, err := exec.LookPath("script"); err != nil {
		t.Fatal("util-linux script is needed to run the README's commands on a terminal (apt-get install bsdutils)")
	}
	root := testbin.Root()
	text, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	cmds := readmeCommands(t, string(text))
	for _, c := range cmds {
		if err := checkMcphostCommand(c.Text); err != nil {
			t.Errorf("README.md:%d: %s: %v", c.Line, c.Text, err)
		}
	}
	if t.Failed() {
		t.FailNow()
	}

	tmp := t.TempDir()
	env := newcomerEnv(t, tmp, startRegistry(t))
	seedClientConfigs(t, env)

	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Minute)
	defer cancel()
	// What `make run` does before it serves (scripts/run-example.sh).
	for _, argv := range [][]string{{"make", "build"}, {"./bin/mcphost", "--config", "config.hcl.example", "plugins", "lock"}} {
		c := exec.CommandContext(ctx, argv[0], argv[1:]...)
		c.Dir, c.Env = root, env.list()
		if out, err := c.CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", strings.Join(argv, " "), err, out)
		}
	}
	out, err := runCommands(ctx, root, env.list(), filepath.Join(tmp, "yes"), cmds)
	out = withoutEcho(out)
	if err != nil {
		t.Fatalf("%v\n%s", err, tail(out, 8000))
	}
	if testing.Verbose() {
		t.Logf("the README's commands:\n%s", tail(out, 30000))
	}
	t.Logf("ran %d README commands", len(cmds))
}

// readmeCommands returns the commands of text's blocks to run, after
// counting and reporting the blocks marked not to be run.
func readmeCommands(t *testing.T, text string) []Command {
	t.Helper()
	blocks, err := CommandBlocks(text)
	if err != nil {
		t.Fatalf("README.md: %v", err)
	}
	var cmds []Command
	notRun := 0
	for _, b := range blocks {
		if b.NotRun != "" {
			notRun++
			t.Logf("README.md:%d: %d command(s) not run: %s", b.Line, len(b.Commands), b.NotRun)
			continue
		}
		cmds = append(cmds, b.Commands...)
	}
	t.Logf("README.md: %d command blocks, %d not run", len(blocks), notRun)
	if notRun > maxNotRun {
		t.Errorf("README.md: %d blocks are marked %q; at most %d may be", notRun, NotRunMarker, maxNotRun)
	}
	if len(cmds) == 0 {
		t.Fatal("README.md: no command to run")
	}
	return cmds
}

// checkMcphostCommand returns an error when line runs an mcphost command
// the CLI does not have, one that does not run, or with a flag it does not
// take (nil for other programs' lines).
func checkMcphostCommand(line string) error {
	words := Words(line)
	if len(words) == 0 || words[0] != "mcphost" {
		return nil
	}
	root := cli.NewRootCommand()
	cmd, rest, err := root.Find(words[1:])
	if err != nil {
		return fmt.Errorf("unknown command: %w", err)
	}
	if !cmd.Runnable() {
		return fmt.Errorf("unknown command: %q is not a command that runs", cmd.CommandPath())
	}
	if err := cmd.ParseFlags(rest); err != nil {
		return fmt.Errorf("%s: %w", cmd.CommandPath(), err)
	}
	if args := cmd.Flags().Args(); cmd.Args != nil {
		if err := cmd.Args(cmd, args); err != nil {
			return fmt.Errorf("%s: %w", cmd.CommandPath(), err)
		}
	}
	return nil
}

// errCommandFailed is the error of runCommands when a command exits non-zero.
var errCommandFailed = errors.New("a README command failed")

// runCommands runs cmds in one bash in dir, in order, each with its
// standard input from the file yes (written here: "y" lines; an mcphost
// command reads them on a pseudo-terminal), and stops at
// the first that exits non-zero. It returns the shell's combined output.
func runCommands(ctx context.Context, dir string, env []string, yes string, cmds []Command) (string, error) {
	if err := os.WriteFile(yes, []byte(strings.Repeat("y\n", 64)), 0o600); err != nil {
		return "", err
	}
	var script strings.Builder
	script.WriteString("set -o pipefail\n")
	for _, c := range cmds {
		fmt.Fprintf(&script, "printf '%%s\\n' %s\n", shellQuote(fmt.Sprintf("+ README.md:%d: %s", c.Line, c.Text)))
		// On lines of their own: a comment at the command's end ends at
		// its newline, and the braces keep `export` and `cd` in this shell.
		text := c.Text
		if strings.HasPrefix(text, "mcphost ") {
			// On a terminal of its own (util-linux script), as a newcomer
			// types it: a command that shows a change and asks (client
			// connect, config approve) refuses to write without one.
			text = "script -qefc " + shellQuote(text) + " /dev/null"
		}
		fmt.Fprintf(&script, "{\n%s\n} < %s\n", text, shellQuote(yes))
		fmt.Fprintf(&script, "rc=$?; if [ $rc -ne 0 ]; then printf 'README.md:%d: exit status %%s\\n' $rc; exit 99; fi\n", c.Line)
	}
	sh := exec.CommandContext(ctx, "bash", "--noprofile", "--norc", "-c", script.String())
	sh.Dir, sh.Env = dir, env
	sh.WaitDelay = 5 * time.Second
	var out bytes.Buffer
	sh.Stdout, sh.Stderr = &out, &out
	err := sh.Run()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) && ee.ExitCode() == 99 {
			return out.String(), errCommandFailed
		}
		return out.String(), fmt.Errorf("the README's commands: %w", err)
	}
	return out.String(), nil
}

// withoutEcho drops from out the lines that are only the terminal's echo
// of a "y" answer (runCommands gives every mcphost command 64 of them on a
// pseudo-terminal, which echoes each): what is left is what the commands
// printed.
func withoutEcho(out string) string {
	lines := strings.Split(out, "\n")
	kept := lines[:0]
	for _, l := range lines {
		if strings.TrimRight(l, "\r") != "y" {
			kept = append(kept, l)
		}
	}
	return strings.Join(kept, "\n")
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}

// environment is a process environment under construction.
type environment map[string]string

func (e environment) list() []string {
	l := make([]string, 0, len(e))
	for k, v := range e {
		l = append(l, k+"="+v)
	}
	return l
}

// newcomerEnv is this process's environment with HOME, the config and cache
// directories and GOBIN under tmp, the Go toolchain's own directories kept
// (so that builds use the warm caches) and the make variables of an outer
// make removed, the variables that would point
// mcphost or a client elsewhere removed, and MCPHOST_REGISTRY_URL set to
// registry.
func newcomerEnv(t *testing.T, tmp, registry string) environment {
	t.Helper()
	out, err := exec.Command("go", "env", "GOPATH", "GOCACHE", "GOMODCACHE", "GOENV").Output()
	if err != nil {
		t.Fatalf("go env: %v", err)
	}
	goDirs := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(goDirs) != 4 {
		t.Fatalf("go env: %q", out)
	}
	env := environment{}
	for _, kv := range os.Environ() {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	for k := range env {
		if strings.HasPrefix(k, "MCPHOST_") || strings.HasPrefix(k, "XDG_") {
			delete(env, k)
		}
	}
	for _, k := range []string{"CLAUDE_CONFIG_DIR", "CODEX_HOME", "GEMINI_CLI_HOME", "APPDATA", "LOCALAPPDATA", "USERPROFILE", "GOBIN", "MAKEFLAGS", "MFLAGS", "MAKELEVEL"} {
		delete(env, k)
	}
	home := filepath.Join(tmp, "home")
	gobin := filepath.Join(tmp, "gobin")
	for _, d := range []string{home, gobin} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	env["HOME"] = home
	env["XDG_CONFIG_HOME"] = filepath.Join(home, ".config")
	env["XDG_CACHE_HOME"] = filepath.Join(home, ".cache")
	env["XDG_DATA_HOME"] = filepath.Join(home, ".local", "share")
	env["XDG_STATE_HOME"] = filepath.Join(home, ".local", "state")
	// The machine's managed file (/etc/mcphost/managed.hcl) is not the
	// newcomer's: none.
	env["MCPHOST_MANAGED_CONFIG"] = filepath.Join(tmp, "no-managed.hcl")
	env["MCPHOST_REGISTRY_URL"] = registry
	// The Go toolchain's directories and settings file (GOPROXY, GOFLAGS)
	// stay the machine's, wherever HOME is.
	env["GOPATH"], env["GOCACHE"], env["GOMODCACHE"], env["GOENV"] = goDirs[0], goDirs[1], goDirs[2], goDirs[3]
	env["GOBIN"] = gobin
	env["PATH"] = gobin + string(os.PathListSeparator) + env["PATH"]
	return env
}

// seedClientConfigs writes the Claude Desktop configuration that README's
// `mcphost import claude-desktop` reads, where the client keeps it on this
// operating system.
func seedClientConfigs(t *testing.T, env environment) {
	t.Helper()
	var path string
	switch runtime.GOOS {
	case "darwin":
		path = filepath.Join(env["HOME"], "Library", "Application Support", "Claude", "claude_desktop_config.json")
	default:
		path = filepath.Join(env["XDG_CONFIG_HOME"], "Claude", "claude_desktop_config.json")
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	doc := `{
  "mcpServers": {
    "memory": {
      "command": "npx",
      "args": ["-y", "@modelcontextprotocol/server-memory"],
      "env": {"MEMORY_FILE_PATH": "${HOME}/memory.json"}
    }
  }
}
`
	if err := os.WriteFile(path, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
}
