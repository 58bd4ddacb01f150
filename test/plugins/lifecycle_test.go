//go:build unix

package plugins

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/plugins"
)

// canary counts the connections made to a listener.
func canary(t *testing.T, network, addr string) (net.Listener, *atomic.Int32) {
	t.Helper()
	ln, err := net.Listen(network, addr)
	if err != nil {
		t.Fatal(err)
	}
	var hits atomic.Int32
	go func() { // ends when the listener is closed at cleanup
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			hits.Add(1)
			c.Close()
		}
	}()
	t.Cleanup(func() { ln.Close() })
	return ln, &hits
}

// alive reports whether pid runs (a zombie does not count).
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	return len(f) > 0 && f[0] != "Z"
}

func readPID(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("the fake plugin did not record its pid: %v", err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	if pid <= 1 {
		t.Fatalf("bad pid %q", b)
	}
	return pid
}

// TestRefusedHandshakeAddressIsNeverDialled: a plugin whose handshake names
// an address the host refuses is stopped without anything dialling that
// address (go-plugin's Kill used to connect to it for a graceful shutdown),
// and the plugin and its child are gone.
func TestRefusedHandshakeAddressIsNeverDialled(t *testing.T) {
	unixCanary, unixHits := canary(t, "unix", filepath.Join(t.TempDir(), "canary.sock"))
	tcpCanary, tcpHits := canary(t, "tcp", "127.0.0.1:0")
	port := tcpCanary.Addr().(*net.TCPAddr).Port
	for _, tc := range []struct {
		name, line, want string
		hits             *atomic.Int32
	}{
		{"foreign unix socket", "1|1|unix|" + unixCanary.Addr().String() + "|grpc", "outside the host's directory", unixHits},
		{"loopback by name", fmt.Sprintf("1|1|tcp|localhost:%d|grpc", port), "not on a loopback IP address", tcpHits},
		{"private address", "1|1|tcp|10.0.0.1:1|grpc", "not on loopback", nil},
		{"metadata address", "1|1|tcp|169.254.169.254:80|grpc", "not on loopback", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "fake")
			script := fmt.Sprintf("#!/bin/sh\necho $$ > %[1]s/pid\nsleep 1000 & echo $! > %[1]s/child\necho '%[2]s'\nwait\n", dir, tc.line)
			if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
				t.Fatal(err)
			}
			sum, _ := plugins.FileSHA256(path)
			err := start(t, &config.Plugin{Name: "fake", Path: path, SHA256: sum})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want it to say %q", err, tc.want)
			}
			if tc.hits != nil && tc.hits.Load() != 0 {
				t.Errorf("the refused address was dialled %d times", tc.hits.Load())
			}
			for _, kind := range []string{"pid", "child"} {
				pid := readPID(t, filepath.Join(dir, kind))
				deadline := time.Now().Add(3 * time.Second)
				for alive(pid) {
					if time.Now().After(deadline) {
						syscall.Kill(pid, syscall.SIGKILL)
						t.Fatalf("the plugin's %s (pid %d) survived", kind, pid)
					}
					time.Sleep(10 * time.Millisecond)
				}
			}
		})
	}
}

// TestStaleRunDirectories: a new runtime removes the run directory of a dead
// host (its lock is free) and leaves a live host's alone.
func TestStaleRunDirectories(t *testing.T) {
	// Run directories go to $TMPDIR: a private one keeps other hosts on the
	// machine (and other tests) out of it.
	t.Setenv("TMPDIR", t.TempDir())
	live, err := plugins.New(&config.Config{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer live.Close()
	// A dead host's directory, left by a host that was killed: its lock
	// file exists but nobody holds it.
	dead := filepath.Join(os.TempDir(), plugins.RunDirPrefix+"-deadbeefdeadbeef")
	if err := os.MkdirAll(dead, 0o700); err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dead)
	os.WriteFile(filepath.Join(dead, ".lock"), nil, 0o600)
	os.WriteFile(filepath.Join(dead, "transport-ws-123"), make([]byte, 1<<20), 0o500)

	rt, err := plugins.New(&config.Config{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	if _, err := os.Stat(dead); err == nil {
		t.Error("the dead host's run directory is still there")
	}
	if _, err := os.Stat(live.RunDir()); err != nil {
		t.Errorf("the live host's run directory was removed: %v", err)
	}
}

// descendants lists the live descendants of pid, with their start times (a
// pid and its start time identify a process even if the pid is reused).
func descendants(pid int) map[int]string {
	entries, _ := os.ReadDir("/proc")
	parent := map[int]int{}
	start := map[int]string{}
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		s := string(b)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(f) < 20 || f[0] == "Z" {
			continue
		}
		parent[p], _ = strconv.Atoi(f[1])
		start[p] = f[19]
	}
	out := map[int]string{}
	for p := range parent {
		for a := parent[p]; a > 1; a = parent[a] {
			if a == pid {
				out[p] = start[p]
				break
			}
		}
	}
	return out
}

func startTime(pid int) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return ""
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 20 || f[0] == "Z" {
		return ""
	}
	return f[19]
}

// TestNothingOutlivesAKilledHost runs the real CLI (`mcphost serve`) with a
// plugin transport and a stdio server whose script leaves a child, a setsid'd
// grandchild and an orphan behind, kills the host with each signal that can
// end it without its cooperation, and checks that every process it had
// started is gone and its run directory removed.
func TestNothingOutlivesAKilledHost(t *testing.T) {
	url := wsServer(t)
	for _, sig := range []syscall.Signal{syscall.SIGKILL, syscall.SIGHUP, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			dir := t.TempDir()
			script := `trap "" INT TERM; sleep 1000 & setsid sleep 1000 & (sleep 1000 &) ; exec ` + filepath.Join(binDir, "mcphost-demo")
			cfgPath := lockedConfig(t, dir, fmt.Sprintf("server \"ws0\" {\n  transport = \"ws\"\n  url = %q\n}\nserver \"local\" {\n  command = \"/bin/sh\"\n  args = [\"-c\", %q]\n}\n", url, script))
			host := exec.Command(filepath.Join(binDir, "mcphost"), "--config", cfgPath, "serve")
			host.Env = append(os.Environ(), "HOME="+dir, "MCPHOST_MANAGED_CONFIG="+filepath.Join(dir, "managed.hcl"), "XDG_CACHE_HOME="+dir)
			in, _ := host.StdinPipe()
			out, _ := host.StdoutPipe()
			if err := host.Start(); err != nil {
				t.Fatal(err)
			}
			defer host.Process.Kill()
			for _, msg := range []string{
				`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`,
				`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
				`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
			} {
				fmt.Fprintln(in, msg)
			}
			r := bufioReader(out)
			for {
				line, err := r.ReadString('\n')
				if err != nil {
					t.Fatalf("serve: %v", err)
				}
				if strings.Contains(line, `"id":2`) {
					if !strings.Contains(line, "mcp__ws0__echo") || !strings.Contains(line, "mcp__local__echo") {
						t.Fatalf("tools/list: %s", line)
					}
					break
				}
			}
			procs := descendants(host.Process.Pid)
			t.Cleanup(func() {
				for pid, st := range procs {
					if startTime(pid) == st {
						syscall.Kill(pid, syscall.SIGKILL)
					}
				}
			})
			// 2 supervisors, the plugin, the server (now mcphost-demo) and its 3 sleeps.
			if len(procs) < 7 {
				t.Fatalf("the host runs %d processes, want at least 7", len(procs))
			}
			// The plugin's socket directory (go-plugin's, in its
			// environment) is in the host's run directory.
			var runDir string
			for pid := range procs {
				env, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
				for _, kv := range strings.Split(string(env), "\x00") {
					if v, ok := strings.CutPrefix(kv, "PLUGIN_UNIX_SOCKET_DIR="); ok && strings.Contains(v, plugins.RunDirPrefix+"-") {
						runDir = filepath.Dir(v)
					}
				}
			}
			if runDir == "" {
				t.Fatal("no plugin runs from a run directory")
			}

			exited := make(chan struct{})
			go func() { host.Wait(); close(exited) }()
			if sig == syscall.SIGHUP {
				// serve logs and ignores SIGHUP (until reload exists): it keeps
				// serving, then stops cleanly on SIGTERM.
				host.Process.Signal(sig)
				select {
				case <-exited:
					t.Fatal("serve exited on SIGHUP")
				case <-time.After(time.Second):
				}
				sig = syscall.SIGTERM
			}
			host.Process.Signal(sig)
			select {
			case <-exited:
			case <-time.After(30 * time.Second):
				t.Fatalf("the host did not exit after %v", sig)
			}

			deadline := time.Now().Add(5 * time.Second)
			for {
				var alive []string
				for pid, st := range procs {
					if startTime(pid) == st {
						comm, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/comm")
						alive = append(alive, fmt.Sprintf("%d (%s)", pid, strings.TrimSpace(string(comm))))
					}
				}
				_, err := os.Stat(runDir)
				if len(alive) == 0 && err != nil {
					return
				}
				if time.Now().After(deadline) {
					t.Fatalf("after %v: still running %v; run directory removed: %v", sig, alive, err != nil)
				}
				time.Sleep(20 * time.Millisecond)
			}
		})
	}
}

func bufioReader(r io.Reader) *bufio.Reader { return bufio.NewReaderSize(r, 1<<20) }
