//go:build linux

// Package scripts_test runs the repository's scripts as a user does.
package scripts_test

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcphost/mcphost/internal/testing/testbin"
)

// TestMakeRunPrintsConnectCommands runs scripts/run-example.sh (what
// `make run` runs after `make build`) on a free loopback port and checks
// that, once the gateway listens, it prints the exact `mcphost client
// connect` commands for it, with the token's variable. Linux only: the
// script's gateway runs in a process group of its own (job control), found
// here through /proc to be stopped.
func TestMakeRunPrintsConnectCommands(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the example")
	}
	root := testbin.Root()
	build := exec.Command("make", "build")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("make build: %v\n%s", err, out)
	}
	home := t.TempDir()
	addr := fmt.Sprintf("127.0.0.1:%d", testbin.FreePort(t))
	cmd := exec.Command("bash", "scripts/run-example.sh", addr)
	cmd.Dir = root
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var env []string
	for _, e := range os.Environ() {
		if !strings.HasPrefix(e, "MCPHOST_") && !strings.HasPrefix(e, "HOME=") && !strings.HasPrefix(e, "XDG_CONFIG_HOME=") && !strings.HasPrefix(e, "PATH=") {
			env = append(env, e)
		}
	}
	cmd.Env = append(env, "HOME="+home, "PATH=/usr/bin:/bin",
		"DEMO_HTTP_PORT="+strconv.Itoa(testbin.FreePort(t)), "DEMO_WS_PORT="+strconv.Itoa(testbin.FreePort(t)))
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stop(t, cmd) })

	lines := make(chan string)
	go func() { // ends when the script's stdout closes (stop)
		defer close(lines)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	var got []string
	timeout := time.After(60 * time.Second)
read:
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("the script ended:\n%s", strings.Join(got, "\n"))
			}
			got = append(got, l)
			if strings.HasPrefix(l, "Undo with:") {
				break read
			}
		case <-timeout:
			t.Fatalf("no connect commands after 60s:\n%s", strings.Join(got, "\n"))
		}
	}
	out := strings.Join(got, "\n")
	bin := filepath.Join(root, "bin", "mcphost")
	url := "http://" + addr + "/mcp"
	want := []string{"Serving the unified registry at:\n  " + url}
	for _, c := range []string{"claude-code", "cursor", "vscode", "gemini", "codex"} {
		want = append(want, "  "+bin+" client connect "+c+" --http "+url+" --token-env MCPHOST_SERVE_TOKEN\n")
	}
	want = append(want, bin+" --config "+filepath.Join(root, "config.hcl.example")+" client connect claude-desktop")
	for _, w := range want {
		if !strings.Contains(out, w) {
			t.Errorf("output lacks %q:\n%s", w, out)
		}
	}
	if !regexp.MustCompile(`(?m)^  export MCPHOST_SERVE_TOKEN=[0-9a-f]{64}$`).MatchString(out) {
		t.Errorf("no export of the generated token:\n%s", out)
	}
	if strings.Index(out, "Authorization: Bearer") > strings.Index(out, "client connect") {
		t.Errorf("the commands come before the banner:\n%s", out)
	}
}

// stop ends the script and everything it started: SIGINT to each process
// group of its descendants (the gateway drains and exits, as on Ctrl-C),
// then SIGKILL to whatever is left.
func stop(t *testing.T, cmd *exec.Cmd) {
	groups := descendantGroups(cmd.Process.Pid)
	for _, g := range groups {
		syscall.Kill(-g, syscall.SIGINT)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(15 * time.Second):
		t.Error("the script did not end 15s after SIGINT")
		for _, g := range append(groups, cmd.Process.Pid) {
			syscall.Kill(-g, syscall.SIGKILL)
		}
		<-done
	}
}

// descendantGroups lists the process groups of pid's descendants other
// than pid's own, read from /proc.
func descendantGroups(pid int) []int {
	parent := map[int]int{}
	pgrp := map[int]int{}
	dirs, _ := os.ReadDir("/proc")
	for _, d := range dirs {
		p, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", d.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid pgrp …; comm may hold spaces.
		s := string(b)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(f) < 3 {
			continue
		}
		parent[p], _ = strconv.Atoi(f[1])
		pgrp[p], _ = strconv.Atoi(f[2])
	}
	seen := map[int]bool{}
	var out []int
	for p := range parent {
		for q := p; q > 1; q = parent[q] {
			if q == pid {
				if g := pgrp[p]; g != pid && !seen[g] {
					seen[g] = true
					out = append(out, g)
				}
				break
			}
		}
	}
	return out
}
