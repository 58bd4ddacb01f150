//go:build linux

package conn

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// fakeHostEnv makes the test binary a host that starts one stdio server (the
// script in the variable's value) and waits to be killed.
const fakeHostEnv = "MCPHOST_TEST_FAKE_HOST"

func init() {
	if script := os.Getenv(fakeHostEnv); script != "" {
		os.Exit(fakeHost(script))
	}
}

func fakeHost(script string) int {
	p, err := startProcess("/bin/sh", []string{"-c", script}, []string{"PATH=" + os.Getenv("PATH")}, "", os.Stderr)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Printf("%d\n", p.pid)
	select {} // until killed
}

// orphanScript is a server that ignores SIGINT and SIGTERM and leaves behind
// every kind of descendant: a child in its group, one that called setsid, an
// orphan reparented away from it, and an orphan that also called setsid.
const orphanScript = `trap "" INT TERM
D=%s
sleep 1000 & echo $! > $D/child
setsid sleep 1000 & echo $! > $D/setsid
(sleep 1000 & echo $! > $D/orphan) &
(setsid sh -c 'echo $$ > '$D'/daemon; exec sleep 1000' &) &
wait`

var orphanKinds = []string{"child", "setsid", "orphan", "daemon"}

// procStart identifies a process instance (pid and start time), so that a
// reused pid is not mistaken for a survivor.
func procStart(pid int) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return ""
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	f := strings.Fields(s[i+1:])
	if len(f) < 20 || f[0] == "Z" {
		return "" // gone, or a zombie
	}
	return f[19]
}

func parentOf(pid int) int {
	b, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 2 {
		return 0
	}
	n, _ := strconv.Atoi(f[1])
	return n
}

// TestNoServerProcessOutlivesTheHost kills a host however a host can die and
// checks that nothing its stdio server started survives: not the server, not
// its children (even ones that called setsid or were orphaned), not the
// supervisor.
func TestNoServerProcessOutlivesTheHost(t *testing.T) {
	t.Parallel()
	for _, sig := range []syscall.Signal{syscall.SIGKILL, syscall.SIGHUP, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			host := exec.Command(os.Args[0])
			host.Env = append(os.Environ(), fakeHostEnv+"="+fmt.Sprintf(orphanScript, dir))
			host.Stderr = os.Stderr
			out, err := host.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := host.Start(); err != nil {
				t.Fatal(err)
			}
			defer host.Process.Kill()
			line, err := bufio.NewReader(out).ReadString('\n')
			if err != nil {
				t.Fatalf("the fake host did not start its server: %v", err)
			}
			server, _ := strconv.Atoi(strings.TrimSpace(line))
			pids := map[string]int{"server": server}
			starts := map[string]string{}
			record := func(kind string, pid int) {
				pids[kind], starts[kind] = pid, procStart(pid)
			}
			t.Cleanup(func() { // whatever the outcome, leave nothing behind
				for kind, pid := range pids {
					if pid > 1 && starts[kind] != "" && procStart(pid) == starts[kind] {
						syscall.Kill(pid, syscall.SIGKILL)
					}
				}
			})
			record("server", server)
			if sup := parentOf(server); sup != host.Process.Pid {
				record("supervisor", sup)
			}
			deadline := time.Now().Add(10 * time.Second)
			for _, kind := range orphanKinds {
				for pids[kind] == 0 {
					b, _ := os.ReadFile(filepath.Join(dir, kind))
					if pid, _ := strconv.Atoi(strings.TrimSpace(string(b))); pid > 0 {
						record(kind, pid)
					}
					if time.Now().After(deadline) {
						t.Fatalf("the server did not start its %s", kind)
					}
					time.Sleep(5 * time.Millisecond)
				}
			}
			for kind, pid := range pids {
				if pid <= 1 || pid == host.Process.Pid {
					t.Fatalf("%s: bad pid %d", kind, pid)
				}
				if starts[kind] == "" {
					t.Fatalf("%s (pid %d) is not running before the host dies", kind, pid)
				}
			}

			host.Process.Signal(sig)
			host.Wait()

			// The server ignores SIGINT and SIGTERM: the supervisor's sequence
			// ends in SIGKILL after 500 ms.
			deadline = time.Now().Add(5 * time.Second)
			for {
				var alive []string
				for kind, pid := range pids {
					if procStart(pid) == starts[kind] {
						alive = append(alive, fmt.Sprintf("%s (pid %d)", kind, pid))
					}
				}
				if len(alive) == 0 {
					return
				}
				if time.Now().After(deadline) {
					t.Fatalf("after the host died of %v, still running: %s", sig, strings.Join(alive, ", "))
				}
				time.Sleep(20 * time.Millisecond)
			}
		})
	}
}
